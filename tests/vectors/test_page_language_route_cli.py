"""A page's language decides which model embeds it (``embedding.languages``): a Chinese page
whose text is mostly Latin names and links (a list of contributors) is Chinese, as its title
and prose say, so a Chinese question finds it by meaning too. Read from all its letters, it was
English: MiniLM embedded it and a Chinese question, answered by USE's vectors, never saw it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.page.model import Page
from mindgraph.vectors.chunk_memo import ChunkMemo

ROUTED = "embedding: {languages: {ja: use-multilingual-v3, zh: use-multilingual-v3}}\n"
NAMES = ["Brandon Martin", "Dharam Kapila", "Steph Ango", "Shida Li", "Liam Cain",
         "Erica Xu", "Rebbecca Bishop", "Tony Grosinger", "Aaron Bell", "Matthew Meyers",
         "Michael Naumov", "Emile Bangma", "Zach Young", "Colin Tedford", "Maxime Cote"]


def credits_page() -> str:
    people = "\n".join(f"- {name.split()[0].lower()} ([{name}](https://{name.split()[1].lower()}"
                       f".example.com/)) <span class='flair'>Forum master</span>"
                       for name in NAMES)
    return ("# 贡献者\n\n这篇笔记列出了为本软件做出贡献的人员。\n\n## 核心团队\n\n"
            f"构建和维护软件的核心团队。\n\n{people}\n\n## 社区管理\n\n"
            "社区管理员负责管理论坛和 Discord。\n\n" + people + "\n")


def write_vault(root: Path) -> None:
    (root / "wiki" / "zh").mkdir(parents=True)
    (root / "wiki" / "en").mkdir()
    (root / "wiki" / "zh" / "贡献者.md").write_text(credits_page())
    (root / "wiki" / "zh" / "同步.md").write_text(
        "# 同步\n\n在手机、平板和电脑之间保持笔记库一致。\n")
    (root / "wiki" / "zh" / "画布.md").write_text("# 画布\n\n在无限的白板上绘制卡片和箭头。\n")
    (root / "wiki" / "en" / "Sync.md").write_text("# Sync\n\nKeep your vault the same on "
                                                  "every device.\n")
    (root / "mindgraph.yml").write_text("paths: {wiki: wiki, state: state}\n" + ROUTED)


def run(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.slow
def test_a_chinese_page_of_latin_names_is_found_by_meaning_for_a_chinese_question(tmp_path):
    write_vault(tmp_path)
    run("embed", "-C", str(tmp_path))
    out = run("search", "--hybrid", "是谁开发和维护这个软件的？管理员有哪些人？",
              "-C", str(tmp_path), "--json")
    sources = {r["page"]: r["sources"] for r in json.loads(out.stdout)["results"]}
    assert "vector" in sources["zh/贡献者.md"], sources


def test_a_chunk_memo_planned_by_other_chunking_code_is_not_read(tmp_path):
    page = Page(path="zh/同步.md", title="同步", aliases=(), tags=(), sections=(), links=(),
                body="在手机和电脑之间保持一致。", content_hash="abc")
    memo = ChunkMemo.load(tmp_path, "model:1", 128)
    memo.record(page, [])
    memo.save()
    assert ChunkMemo.load(tmp_path, "model:1", 128).entries   # the same code reads it
    file = next(tmp_path.glob("chunks-*.json"))
    data = json.loads(file.read_text())
    file.write_text(json.dumps({**data, "code": "another version's"}))
    assert ChunkMemo.load(tmp_path, "model:1", 128).entries == {}
