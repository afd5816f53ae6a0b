"""GET /dashboard/page through the real app: a block id belongs to the one block it names.

An embedded text kept its block ids: the embedding page held a second element of an id
(``id="^fact"`` twice when it had its own ``^fact``, which then took a ``#^fact`` link away
from the page's own block), and an inline embed showed the raw ``^id`` text. Now an embedded
text's ids are taken out and become no id, and a link to ``Note#^id`` (or a block embed's
title) opens that note at its own block (``#page=<path>#^id``)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app


def _html(base, page):
    mg = Mindgraph(settings_from_dict({}, base_dir=base))
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    answer = client.get("/dashboard/page", params={"page": page})
    assert answer.status_code == 200, answer.text
    return answer.json()["html"]


def _ids(html):
    return re.findall(r'\bid="([^"]*)"', html)


def _vault(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Source.md").write_text(
        "# Source\n\nThe first fact. ^fact\n\nA second one. ^other\n\n- an item ^item\n")
    (wiki / "Reader.md").write_text(
        "# Reader\n\nMy own fact. ^fact\n\n"
        "![[Source#^other]]\n\n"            # a block embed
        "![[Source]]\n\n"                    # a whole-note embed holding three ids
        "Inline: ![[Source]] and more.\n\n"  # inline: the ids were raw text
        "See [[Source#^fact]] and [[Source#^item|the item]], and mine: [[#^fact|here]].\n")
    return tmp_path


def test_an_embedded_text_adds_no_id_and_shows_no_marker(tmp_path):
    html = _html(_vault(tmp_path), "Reader")
    ids = _ids(html)
    assert ids == ["^fact"], ids                     # the page's own block id, once
    assert '<p id="^fact">My own fact.</p>' in html
    assert "^other" not in re.sub(r'href="[^"]*"', "", html)
    assert "^item" not in re.sub(r'href="[^"]*"', "", html)
    text = re.sub(r"<[^>]+>", "", html)
    assert "^" not in text, text                    # no raw marker in any embed
    assert "The first fact." in text and "A second one." in text and "an item" in text


def test_links_to_a_block_open_its_page_at_that_block(tmp_path):
    base = _vault(tmp_path)
    html = _html(base, "Reader")
    assert '<a class="wikilink" href="#page=Source.md#^fact" data-page="Source.md">' in html
    assert 'href="#page=Source.md#^item" data-page="Source.md">the item</a>' in html
    # a link to a block of the page itself (it was drawn as a broken link)
    assert '<a class="wikilink" href="#page=Reader.md#^fact" data-page="Reader.md">here</a>' \
        in html
    # the block embed's title leads to the block it shows
    assert 'href="#page=Source.md#^other"' in html
    # ...where the block has its id, once
    source = _html(base, "Source")
    assert sorted(_ids(source)) == ["^fact", "^item", "^other"]
    assert '<p id="^other">A second one.</p>' in source
