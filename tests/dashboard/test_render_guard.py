"""What one GET /dashboard/page may cost by its markup's density, not only its length: 100,000
'[' (under RENDER_MAX_CHARS) held the slow lane 4.4 s. A dense body is drawn as markdown as
far as its estimated cost allows, the rest as text with a note; the Help vault's pages (the
densest included) are drawn whole. The figures: bench/bench_render_guard.py."""

from __future__ import annotations

import shutil

import pytest
from starlette.testclient import TestClient

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

DENSE = "Quince intro with **bold** text.\n\n" + "[" * 60_000     # under RENDER_MAX_CHARS
# an old Mac's line ends, kept by a page: markdown-it reads each "\r" as a line end
OLD_MAC = "Quince **start**.\r\r" + "p\r\r" * 33_000             # 33,000 paragraphs
CODE = "```python\n" + "value = 'quince quince quince quince quince quince quince'\n" * 140 \
    + "```\n\n"                                                   # 8,400 characters of code


@pytest.fixture(scope="module")
def client(corpora, tmp_path_factory):
    """The serve app over the Help vault's wiki, with dense pages beside it."""
    base = tmp_path_factory.mktemp("guard")
    shutil.copytree(corpora / "obsidian-help", base / "wiki")
    (base / "raw").mkdir()
    guard = base / "wiki" / "guard"
    guard.mkdir()
    (guard / "Dense.md").write_text(DENSE, encoding="utf-8")
    (guard / "Embeds Dense.md").write_text("Before.\n\n![[Dense]]\n\nAfter **it**.\n",
                                           encoding="utf-8")
    (guard / "Old Mac.md").write_bytes(OLD_MAC.encode())
    (guard / "Embeds Old Mac.md").write_text("Before.\n\n![[Old Mac]]\n\nAfter **it**.\n",
                                             encoding="utf-8")
    (guard / "Big.md").write_text("# Big\n\n" + "A paragraph of the big page.\n\n" * 3000
                                  + "The one block. ^blk\n\n## Head\n\nUnder the heading.\n",
                                  encoding="utf-8")
    (guard / "Walls.md").write_text("Intro.\n\n" + "![[Big#Head]] ![[Big#^BLK]]\n" * 300,
                                    encoding="utf-8")
    (guard / "Odd.md").write_text("# Odd\n\n" + "A paragraph of the odd page.\n\n" * 300
                                  + "".join(f"Odd block {i}. ^a.{i}\n\n" for i in range(100)),
                                  encoding="utf-8")
    (guard / "Odd wall.md").write_text("".join(f"![[Odd#^a.{i}]]\n" for i in range(100)),
                                       encoding="utf-8")
    (guard / "Code.md").write_text(CODE * 3, encoding="utf-8")
    return TestClient(create_app(Mindgraph(settings_from_dict({}, base_dir=base))),
                      base_url="http://127.0.0.1:8765")


def _html(client, page: str) -> str:
    answer = client.get("/dashboard/page", params={"page": page})
    assert answer.status_code == 200, answer.text[:300]
    return answer.json()["html"]


def test_a_dense_body_under_the_length_limit_is_drawn_as_markdown_only_as_far_as_it_affords(
        client):
    html = _html(client, "guard/Dense.md")
    drawn, note, rest = html.partition('<p class="render-cut">')
    assert note and "too dense" in rest.split("</p>")[0]
    assert "<strong>bold</strong>" in drawn                      # the start is markdown
    assert drawn.count("[") < 10_000                             # 60,000 drawn before
    assert drawn.count("[") + rest.count("[") == 60_000          # nothing lost, as text
    assert '<pre class="unrendered">' in rest


def test_an_embedded_dense_page_is_shown_as_its_title(client):
    html = _html(client, "guard/Embeds Dense.md")
    assert 'class="embed-elided"' in html and "too dense" in html
    assert html.count("[") < 100 and "<strong>it</strong>" in html


def test_lone_carriage_returns_are_counted_as_the_lines_markdown_it_reads(client):
    html = _html(client, "guard/Old Mac.md")
    drawn, note, rest = html.partition('<p class="render-cut">')
    assert note and "too dense" in rest.split("</p>")[0]        # drew all 33,000 before
    assert "<strong>start</strong>" in drawn and drawn.count("<p>p</p>") < 5_000
    assert drawn.count("<p>p</p>") + rest.count("p\n") >= 33_000
    embeds = _html(client, "guard/Embeds Old Mac.md")
    assert 'class="embed-elided"' in embeds and "too dense" in embeds
    assert embeds.count("<p>p</p>") == 0 and "<strong>it</strong>" in embeds


def test_embeds_of_a_big_pages_heading_and_block_outline_it_once(client, monkeypatch):
    """Each ![[Big#Head]] and ![[Big#^blk]] masked the whole page's code and found its
    headings again: 60 ms an embed of a page of 60,000 lines, 512 embeds a view, 30 s (504
    with the slow lane held; bench/bench_dashboard_embed_bombs.py's heading and block wall)."""
    from mindgraph.page import transclude

    masked = [0]
    mask_code = transclude.mask_code

    def counted(lines):
        masked[0] += 1
        return mask_code(lines)

    monkeypatch.setattr(transclude, "mask_code", counted)
    html = _html(client, "guard/Walls.md")
    assert html.count("Under the heading.") + html.count("The one block.") == 512
    assert html.count("Under the heading.") == html.count("The one block.") == 256
    assert masked[0] <= 1                                            # 512 before


def test_embeds_of_many_unusual_block_ids_read_the_page_once(client, monkeypatch):
    """An id not of the plain [A-Za-z0-9-]+ form (^a.1) was searched for through the whole
    target, once an id: 600 of them on a big page took 1.9 s a cold view. Every line's id is
    indexed with the outline now (bench/bench_unusual_block_ids.py)."""
    from mindgraph.page import transclude

    searched = []
    search = transclude._block_marker
    monkeypatch.setattr(transclude, "_block_marker",
                        lambda masked, block: searched.append(block) or search(masked, block))
    html = _html(client, "guard/Odd wall.md")
    assert all(f"Odd block {i}." in html for i in range(100))
    assert searched == []                                           # 100 before


def test_code_is_highlighted_up_to_the_views_budget_then_drawn_plain(client):
    html = _html(client, "guard/Code.md")
    blocks = html.split("<pre>")[1:]
    assert len(blocks) == 3 and "render-cut" not in html
    assert ['class="hl-' in block for block in blocks] == [True, True, False]
    assert blocks[2].count("quince") == 140 * 7                  # plain code, whole


@pytest.mark.parametrize("page", ["en/Extending Obsidian/Obsidian CLI.md",
                                  "ja/Obsidian の拡張/Obsidian CLI.md",
                                  "zh/扩展 Obsidian/Obsidian CLI.md",
                                  "en/Bases/Functions.md", "en/User interface/Settings.md"])
def test_the_help_vaults_densest_pages_are_drawn_whole(client, page):
    html = _html(client, page)
    assert "render-cut" not in html and "embed-elided" not in html
    assert "<h2" in html
