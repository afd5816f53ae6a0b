"""Wikilinks added where a note mentions another page: where they go and where they never do."""

import pytest

from mindgraph.ingest.index import IndexEntry, TitleIndex
from mindgraph.ingest.linker import add_links


@pytest.fixture
def index():
    """A small title index: titles, an alias, a CJK title, and a name used in two folders."""
    return TitleIndex([
        IndexEntry("Note composer.md", "Note composer", ("merge tool",)),
        IndexEntry("Note.md", "Note"),
        IndexEntry("Plugins/Canvas.md", "Canvas"),
        IndexEntry("ja/Canvas.md", "Canvas"),
        IndexEntry("ja/コマンドパレット.md", "コマンドパレット"),
        IndexEntry("Self.md", "Self page"),
        IndexEntry("Graph view.md", "Graph view"),
    ])


def link(index, body, source="Self.md", existing=()):
    return add_links(body, source, index, existing)[0]


def test_case_is_kept_and_first_mention_only(index):
    assert link(index, "Use the note composer. The Note Composer again.") == \
        "Use the [[Note composer|note composer]]. The Note Composer again."


def test_exact_case_gives_a_bare_link(index):
    assert link(index, "Graph view helps.") == "[[Graph view]] helps."


def test_longest_title_wins_and_aliases_count(index):
    out = link(index, "Note composer is a merge tool. A note is text.")
    assert out == "[[Note composer]] is a merge tool. A [[Note|note]] is text."


def test_whole_words_only(index):
    assert link(index, "Notebooks and keynotes, Notes.") == "Notebooks and keynotes, Notes."


@pytest.mark.parametrize("body", [
    "`Graph view` in code",
    "```\nGraph view\n```",
    "## Graph view heading",
    "[[Other|Graph view]] already a link",
    "[Graph view](https://example.com/graph)",
    "see https://example.com/Graph-view-docs",
    "<span title='Graph view'>x</span>",
    "> [!tip] Graph view",
    "%% Graph view comment %%",
    "<!-- Graph view -->",
    "![Graph view](pic.png)",
])
def test_never_inside_code_links_headings_urls_or_comments(index, body):
    assert link(index, body) == body


def test_pages_already_linked_and_self_are_skipped(index):
    assert link(index, "Self page and Graph view.", existing={"Graph view.md"}) == \
        "Self page and Graph view."


def test_tables_get_an_escaped_pipe(index):
    assert link(index, "| a | the note composer |") == \
        "| a | the [[Note composer\\|note composer]] |"


def test_shared_name_goes_to_the_nearest_page(index):
    # [[Canvas]] resolves to the nearest Canvas.md, as Obsidian (and page/resolve.py) do.
    assert add_links("Canvas here.", "Plugins/Other.md", index) == \
        ("[[Canvas]] here.", ["Plugins/Canvas.md"])
    assert add_links("Canvas here.", "ja/x.md", index) == ("[[Canvas]] here.", ["ja/Canvas.md"])
    # Equally near to both (no shared folder): ambiguous, never guessed.
    assert link(index, "Canvas here.", source="Top.md") == "Canvas here."


def test_link_uses_the_path_when_the_file_name_alone_would_resolve_elsewhere():
    index = TitleIndex([IndexEntry("a/Index.md", "Projects"), IndexEntry("b/Index.md", "Areas")])
    assert link(index, "See projects and areas.", source="c/x.md") == \
        "See [[a/Index|projects]] and [[b/Index|areas]]."


def test_cjk_titles_match_inside_cjk_text(index):
    assert link(index, "まずコマンドパレットを開きます。", source="ja/x.md") == \
        "まず[[コマンドパレット]]を開きます。"


def test_cjk_titles_are_linked_on_word_boundaries_only():
    index = TitleIndex([IndexEntry("ja/ビュー.md", "ビュー"),
                        IndexEntry("ja/クレジット.md", "クレジット"),
                        IndexEntry("ja/検索.md", "検索"),
                        IndexEntry("zh/笔记.md", "笔记")])
    # each was linked inside a word on the Japanese vault: ビュー became its biggest hub
    for text in ("プレビューモードを使う", "クレジットカードで払う", "Linuxディストリビューション"):
        assert link(index, text, source="ja/x.md") == text
    assert link(index, "検索結果のビューを開く", source="ja/x.md") == \
        "[[検索]]結果の[[ビュー]]を開く"
    assert link(index, "这台笔记本电脑", source="zh/x.md") == "这台笔记本电脑"    # 笔记本: laptop
    assert link(index, "双链笔记很好", source="zh/x.md") == "双链[[笔记]]很好"


def test_a_shorter_title_on_word_boundaries_is_linked_when_the_longest_cuts_a_word():
    index = TitleIndex([IndexEntry("ja/コア.md", "コア"),
                        IndexEntry("ja/コアプラグ.md", "コアプラグ")])
    # コアプラグ ends inside コアプラグイン; コア ends inside it too: neither is linked
    assert link(index, "コアプラグインを使う", source="ja/x.md") == "コアプラグインを使う"
    index = TitleIndex([IndexEntry("ja/同期.md", "同期"), IndexEntry("ja/同期設.md", "同期設")])
    assert link(index, "同期設定を開く", source="ja/x.md") == "[[同期]]設定を開く"


def test_generic_terms_are_not_linked(index):
    generic = index.with_generic([("graph view",)] * 30)
    assert "graph view" in generic.generic
    assert link(generic, "Graph view helps.") == "Graph view helps."
    assert link(index, "Graph view helps.") == "[[Graph view]] helps."


def test_links_digest_changes_only_when_a_mentioned_page_changes(index):
    mentions = index.scan_mentions("The Graph view and a canvas.")
    assert mentions == ("canvas", "graph view")
    before = index.links_digest(mentions, "Plugins/x.md")
    more = TitleIndex([*index.entries.values(), IndexEntry("Unrelated.md", "Unrelated")])
    assert more.links_digest(mentions, "Plugins/x.md") == before
    moved = TitleIndex([e for e in index.entries.values() if e.path != "Graph view.md"]
                       + [IndexEntry("Views/Graph view.md", "Graph view")])
    assert moved.links_digest(mentions, "Plugins/x.md") != before


def test_pages_whose_file_name_cannot_be_a_wikilink_are_not_linked():
    index = TitleIndex([IndexEntry("has|pipe.md", "pipe"), IndexEntry("a#b.md", "hashy"),
                        IndexEntry("has[bracket].md", "bracket"), IndexEntry("Fine.md", "fine")])
    body = "The pipe and the bracket and the hashy thing are fine."
    out, added = add_links(body, "main.md", index)
    assert out == "The pipe and the bracket and the hashy thing are [[Fine|fine]]."
    assert added == ["Fine.md"]


def test_links_the_link_pattern_does_not_take_whole_are_still_protected(index):
    long_text = "the Canvas docs " + "and more words " * 30          # > 300 characters
    body = f"See [{long_text}](https://x/Canvas_(app) later. Canvas."
    out, added = add_links(body, "Plugins/Other.md", index)
    assert out == f"See [{long_text}](https://x/Canvas_(app) later. [[Canvas]]."  # not inside
    assert added == ["Plugins/Canvas.md"]


def test_a_long_link_with_brackets_in_its_text_is_not_linked_into():
    body = "See [" + "word " * 70 + "[x] Canvas](https://x) here. Then Canvas."
    out, _ = add_links(body, "Plugins/Other.md", TitleIndex([IndexEntry("Plugins/Canvas.md",
                                                                         "Canvas")]))
    assert out == "See [" + "word " * 70 + "[x] Canvas](https://x) here. Then [[Canvas]]."


def test_lines_skipped_for_settled_mentions_link_what_every_mention_checked_links(index):
    # add_links skips a line whose mentions all name pages linked already (or no page), unchecked;
    # find_mentions checks every line. The links added must be those the first usable mention
    # of each page gets, whatever was skipped: protected first mentions, a mention linked on
    # an earlier line, a CJK mention (never skipped: it may be cut to a shorter term).
    from mindgraph.ingest.linker import UNLINKABLE, find_mentions

    body = ("See `Canvas` and [Note](https://x.io/Note) here.\n"
            "The note composer, then Note again.\n"
            "Note and Canvas and the note composer.\n"
            "> [!tip] Graph view\n"
            "Graph view, Canvas, コマンドパレットを開く, Note.\n"
            "Canvas again; Graph view again.")
    source, linked, expected = "Self.md", {"Self.md"}, []
    lines = body.split("\n")
    for number, match in find_mentions(body, index):
        target = index.target(match.group(0), source)
        if target is None or target in linked \
                or any(ch in index.link_target(target, source) for ch in UNLINKABLE):
            continue
        linked.add(target)
        expected.append((number, match.group(0), target))
    out, added = add_links(body, source, index)
    assert added == [target for _, _, target in expected]
    # Canvas names two pages, neither nearer to Self.md: no page
    assert added == ["Note composer.md", "Note.md", "Graph view.md", "ja/コマンドパレット.md"]
    assert out.split("\n")[4] == "[[Graph view]], Canvas, [[コマンドパレット]]を開く, Note."
    assert [out.split("\n")[i] for i in (0, 2, 3, 5)] == [lines[i] for i in (0, 2, 3, 5)]


def test_a_cjk_mention_of_a_linked_page_is_still_cut_to_a_shorter_unlinked_term():
    # 同期設 is linked already, but here it cuts 設定: the mention is cut to 同期, whose page is
    # not linked yet. Skipping mentions of linked pages must not skip this one.
    index = TitleIndex([IndexEntry("ja/同期.md", "同期"), IndexEntry("ja/同期設.md", "同期設")])
    assert add_links("同期設定を開く", "ja/x.md", index, {"ja/同期設.md"}) == \
        ("[[同期]]設定を開く", ["ja/同期.md"])
    assert add_links("同期設定を開く", "ja/x.md", index, {"ja/同期設.md", "ja/同期.md"}) == \
        ("同期設定を開く", [])


def test_only_the_cjk_runs_a_mention_touches_are_cut_into_words(monkeypatch):
    # A paragraph holds many runs (CJK punctuation ends one); a mention sits in one or two.
    # Mentions of a page linked already (with no shorter term) are not cut at all.
    from mindgraph.ingest import linker

    cut: list[str] = []

    def word_bounds(text, hint=None):
        cut.append(text)
        return real(text, hint)

    real = linker.word_bounds
    monkeypatch.setattr(linker, "word_bounds", word_bounds)
    index = TitleIndex([IndexEntry("ja/検索.md", "検索")])
    body = "これは長い文です。検索結果を開く。別の文もあります。\nまた検索を使う。"
    assert add_links(body, "ja/x.md", index) == \
        ("これは長い文です。[[検索]]結果を開く。別の文もあります。\nまた検索を使う。", ["ja/検索.md"])
    assert cut == ["検索結果を開く"]
