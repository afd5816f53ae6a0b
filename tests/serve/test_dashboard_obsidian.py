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
    embeds = html.split('<div class="embed">')[1:]
    assert len(embeds) == 3
    assert "Beta body." in embeds[0] and "Alpha body" not in embeds[0] \
        and "Opening text" not in embeds[0]
    assert "A block line." in embeds[1] and "Beta body" not in embeds[1] \
        and "Opening text" not in embeds[1]
    assert "Gamma is not in this page." in embeds[2]
