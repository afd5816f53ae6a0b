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
from mindgraph.dashboard.render import EMBED_BUDGET_CHARS, RENDER_MAX_CHARS
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
