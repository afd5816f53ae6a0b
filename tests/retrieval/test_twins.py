"""Translated pages vouch for each other (retrieval/twins.py): a Japanese question whose words
are not its page's (引っ張ってくる for a page that says ドラッグ) is also searched in English over
the English pages, and the English page's twin (same frontmatter permalink) is credited."""

from __future__ import annotations

import json

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.page.parse import parse_page
from mindgraph.retrieval.twins import Twins
from wiki_workspace_support import wiki_workspace

PAGES = {
    "ja/ドラッグ.md": "---\npermalink: drag\n---\n# ドラッグ＆ドロップ\n\n"
                    "ファイルを移動先へドラッグ＆ドロップします。\n",
    "en/Drag.md": "---\npermalink: drag\n---\n# Drag and drop\n\n"
                  "Drag content from a browser into the editor: it becomes Markdown.\n",
    "ja/エディタ.md": "---\npermalink: editor\n---\n# エディタ\n\nエディタで文章を書きます。\n",
    "en/Editor.md": "---\npermalink: editor\n---\n# Editor\n\nWrite notes in the editor.\n",
    "ja/ブラウザ.md": "# ブラウザ\n\nブラウザで内容を読みます。\n",
}
QUESTION = "ブラウザの内容をエディタに引っ張ってくるには？"


def _workspace(tmp_path, pages, retrieval=""):
    return wiki_workspace(tmp_path, pages, retrieval)


def _results(workspace, query=QUESTION):
    result = CliRunner().invoke(cli, ["search", "--hybrid", query, "-C", workspace, "--json",
                                      "--limit", "10"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["results"]


def test_the_english_twin_lifts_a_japanese_page_its_own_words_miss(tmp_path):
    on = _results(_workspace(tmp_path / "on", PAGES))
    off = _results(_workspace(tmp_path / "off", PAGES, "  twin_weights: {}\n"))
    found = next(r for r in on if r["page"] == "ja/ドラッグ.md")
    # BM25 cannot find it (no word of the question is on it); its English twin's can
    assert "keyword" not in found["sources"] and found["sources"]["twin"]["rank"] == 1
    assert not any("twin" in r["sources"] for r in off)
    assert "ja/ドラッグ.md" not in [r["page"] for r in off]     # without it: not found
    # the English pages themselves are no answer to a Japanese question's twin search
    assert not any("twin" in r["sources"] for r in on if r["page"].startswith("en/"))


def test_without_permalinks_or_for_other_languages_nothing_changes(tmp_path):
    bare = {path: text.replace("permalink: drag", "title: x").replace(
        "permalink: editor", "title: y") for path, text in PAGES.items()}
    assert not any("twin" in r["sources"] for r in _results(_workspace(tmp_path / "a", bare)))
    # Chinese is not in the default twin_weights (CC-CEDICT's English glosses cost held-out
    # Chinese questions, README); English questions have no twin search
    zh = {**PAGES, "zh/拖放.md": "---\npermalink: drag\n---\n# 拖放\n\n把文件拖放到目标位置。\n"}
    ws = _workspace(tmp_path / "b", zh)
    assert not any("twin" in r["sources"] for r in _results(ws, "怎样把浏览器的内容拉到编辑器里"))
    assert not any("twin" in r["sources"] for r in _results(ws, "drag from a browser"))


def test_twins_pair_each_page_with_its_translations():
    parsed = {path: parse_page(text, path) for path, text in PAGES.items()}
    twins = Twins(parsed)
    assert twins.twin("en/Drag.md", "ja") == "ja/ドラッグ.md"
    assert twins.twin("ja/ドラッグ.md", "en") == "en/Drag.md"
    assert twins.twin("ja/ブラウザ.md", "en") is None      # no permalink
    assert twins.twin("en/Drag.md", "zh") is None


def test_a_bad_twin_weight_is_a_clear_config_error(tmp_path):
    ws = _workspace(tmp_path, PAGES, "  twin_weights: {ja: -1}\n")
    result = CliRunner().invoke(cli, ["search", "--hybrid", QUESTION, "-C", ws])
    assert result.exit_code != 0
    assert "retrieval.twin_weights" in result.output and "mindgraph.yml" in result.output
    assert "Traceback" not in result.output
