"""What one GET /dashboard/page may cost: an agent's notes cannot make a render that holds
the server. Each embed rendered its page's lead again, so two notes any agent may create
(POST /documents) — one of 96 kB, one embedding it 2,000 times — made one request take 31 s
and answer 192 MB (the server at 650 MB); larger ones would take the server's memory."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.dashboard.render import EMBED_BUDGET_CHARS, EMBED_MIN_CHARS, RENDER_MAX_CHARS
from mindgraph.serve.rest import create_app

from scopes_support import TOKENS, set_tokens, write_workspace


@pytest.fixture
def dave(tmp_path, monkeypatch):
    set_tokens(monkeypatch)
    root = write_workspace(tmp_path)
    assert CliRunner().invoke(cli, ["-C", str(root), "ingest"]).exit_code == 0
    return TestClient(create_app(Mindgraph.open(root)), base_url="http://127.0.0.1:8765",
                      headers={"Authorization": f"Bearer {TOKENS['dave']}"})


def test_a_page_embedding_a_large_note_many_times_renders_within_the_embed_budget(dave):
    lead = "Okra lead " + "word word word. " * 3000                 # 48 kB, one section
    made = dave.post("/documents", json={"title": "Okra", "text": lead})
    assert made.status_code == 200, made.text
    embeds = "![[Okra]]\n\n" * 400
    bomb = dave.post("/documents", json={"title": "Okra Bomb", "text": "Intro.\n\n" + embeds})
    assert bomb.status_code == 200, bomb.text

    answer = dave.get("/dashboard/page", params={"page": bomb.json()["page"]})
    assert answer.status_code == 200, answer.text[:300]
    html = answer.json()["html"]
    # the embeds fit in the budget are shown (5 of 48 kB), the rest as their titles
    assert html.count("Okra lead") == EMBED_BUDGET_CHARS // len(lead)
    assert html.count('class="embed-elided"') == 400 - EMBED_BUDGET_CHARS // len(lead)
    assert html.count('class="embed"') == 400
    assert len(html) < 2 * EMBED_BUDGET_CHARS                     # 19 MB before


def test_a_few_embeds_are_shown_whole(dave):
    dave.post("/documents", json={"title": "Fig", "text": "Fig lead text."})
    page = dave.post("/documents", json={"title": "Fig Notes",
                                         "text": "See ![[Fig]] and\n\n![[Fig]]\n"}).json()["page"]
    html = dave.get("/dashboard/page", params={"page": page}).json()["html"]
    assert html.count("Fig lead text.") == 2 and "embed-elided" not in html


def test_a_page_over_the_render_limit_is_drawn_as_markdown_up_to_it_then_as_text(dave):
    """markdown-it costs hundreds of times more per character of some markup than of prose:
    a note of 1 MB of '[' held the slow lane 47 s per page view (prose: 0.14 s)."""
    head = "Quince intro with **bold** text.\n\n"
    brackets = "[" * 80 + "\n\n"
    text = head + brackets * 6000                                  # 500 kB, 480,000 '['
    made = dave.post("/documents", json={"title": "Quince", "text": text})
    assert made.status_code == 200, made.text
    html = dave.get("/dashboard/page", params={"page": made.json()["page"]}).json()["html"]
    assert "<strong>bold</strong>" in html                        # the start is markdown
    drawn, cut, rest = html.partition('<p class="render-cut">')
    assert cut and drawn.count("[") <= RENDER_MAX_CHARS
    assert rest.count("[") + drawn.count("[") == 480_000           # nothing lost, as text
    assert '<pre class="unrendered">' in rest and "<strong>" not in rest


def test_embeds_of_a_short_note_are_shown_up_to_a_count(dave):
    """The budget counted characters only, so a one-line note embedded 8,000 times passed it
    whole: each embed is a parse and render of its own, and one page view took 11 s. Each
    embed now counts EMBED_MIN_CHARS or more. (800 embeds: their lines' estimated cost,
    0.12 s, leaves the render budget room for more than 512 leads, so the count is what
    stops them; 1,200 lines left room for 445: render_cost.py stopped them first.)"""
    dave.post("/documents", json={"title": "Pip", "text": "Pip seed."})
    wall = dave.post("/documents", json={"title": "Pip Wall",
                                         "text": "Intro.\n\n" + "![[Pip]]\n" * 800})
    assert wall.status_code == 200, wall.text
    html = dave.get("/dashboard/page", params={"page": wall.json()["page"]}).json()["html"]
    shown = EMBED_BUDGET_CHARS // EMBED_MIN_CHARS
    assert html.count("Pip seed.") == shown
    assert html.count('class="embed-elided"') == 800 - shown


def test_a_paragraph_of_embeds_compares_no_tokens(dave, monkeypatch):
    """A paragraph holding only embeds is drawn as blocks; which children were not embeds was
    found with ``c not in embeds``, comparing markdown-it tokens field by field: 14,000
    embeds one a line (one paragraph) took 200 s a page view, every view answered 504.
    (1,200 here: 2,000 lines are past what render_cost.py lets one view draw as markdown.)"""
    from markdown_it.token import Token

    dave.post("/documents", json={"title": "Nib", "text": "Nib."})
    wall = dave.post("/documents", json={"title": "Nib Wall",
                                         "text": "Intro.\n\n" + "![[Nib]]\n" * 1200})
    compared = [0]
    equal = Token.__eq__

    def counted(self, other):
        compared[0] += 1
        return equal(self, other)

    monkeypatch.setattr(Token, "__eq__", counted)
    answer = dave.get("/dashboard/page", params={"page": wall.json()["page"]})
    assert answer.status_code == 200
    assert answer.json()["html"].count('class="embed"') == 1200
    assert compared[0] < 1200                       # 720,000 before


def test_a_page_of_many_embeds_of_one_picture_reads_the_view_and_raw_once(dave, tmp_path,
                                                                           monkeypatch):
    """Signing each attachment embed's URL found its file as the attachment route does, one
    embed at a time: every page's sources read and every folder of raw/ stat'ed per embed (a
    page of 7,500 embeds of one shared picture: 82 s a view on 500 pages in 50 folders,
    bench/bench_dashboard_embed_bombs.py). A page view reads them once."""
    from mindgraph.dashboard import attachment_index
    from mindgraph.scopes.views import ScopedQueries

    (tmp_path / "raw" / "acme" / "shared" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    text = "Intro.\n\n" + "![[pic.png]]\n" * 300 + "![[shared/pic.png]]\n![[./pic.png]]\n"
    wall = dave.post("/documents", json={"title": "Picture Wall", "text": text})
    assert wall.status_code == 200, wall.text
    stamps, sources = [0], [0]
    stamp, read_sources = attachment_index._stamp, ScopedQueries._sources

    def counted_stamp(path):
        stamps[0] += 1
        return stamp(path)

    def counted_sources(self):
        sources[0] += 1
        return read_sources(self)

    monkeypatch.setattr(attachment_index, "_stamp", counted_stamp)
    monkeypatch.setattr(ScopedQueries, "_sources", counted_sources)
    folders = sum(1 for p in (tmp_path / "raw").rglob("*") if p.is_dir()) + 1
    html = dave.get("/dashboard/page", params={"page": wall.json()["page"]}).json()["html"]
    assert html.count("&amp;ticket=") == 302            # every embed signed, each its file
    assert stamps[0] <= 4 * folders                     # 300 times that before
    assert sources[0] <= 4
