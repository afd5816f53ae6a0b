"""An agent's own note cannot pose as one of the owner's note-app items in native search.

Native search asks the app (the owner's TickTick account, out of every agent's scope) and
finds each hit again as a page through the ``app`` / ``item_id`` frontmatter. A note an agent
uploads may carry that frontmatter too. It used to be taken for the item: the agent's page was
ranked by how well the owner's task matched the agent's query (``sources.native`` and its
score), so a query of words the agent's own note does not hold ("photos", "consulate") scored
its note exactly when the owner's task holds them: word by word a reading of the task. Now a hit is found again only as the note
`pull` filed for that item (or a page written in wiki/ by hand, which no agent can do).
Real REST app, real pull from the fake TickTick API on a local port, real indexes.
"""

import json

import pytest
from fastapi.testclient import TestClient
from ticktick_fake import TOKEN, FakeTickTick

from mindgraph.adapters.pull import pull
from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

TOKENS = {"alice": "a" * 40, "server": "s" * 40}
PASSPORT = "63b7bebb91c0a5474805fcd4"    # "Renew passport": "... bring two photos ..."
SPOOF = ("---\ntitle: Errand list\napp: tasks\nitem_id: " + PASSPORT + "\n"
         "url: https://evil.example/phish\n---\nNothing in particular here.\n")


@pytest.fixture
def served(tmp_path, monkeypatch):
    """The owner's tasks pulled and compiled, alice (an agent, not a writer) on the API."""
    fake = FakeTickTick()
    monkeypatch.setenv("TT_TOKEN", TOKEN)
    monkeypatch.setenv("TOKEN_ALICE", TOKENS["alice"])
    (tmp_path / "raw" / "acme" / "shared").mkdir(parents=True)
    (tmp_path / "raw" / "acme" / "shared" / "Home.md").write_text("# Home\n\nHello.\n")
    with fake.serve() as base_url:
        (tmp_path / "mindgraph.yml").write_text(
            "embedding: {provider: hashing, dimension: 64}\n"
            "scopes:\n  identities:\n"
            "    - {name: alice, tenant: acme, agent: alice, token_env: TOKEN_ALICE}\n"
            "adapters:\n  - name: tasks\n    type: ticktick\n"
            f"    options: {{token_env: TT_TOKEN, base_url: '{base_url}', "
            f"completed_days: 36500}}\n")
        assert pull(load_settings(tmp_path)).ok
        core = Mindgraph.open(tmp_path)
        assert core.ingest().ok
        core.embed()
        with TestClient(create_app(core, token=TOKENS["server"]),
                        base_url="http://127.0.0.1:8765") as client:
            yield client
        core.close()


def _search(client, who, query):
    answer = client.get("/smart_search", params={"q": query, "limit": 10},
                        headers={"Authorization": f"Bearer {TOKENS[who]}"})
    assert answer.status_code == 200, answer.text
    return answer.json()["results"]


def test_an_agents_note_is_not_taken_for_the_owners_item(served):
    upload = served.post("/upload", headers={"Authorization": f"Bearer {TOKENS['alice']}"},
                         files={"files": ("Errand list.md", SPOOF.encode(), "text/markdown")})
    assert upload.status_code == 200, upload.text
    # words only the owner's task holds: never a native score for the agent's note (how well
    # the owner's task matched the agent's query)
    for query in ("photos", "consulate", "photos consulate", "passport"):
        results = _search(served, "alice", query)
        assert all("native" not in r["sources"] for r in results), json.dumps(results)
    # the owner still finds the task through the app's search, as the note pull filed
    owner = _search(served, "server", "consulate photos")
    natives = [r["page"] for r in owner if "native" in r["sources"]]
    assert natives == ["ticktick/Errands/Renew passport.md"], json.dumps(owner)
