"""The dashboard's rendered page of real Obsidian notes (a copy of the Obsidian Help vault,
through GET /dashboard/page): callouts as titled boxes, block ids as element ids, page
embeds as blocks outside paragraphs."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def help_client(corpora, tmp_path_factory):
    """The dashboard over a copy of the English Obsidian Help vault as the wiki."""
    workspace = tmp_path_factory.mktemp("help")
    shutil.copytree(corpora / "obsidian-help" / "en" / "Linking notes and files",
                    workspace / "wiki" / "Linking notes and files")
    (workspace / "raw").mkdir()
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    return TestClient(create_app(mg, None, None), base_url=LOCAL)


class _Nesting(HTMLParser):
    """Fails on a <p> opened inside a <p>, or a block element inside a <p>."""

    BLOCKS = {"p", "div", "details", "blockquote", "ul", "ol", "table", "pre", "h1", "h2"}

    def __init__(self) -> None:
        super().__init__()
        self.open_p = 0
        self.bad: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.BLOCKS and self.open_p:
            self.bad.append(tag)
        self.open_p += tag == "p"

    def handle_endtag(self, tag: str) -> None:
        self.open_p -= tag == "p"


def _html(client, page):
    response = client.get("/dashboard/page", params={"page": page})
    assert response.status_code == 200, response.text
    return response.json()["html"]


def test_a_callout_is_a_titled_box_of_its_type(help_client):
    html = _html(help_client, "Internal links")
    assert "[!warning]" not in html and "<p>[!" not in html
    assert re.search(r'<div class="callout callout-warning" data-callout="warning">\n'
                     r'<div class="callout-title">Interoperability</div>', html)


def test_a_block_id_is_the_paragraphs_id_not_its_text(help_client):
    html = _html(help_client, "Internal links")
    assert "^b15695</p>" not in html and "network of knowledge. ^b15695" not in html
    assert re.search(r'<p id="\^b15695">Learn how to link.*network of knowledge\.</p>', html)


def test_note_embeds_are_blocks_never_a_paragraph_in_a_paragraph(help_client):
    html = _html(help_client, "Embed files")
    # the block embed's title opens the note at that block
    assert '<div class="embed"><div class="embed-title"><a class="wikilink" ' \
           'href="#page=Linking%20notes%20and%20files/Internal%20links.md#^b15695"' in html
    checker = _Nesting()
    checker.feed(html)
    assert checker.bad == []


def test_an_embed_of_a_heading_or_a_block_shows_that_part(tmp_path):
    """`![[Note#Heading]]` shows that heading's section and `![[Note#^id]]` that block, as in
    Obsidian (both showed the page's opening text); a part the page lacks says so."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "raw").mkdir()
    (tmp_path / "wiki" / "Target.md").write_text(
        "# Target\n\nOpening text.\n\n## Alpha\n\nAlpha body.\n\n## Beta\n\nBeta body.\n\n"
        "A block line. ^blk1\n")
    (tmp_path / "wiki" / "Embedder.md").write_text(
        "# Embedder\n\n![[Target#Beta]]\n\n![[Target#^blk1]]\n\n![[Target#Gamma]]\n")
    client = TestClient(create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path)),
                                   None, None), base_url=LOCAL)
    html = client.get("/dashboard/page", params={"page": "Embedder"}).json()["html"]
    embeds = re.split(r'<div class="embed(?: broken)?">', html)[1:]
    assert len(embeds) == 3
    assert "Beta body." in embeds[0] and "Alpha body" not in embeds[0] \
        and "Opening text" not in embeds[0]
    assert "A block line." in embeds[1] and "Beta body" not in embeds[1] \
        and "Opening text" not in embeds[1]
    assert "Gamma is not in this page." in embeds[2]
    assert html.count('<div class="embed broken">') == 1     # the one of Gamma


def test_a_block_id_right_after_an_image_embed_is_its_id(corpora, tmp_path):
    """`![[version-history-collaboration.png]]^version-history-image` (no space, as three
    Help vault pages write it) names the image: no "^version-history-image" left as text,
    and the image (here missing: the vault is published without it) carries the id."""
    shutil.copytree(corpora / "obsidian-help" / "en" / "Obsidian Sync",
                    tmp_path / "wiki" / "Obsidian Sync")
    (tmp_path / "raw").mkdir()
    client = TestClient(create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path)),
                                   None, None), base_url=LOCAL)
    html = _html(client, "Collaborate on a shared vault")
    assert "^version-history-image<" not in html and "png^version" not in html
    assert re.search(r'<span class="attachment missing" id="\^version-history-image"[^>]*>'
                     r'version-history-collaboration\.png</span>', html)


def _vault_client(tmp_path, pages):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "raw").mkdir()
    for name, text in pages.items():
        (tmp_path / "wiki" / name).write_text(text)
    mg = Mindgraph(settings_from_dict({}, base_dir=tmp_path))
    return mg, TestClient(create_app(mg, None, None), base_url=LOCAL)


def test_a_link_to_a_heading_or_block_the_page_lacks_is_drawn_unresolved(tmp_path):
    """`[[A#Missing heading]]`, `[[A#^missing]]` and `![[A#Missing]]` are unresolved, as in
    Obsidian, exactly the links `mindgraph check` reports (missing-heading, missing-block):
    marked broken, they still open A; the links to what A has are whole."""
    mg, client = _vault_client(tmp_path, {
        "A.md": "# A\n\nOpening.\n\n## Present: here\n\nBody. ^blk1\n",
        "B.md": "# B\n\n[[A#Present here]] [[A#^blk1]] [[A#Missing heading]] "
                "[[A#^missing|gone]] [[#Local]]\n\n![[A#Missing]]\n\n## Local\n\nText.\n"})
    html = _html(client, "B")
    assert ('<a class="wikilink" href="#page=A.md#Present%20here" data-page="A.md">'
            'A › Present here</a>') in html
    assert '<a class="wikilink" href="#page=A.md#^blk1" data-page="A.md">A</a>' in html
    assert ('<a class="wikilink broken" href="#page=A.md" data-page="A.md" '
            'title="no heading \'Missing heading\' in A">A › Missing heading</a>') in html
    assert ('<a class="wikilink broken" href="#page=A.md" data-page="A.md" '
            'title="no block ^missing in A">gone</a>') in html
    assert '<div class="embed broken"><div class="embed-title"><a class="wikilink broken"' \
        in html
    assert 'class="wikilink" href="#page=B.md#Local" data-page="B.md">Local</a>' in html
    drawn = re.findall(r'class="wikilink broken"[^>]*>([^<]*)<', html)
    reported = [(f.kind, f.line) for f in mg.check().findings
                if f.kind in ("missing-heading", "missing-block", "broken-link")]
    assert sorted(drawn) == ["A › Missing", "A › Missing heading", "gone"]
    assert sorted(reported) == [("missing-block", 3), ("missing-heading", 3),
                                ("missing-heading", 5)]


def test_a_link_to_an_attachment_opens_the_file_or_says_it_is_missing(tmp_path):
    """`[[web-clipper-kde.png|see screenshot]]` (a link, not an embed) is an attachment link,
    not a page link that is broken: `check` calls it a missing attachment, never a broken
    link."""
    _mg, client = _vault_client(tmp_path, {
        "A.md": "# A\n\nSee [[shot.png|the screenshot]] and [[gone.pdf]].\n"})
    (tmp_path / "raw" / "shot.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    html = _html(client, "A")
    assert ('<a class="attachment" href="/dashboard/attachment?target=shot.png&amp;page=A.md" '
            'data-attachment="1" target="_blank" rel="noopener noreferrer">the screenshot</a>'
            ) in html
    assert '<span class="attachment missing" title="not found in raw/">gone.pdf</span>' in html
    assert "wikilink broken" not in html


@pytest.fixture(scope="module")
def formatting_client(corpora, tmp_path_factory):
    """The dashboard over a copy of the English Help vault's "Editing and formatting"."""
    workspace = tmp_path_factory.mktemp("formatting")
    shutil.copytree(corpora / "obsidian-help" / "en" / "Editing and formatting",
                    workspace / "wiki" / "Editing and formatting")
    (workspace / "raw").mkdir()
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    return TestClient(create_app(mg, None, None), base_url=LOCAL)


def test_the_help_vaults_formatting_page_shows_no_raw_syntax(formatting_client):
    """The page that shows Obsidian's syntax showed its comment, highlight, task items and
    HTML headings as raw text (bench/bench_dashboard_fidelity.py counts such leftovers)."""
    html = _html(formatting_client, "Basic formatting syntax")
    outside_code = re.sub(r"<pre.*?</pre>|<code>.*?</code>", "", html, flags=re.S)
    assert "%%" not in outside_code and "==" not in outside_code
    assert "These headings use HTML" not in outside_code
    assert "<h1>This is a heading 1</h1>\n<h2>This is a heading 2</h2>" in html
    assert "<mark>Highlighted text</mark>" in html
    assert ('<input class="task-list-item-checkbox" type="checkbox" disabled checked> '
            'This is a completed task.') in html
    assert "line three<br>" in html and "&lt;br&gt;" not in outside_code
    math = _html(formatting_client, "Advanced formatting syntax")
    assert re.search(r'<div class="math block">\n\\begin\{vmatrix\}a &amp; b\\\\', math)
    assert '<span class="math inline">e^{2i\\pi} = 1</span>' in math


def test_a_link_with_an_alias_in_a_japanese_table_row_stays_one_link(corpora, tmp_path):
    """ヘッドレスSync writes ``| サーバーの[[Syncリージョン|リージョン]]（省略時は自動） |``
    (no ``\\|``): the link's pipe split the cell, leaving ``[[Syncリージョン`` as text."""
    shutil.copytree(corpora / "obsidian-help" / "ja" / "Obsidian Sync",
                    tmp_path / "wiki" / "Obsidian Sync")
    (tmp_path / "raw").mkdir()
    client = TestClient(create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path)),
                                   None, None), base_url=LOCAL)
    html = _html(client, "ヘッドレスSync")
    assert "[[" not in html and "]]" not in html
    assert re.search(r'<td>サーバーの<a class="wikilink" href="#page=Obsidian%20Sync/'
                     r'[^"]+" data-page="Obsidian Sync/Syncリージョン.md">リージョン</a>'
                     r'（省略時は自動）</td>', html)
