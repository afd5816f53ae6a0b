"""KeywordIndex: fields, sections, languages, code tokens, incremental updates, persistence."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mindgraph.page.parse import parse_page
from mindgraph.retrieval.explain import explain, snippet
from mindgraph.retrieval.keyword import KeywordIndex, KeywordParams, open_keyword_index

PAGES = {
    "Plugins/Note composer.md": ("# Note composer\n\nMerge and split notes.\n\n"
                                 "## Extract note\n\nMove a selection into a new note.\n"),
    "Other/Workspace.md": ("# Workspace\n\nThe note composer plugin is mentioned here once, "
                           "in a long paragraph about panes and layouts and sidebars.\n"),
    "Search.md": ("# Search\n\n| Operator | Meaning |\n|---|---|\n"
                  "| `task-todo:` | uncompleted tasks |\n\n## Embeds\n\n"
                  "Use `![[Note]]` to embed.\n\n## Code\n\nCall `snake_case_names` in "
                  "`file.py`.\n"),
    "ja/ワードカウント.md": "# ワードカウント\n\n日本語の文字数を数えて表示します。\n",
    "zh/页面预览.md": "# 页面预览\n\n鼠标悬停在链接上即可预览笔记内容。\n",
}


def _pages(texts=PAGES):
    return {p: parse_page(t, p) for p, t in texts.items()}


@pytest.fixture
def index() -> KeywordIndex:
    """A keyword index over the five test pages."""
    return KeywordIndex.build(_pages().values())


def _top(index, query, n=1):
    return [h.path for h in index.search(query, n)]


def test_title_outranks_body_and_best_section_is_reported(index):
    hits = index.search("note composer", 5)
    assert [h.path for h in hits[:2]] == ["Plugins/Note composer.md", "Other/Workspace.md"]
    hits = index.search("extract selection into a note", 1)
    assert hits[0].path == "Plugins/Note composer.md" and hits[0].section_id == "extract-note"
    assert hits[0].page_score > 0 and hits[0].section_score > 0


def test_code_tokens_and_symbols_are_findable(index):
    assert _top(index, "`task-todo:`") == ["Search.md"]
    assert _top(index, "snake_case_names") == ["Search.md"]
    assert _top(index, "file.py") == ["Search.md"]
    hit = index.search("![[", 1)[0]
    assert hit.path == "Search.md" and hit.section_id == "embeds"


def test_japanese_and_chinese_questions_find_their_pages(index):
    assert _top(index, "文字数を数える機能はありますか") == ["ja/ワードカウント.md"]
    assert _top(index, "鼠标停在链接上预览笔记") == ["zh/页面预览.md"]


def test_stop_words_only_and_unknown_terms_find_nothing(index):
    assert index.search("how do I", 5) == []
    assert index.search("xyzzy", 5) == []


def test_explain_names_fields_and_highlights(index):
    pages = _pages()
    hit = index.search("extract note composer", 1)[0]
    result = explain(hit, pages[hit.path], "extract note composer")
    assert result.heading == "Extract note"
    assert result.fields["title"] == ["note", "composer"]
    assert "extract" in result.fields["heading"]
    assert "**note**" in result.snippet
    assert "title" in result.why and "Extract note" in result.why
    data = result.to_dict()
    assert (data["section_id"], data["heading"]) == ("extract-note", "Extract note")


def test_snippet_centres_on_the_densest_matches():
    text = "filler " * 100 + "the alpha and beta words " + "filler " * 100
    out = snippet(text, ["alpha", "beta"], width=80)
    assert "**alpha**" in out and "**beta**" in out and out.startswith("…")


def test_edits_show_up_and_removed_pages_disappear(index):
    pages = _pages()
    pages["Search.md"] = parse_page("# Search\n\nNow about zeppelins.\n", "Search.md")
    index.apply(pages, changed=["Search.md"])
    assert _top(index, "zeppelins") == ["Search.md"]
    assert _top(index, "task-todo") == []
    index.apply(pages, removed=["Search.md"])
    assert _top(index, "zeppelins") == [] and len(index) == 4


texts = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "双链", "笔记", "file.py",
                                  "## Part", "\n\n"]), max_size=12).map(" ".join)
edits = st.lists(st.tuples(st.sampled_from(["a.md", "b.md", "c/a.md", "d.md"]),
                           st.one_of(st.none(), texts)), min_size=1, max_size=15)


@settings(max_examples=60, deadline=None)
@given(edits)
def test_incremental_index_ranks_like_a_rebuild(steps):
    index = KeywordIndex()
    pages: dict = {}
    for path, text in steps:
        if text is None:
            pages.pop(path, None)
            index.apply(pages, removed=[path])
        else:
            pages[path] = parse_page(f"# T\n\n{text}\n", path)
            index.apply(pages, changed=[path])
    fresh = KeywordIndex.build(pages.values())
    for query in ("alpha", "beta gamma", "双链笔记", "file.py", "part delta"):
        got = [(h.path, round(h.score, 9), h.section_id) for h in index.search(query, 10)]
        want = [(h.path, round(h.score, 9), h.section_id) for h in fresh.search(query, 10)]
        assert got == want


def test_persisted_index_is_synced_with_edited_pages(tmp_path):
    state = tmp_path / "keyword.pickle"
    pages = _pages()
    first = open_keyword_index(pages, state)
    assert state.is_file()
    loaded = KeywordIndex.load(state)
    assert loaded is not None and loaded.hashes == first.hashes
    assert KeywordIndex.load(state, KeywordParams(title=9.0)) is None
    pages["Other/Workspace.md"] = parse_page("# Workspace\n\nNow with quokkas.\n",
                                             "Other/Workspace.md")
    del pages["Search.md"]
    synced = open_keyword_index(pages, state)
    assert _top(synced, "quokkas") == ["Other/Workspace.md"]
    assert "Search.md" not in synced.hashes
    assert _top(KeywordIndex.load(state), "quokkas") == ["Other/Workspace.md"]


def test_a_saved_index_over_pages_parsed_another_way_is_rebuilt(tmp_path, monkeypatch):
    import mindgraph.retrieval.keyword as keyword

    state = tmp_path / "keyword.pickle"
    open_keyword_index(_pages(), state)
    assert KeywordIndex.load(state) is not None
    # the page parser changed (its section texts may differ): the saved index is stale
    monkeypatch.setattr(keyword, "parser_fingerprint", lambda: "another parser")
    keyword.index_fingerprint.cache_clear()
    try:
        assert KeywordIndex.load(state) is None
    finally:
        monkeypatch.undo()
        keyword.index_fingerprint.cache_clear()


def test_ties_are_broken_by_path_whatever_the_insertion_order():
    texts = {f"p{i}.md": "# Same\n\nidentical words\n" for i in range(6)}
    items = list(_pages(texts).values())
    random.Random(1).shuffle(items)
    assert _top(KeywordIndex.build(items), "identical", 3) == ["p0.md", "p1.md", "p2.md"]


def test_top_sections_rank_sections_by_bm25(index):
    found = index.top_sections("extract selection note", 2)
    assert found[0][:2] == ("Plugins/Note composer.md", "extract-note")
    assert found[0][2] >= found[1][2] > 0


def test_a_heading_with_nothing_under_it_is_never_the_best_section():
    page = parse_page("# Sync CLI\n\nThe client.\n\n## Commands\n\n### ob sync\n\nRuns a sync now."
                      "\n", "Sync CLI.md")
    hit = KeywordIndex.build([page]).search("commands", 1)[0]
    assert hit.section_id == "commands/ob-sync"              # not the empty "commands"
