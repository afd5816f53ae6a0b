"""The scan's mentions hold every term the linker can link.

A run relinks a note only when a page its recorded mentions (``TitleIndex.scan_mentions``)
name appears, moves or goes; so every term the linker matches (``linker.find_mentions``) must
be among them, or a page added under that term is never linked from the note. Checked over
the real Obsidian Help vault (each language alone and all three together) and over crafted
texts: URLs glued to words, titles in code, links, tags, math and comments, CJK next to
Latin, overlapping titles, case variants, aliases. The run that relies on it is in
test_cli_ingest.py (test_a_page_added_later_is_linked_where_the_scan_must_find_it).
"""

import random

import pytest

from mindgraph.ingest.compile_offline import _linked_pages
from mindgraph.ingest.index import IndexEntry, TitleIndex
from mindgraph.ingest.linker import add_links, find_mentions
from mindgraph.ingest.normalise import normalise_body
from mindgraph.page.parse import parse_page


def linker_terms(text: str, path: str, index: TitleIndex) -> set[str]:
    """The terms the linker matches in the note ``text`` compiled as the offline compiler
    does (the body normalised), as the scan spells them."""
    page = parse_page(text, path)
    body = normalise_body(page.body, page.title)
    return {" ".join(m.group(0).split()).lower() for _, m in find_mentions(body, index)}


def linked_pages(text: str, path: str, index: TitleIndex) -> list[str]:
    page = parse_page(text, path)
    body = normalise_body(page.body, page.title)
    return add_links(body, path, index, _linked_pages(page, path, index))[1]


def violations(notes: dict[str, str], index: TitleIndex) -> dict[str, list[str]]:
    """Per note, the terms (and pages) the linker links that the scan does not report."""
    bad = {}
    for path, text in notes.items():
        mentions = set(index.scan_mentions(text))
        missing = linker_terms(text, path, index) - mentions
        reached = {index.target(term, path) for term in mentions}
        missing |= {f"page {p}" for p in linked_pages(text, path, index) if p not in reached}
        if missing:
            bad[path] = sorted(missing)
    return bad


def index_of(notes: dict[str, str], extra: tuple[IndexEntry, ...] = ()) -> TitleIndex:
    """The title index the pipeline builds: each note's page, title and aliases, and the
    terms in too many notes generic."""
    entries = []
    for path, text in notes.items():
        page = parse_page(text, path)
        entries.append(IndexEntry(path, page.title, page.aliases))
    index = TitleIndex([*entries, *extra])
    return index.with_generic(index.scan_mentions(text) for text in notes.values())


def vault(corpora, folder: str = "") -> dict[str, str]:
    root = corpora / "obsidian-help"
    return {f.relative_to(root).as_posix(): f.read_text(encoding="utf-8")
            for f in sorted((root / folder).rglob("*.md"))}


@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "ja", "zh", ""])
def test_the_scan_holds_every_term_linked_in_the_real_vault(corpora, language):
    notes = vault(corpora, language)
    index = index_of(notes)
    assert violations(notes, index) == {}
    # a scoped note's index (the pages of every other folder only) links no term the
    # scan of the whole index misses either
    paths = sorted(index.entries)
    scoped = index.within({p for i, p in enumerate(paths) if i % 2})
    assert violations(notes, scoped) == {}


def test_the_vault_once_had_a_cjk_mention_cut_to_a_shorter_term(corpora):
    """The counterexample the vault held: ja/…/Zettelkasten ノート.md writes
    Markdownフォーマットインポーター; the scan found only that title, the linker cut it at
    the CJK word boundary to "Markdown" (an English page's alias)."""
    notes = vault(corpora)
    index = index_of(notes)
    path = "ja/ノートのインポート/Zettelkasten ノート.md"
    assert "markdown" in linker_terms(notes[path], path, index)
    assert "markdown" in index.scan_mentions(notes[path])


CRAFTED_INDEX = (
    IndexEntry("Sync.md", "Sync", ("Obsidian Sync",)),
    IndexEntry("Alpha Beta.md", "Alpha Beta"),
    IndexEntry("Beta Gamma.md", "Beta Gamma"),
    IndexEntry("Canvas.md", "Canvas", ("whiteboard",)),
    IndexEntry("C++ tips.md", "C++ tips"),
    IndexEntry("Node.js.md", "Node.js"),
    IndexEntry("同期.md", "同期"),
    IndexEntry("同期設定.md", "同期設定"),
    IndexEntry("同期設定値.md", "同期設定値"),
    IndexEntry("ja/コマンド.md", "コマンド"),
    IndexEntry("ja/コマンドパレット.md", "コマンドパレット"),
    IndexEntry("zh/插件.md", "插件"),
    IndexEntry("zh/核心插件.md", "核心插件"),
    IndexEntry("Markdown.md", "Markdown"),
    IndexEntry("Markdownフォーマット.md", "Markdownフォーマット"),
)

CRAFTED = {
    "glued-url.md": "Use Synchttps://example.com/x today, or Syncwww.example.com.\n",
    "glued-cjk-url.md": "同期www.example.com を見る。插件https://x.cn/a 核心插件\n",
    "url-overlap.md": "see https://x.org/Alpha Beta Gamma and www.Alpha Beta Gamma here\n",
    "mail.md": "mail me@Sync.com or Sync.me@x.org about Canvas\n",
    "code.md": "`x`Sync and ``Sync`` and `Sync`Canvas\n\n```\nSync Canvas\n```\nSync\n",
    "links.md": "[[Sync]]Canvas [Sync](Canvas.md)Sync [[Alpha Beta|x]] Beta Gamma\n",
    "autolink.md": "<https://Sync.example>Canvas <b>Sync</b>Canvas\n",
    "tags.md": "#tag/Sync Canvas and x#Sync #Beta Gamma\n",
    "math.md": "$Alpha$ Beta Gamma and $$Sync$$Canvas\n",
    "comments.md": "%%Alpha%% Beta Gamma <!-- Sync -->Canvas\n",
    "footnote.md": "Sync[^Canvas] text ^block-Sync\n",
    "case.md": "SYNC, sync, SyNc; OBSIDIAN SYNC; c++ TIPS; node.JS\n",
    "punctuation.md": "(Sync), 'Canvas'; \"Beta Gamma\"! Alpha-Beta Gamma. Sync's\n",
    "aliases.md": "A Whiteboard is an obsidian  sync thing.\n",
    "cjk.md": "同期設定値を変える。同期設定を開く。同期する。コマンドパレットのコマンド。\n",
    "cjk-latin.md": "Markdownフォーマットインポーター、Markdown形式、同期Sync同期\n",
    "zh.md": "核心插件和插件。第三方插件设置。\n",
    "table.md": "| Sync | Canvas |\n| --- | --- |\n| 同期設定 | `Sync` |\n",
    "callout.md": "> [!note] Sync\n> Canvas and Sync\n",
    "heading.md": "# Heading\n\n## Sync\n\nCanvas\n",
    "frontmatter.md": "---\ntitle: Front\nnote: Sync\n---\nCanvas\n",
}


def test_the_scan_holds_every_term_linked_in_crafted_texts():
    index = index_of(CRAFTED, CRAFTED_INDEX)
    assert violations(CRAFTED, index) == {}
    for paths in ({"Beta Gamma.md", "Sync.md"}, {"同期.md", "Markdown.md", "zh/插件.md"}):
        assert violations(CRAFTED, index.within(paths)) == {}


def test_the_counterexamples_link_nothing_the_scan_misses():
    """What the linker found before it matched lines as written: "Sync" glued to a URL,
    "Beta Gamma" overlapping a URL's "Alpha Beta"; neither is linked now, as the scan,
    which sees one word and "Alpha Beta" there, reports."""
    index = index_of(CRAFTED, CRAFTED_INDEX)
    for path in ("glued-url.md", "url-overlap.md"):
        assert linked_pages(CRAFTED[path], path, index) == [], path
    assert linked_pages("Sync https://example.com/x", "n.md", index) == ["Sync.md"]
    assert "同期" not in linker_terms(CRAFTED["glued-cjk-url.md"], "n.md", index)


def test_a_scoped_index_matches_the_terms_out_of_its_reach():
    """A scoped note's index matches every term, so a longer title out of reach is left as
    text (as a generic one is) instead of linking the shorter or overlapping one in it."""
    index = index_of(CRAFTED, CRAFTED_INDEX)
    scoped = index.within({"Beta Gamma.md", "Sync.md"})
    assert add_links("Alpha Beta Gamma", "n.md", scoped)[1] == []
    assert add_links("Beta Gamma and Sync", "n.md", scoped)[1] == ["Beta Gamma.md", "Sync.md"]
    assert add_links("Canvas", "n.md", scoped)[1] == []


FRAGMENTS = (
    "Sync", "sync", "SYNC", "Obsidian Sync", "Alpha", "Beta", "Gamma", "Alpha Beta",
    "Beta Gamma", "Canvas", "whiteboard", "C++ tips", "Node.js", "Markdown", "同期",
    "同期設定", "設定値", "コマンド", "パレット", "插件", "核心", "https://", "http://x.io/",
    "www.", "x.org", "@", "me@", "`", "``", "```", "[[", "]]", "[", "](", ")", "<", ">",
    "<b>", "</b>", "#", "#tag", "$", "$$", "%%", "<!--", "-->", "[^", "^id", "|", "> ",
    "> [!", "- ", "* ", "1. ", "\n", "\n", " ", " ", " ", ".", ",", "、", "。", "-", "_",
    "'", '"', "(", "/", ":", "*", "**", "~", "=", "!", "?", "é", "Ｓ", "x", "1",
    "ſ", "\u212a", "İ", "_", "\u1100", "ー", "\u3000",   # odd cases, word and CJK characters
)


def test_the_scan_holds_every_term_linked_in_random_texts():
    """Property: for texts of random fragments (titles, markup, URLs, CJK, punctuation
    glued every way), every term linked is a term scanned."""
    rng = random.Random(20261206)
    notes = {f"r/{n}.md": "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(5, 120)))
             for n in range(1500)}
    index = index_of({}, CRAFTED_INDEX)
    assert violations(notes, index) == {}
    assert violations(notes, index.within({"Beta Gamma.md", "同期.md", "Markdown.md"})) == {}
