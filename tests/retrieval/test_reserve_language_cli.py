"""``retrieval.reserve_same_language`` through `mindgraph search --hybrid --json`: each
retriever's first pages are kept within the first five, but not a page in another language
than the question's in a vault that speaks it: the vector side (a multilingual model) ranks a
Japanese page first for a Chinese question, and the reserve lifted it over the Chinese pages
the language preference had put above it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

pytestmark = pytest.mark.slow

ROUTED = "embedding: {languages: {ja: use-multilingual-v3, zh: use-multilingual-v3}}\n"
QUESTION = "怎样在手机和电脑之间同步笔记？"
TOPICS = [("同步设置", "在设置中打开同步选项，选择要同步的笔记文件夹。"),
          ("同步历史", "同步会保留笔记的历史版本，可以恢复旧版本。"),
          ("同步冲突", "两台设备同时修改同一篇笔记时，同步会合并冲突。"),
          ("同步价格", "同步服务按月付费，包含笔记库存储空间。"),
          ("同步安全", "同步使用端到端加密保护你的笔记。"),
          ("同步限制", "同步对单个文件大小和笔记库数量有限制。"),
          ("画布", "在无限的白板上绘制卡片和箭头。"),
          ("模板", "用模板快速插入常用文本。")]


def run(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result


def first_five(workspace: Path) -> list[dict]:
    out = run("search", "--hybrid", QUESTION, "-n", "5", "-C", str(workspace), "--json")
    return json.loads(out.stdout)["results"]


def test_a_page_in_another_language_is_not_reserved_a_place_among_the_first(tmp_path):
    (tmp_path / "wiki" / "zh").mkdir(parents=True)
    (tmp_path / "wiki" / "ja").mkdir()
    (tmp_path / "wiki" / "ja" / "同期.md").write_text(
        "# 同期\n\nスマートフォンとパソコンの間でノートを同期する方法を説明します。\n")
    for title, text in TOPICS:
        (tmp_path / "wiki" / "zh" / f"{title}.md").write_text(f"# {title}\n\n{text}\n")
    config = tmp_path / "mindgraph.yml"
    config.write_text("paths: {wiki: wiki, state: state}\n" + ROUTED)
    run("embed", "-C", str(tmp_path))

    results = first_five(tmp_path)
    assert [r["page"][:3] for r in results] == ["zh/"] * 5, results

    # as before the option: the vector side's first page is the Japanese one, and kept
    config.write_text(config.read_text() + "retrieval: {reserve_same_language: false}\n")
    lifted = {r["page"]: r for r in first_five(tmp_path)}["ja/同期.md"]
    assert lifted["sources"]["vector"]["rank"] == 1 and "keyword" not in lifted["sources"]
    assert lifted["boosts"]["reserved"] > 0
