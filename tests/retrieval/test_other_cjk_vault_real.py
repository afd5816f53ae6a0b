"""A Japanese question over a vault of Chinese notes (slow: the Chinese half of Obsidian Help,
173 pages, embedded with the offline default, USE for Chinese and Japanese).

No dictionary translates Japanese into Chinese, so BM25 matches only the Han words both
languages happen to write alike (方法, 設定/设定): it put pages that say 方法 first, and the noise
filter, whose idea of a match was measured on same-language queries, dropped every page only
the vector side found, the right one included. Now BM25 weighs 0.1 of itself there
(``retrieval.untranslated_keyword_factor``) and the filter takes the question's own best cosine
as the height of a match when it is lower (hybrid.py ``_noise_gap``), and no graph boost lifts
the pages the vector side's candidates link to (``_boosts_graph``)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def workspace(corpora, tmp_path_factory):
    root = tmp_path_factory.mktemp("zh-vault")
    shutil.copytree(corpora / "obsidian-help" / "zh", root / "wiki")
    (root / "mindgraph.yml").write_text("paths:\n  wiki: wiki\n  state: state\n")
    result = CliRunner().invoke(cli, ["embed", "-C", str(root)])
    assert result.exit_code == 0, result.output
    return root


def search(workspace, query: str, *extra: str) -> dict:
    result = CliRunner().invoke(cli, ["search", "--hybrid", query, "-n", "3", "--json",
                                      "-C", str(workspace), *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def pages(data: dict) -> list[str]:
    return [r["page"] for r in data["results"]]


def test_a_japanese_question_finds_the_chinese_page_by_meaning(workspace):
    # before: 文档规范, 帮助与支持, 同步笔记 — pages BM25 found by 方法 and ノート's Han
    data = search(workspace, "ノートをプレゼンのスライドにする方法")
    assert data["language"] == "ja"
    assert pages(data)[0] == "插件/幻灯片.md"
    # the candidates are the vector side's: no graph boost lifts the pages they link to
    assert all("graph" not in r["boosts"] for r in data["results"])


def test_the_noise_filter_keeps_a_cross_language_match(workspace):
    # before: 标签视图, 社区目录, 文档规范, and the folding page dropped as noise
    assert "编辑与格式化/折叠.md" in pages(search(workspace, "見出しと箇条書きを一度に全部閉じるコマンド"))


def test_bm25_keeps_its_weight_when_turned_back_on(workspace, tmp_path):
    config = tmp_path / "mindgraph.yml"
    config.write_text(f"paths:\n  wiki: {workspace / 'wiki'}\n  state: {workspace / 'state'}\n"
                      "retrieval:\n  untranslated_keyword_factor: 1\n")
    data = search(workspace, "ノートをプレゼンのスライドにする方法", "--config", str(config))
    assert pages(data)[0] != "插件/幻灯片.md"
    assert any("graph" in r["boosts"] for r in data["results"])


def test_an_english_question_over_the_chinese_pages_is_translated_and_boosted(workspace):
    # a dictionary translates English for these pages: BM25 keeps its weight, the graph boost
    data = search(workspace, "presentation slides from a note")
    assert data["language"] == "en"
    assert any("graph" in r["boosts"] for r in data["results"])
