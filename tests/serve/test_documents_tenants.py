"""The documents API with two tenants: every route answers from the caller's token alone,
shows only what its view holds, writes only to its scope folders, and refuses the rest."""

import json

import pytest
from documents_support import compiled_tenants
from fastapi.testclient import TestClient

from mindgraph.core import Mindgraph
from mindgraph.documents.records import document_id
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
TOKENS = {name: f"{name}-token-" + "x" * 32 for name in ("alice", "bob", "dave", "carol")}
CONFIG = """\
embedding: {provider: hashing, dimension: 64}
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, teams: [search], token_env: TOKEN_ALICE}
    - {name: bob, tenant: acme, agent: bob, teams: [ops], token_env: TOKEN_BOB}
    - {name: dave, tenant: acme, agent: dave, teams: [search], token_env: TOKEN_DAVE}
    - {name: carol, tenant: globex, agent: carol, token_env: TOKEN_CAROL}
"""
NOTES = {"acme/personal/alice/Alice plan.md": "# Alice plan\n\nTrunks for the trip.\n",
         "acme/personal/bob/Bob secret.md": "# Bob secret\n\nTrunks hidden in the attic.\n",
         "acme/team/search/Ranking.md": "# Ranking\n\nTrunks ranked by size.\n",
         "acme/shared/Handbook.md": "# Handbook\n\nEvery trunk has a label.\n",
         "globex/shared/Globex trunks.md": "# Globex trunks\n\nTrunks of another company.\n"}


@pytest.fixture
def tenants(tmp_path, monkeypatch):
    """A compiled two-tenant workspace; a client per identity (and one without a token)."""
    compiled_tenants(tmp_path, monkeypatch, CONFIG, NOTES, TOKENS)
    app = create_app(Mindgraph.open(tmp_path))
    clients = {name: TestClient(app, base_url=LOCAL,
                                headers={"Authorization": f"Bearer {token}"})
               for name, token in TOKENS.items()}
    clients["anonymous"] = TestClient(app, base_url=LOCAL)
    clients["base"] = tmp_path
    return clients


def pages(client, **params):
    return sorted(d["page"] for d in client.get("/documents", params=params).json()["documents"])


def doc(path):
    return document_id(path)


def test_each_identity_lists_only_what_it_sees(tenants):
    assert pages(tenants["alice"]) == ["acme/personal/alice/Alice plan.md",
                                       "acme/shared/Handbook.md", "acme/team/search/Ranking.md"]
    assert pages(tenants["bob"]) == ["acme/personal/bob/Bob secret.md", "acme/shared/Handbook.md"]
    assert pages(tenants["carol"]) == ["globex/shared/Globex trunks.md"]
    assert tenants["bob"].get("/documents").json()["total"] == 2
    assert pages(tenants["alice"], scope="team") == ["acme/team/search/Ranking.md"]
    assert pages(tenants["alice"], team="search") == ["acme/team/search/Ranking.md"]
    assert pages(tenants["bob"], team="search") == []
    listed = tenants["alice"].get("/documents", params={"scope": "personal"}).json()
    assert listed["documents"][0]["scope"] == {"tenant": "acme", "kind": "personal",
                                               "owner": "alice"}


def test_a_document_out_of_view_reads_as_one_that_does_not_exist(tenants):
    hidden = tenants["carol"].get(f"/documents/{doc('acme/shared/Handbook.md')}")
    missing = tenants["carol"].get("/documents/0123456789abcdef")
    assert hidden.status_code == missing.status_code == 404
    assert hidden.json()["detail"].replace(doc("acme/shared/Handbook.md"), "ID") == \
        missing.json()["detail"].replace("0123456789abcdef", "ID")
    assert tenants["bob"].get(
        f"/documents/{doc('acme/team/search/Ranking.md')}/links").status_code == 404


def test_no_token_or_a_wrong_one_is_401(tenants):
    assert tenants["anonymous"].get("/documents").status_code == 401
    wrong = TestClient(tenants["alice"].app, base_url=LOCAL,
                       headers={"Authorization": "Bearer " + "y" * 40})
    for method, path in (("get", "/documents"), ("get", "/status"), ("post", "/rescan")):
        assert getattr(wrong, method)(path).status_code == 401, path
    assert wrong.post("/documents", json={"title": "x"}).status_code == 401


def test_new_notes_go_to_the_callers_scope_folders(tenants):
    alice = tenants["alice"]
    own = alice.post("/documents", json={"title": "Packing list", "text": "Two trunks."}).json()
    assert own["raw"] == "acme/personal/alice/api-notes/Packing-list.md"
    team = alice.post("/documents", json={"title": "Team note", "scope": "team",
                                          "team": "search"}).json()
    assert team["raw"] == "acme/team/search/api-notes/Team-note.md"
    shared = alice.post("/documents", json={"title": "For all", "scope": "shared"}).json()
    assert shared["raw"] == "acme/shared/api-notes/For-all.md"
    refused = alice.post("/documents", json={"title": "Not mine", "scope": "team",
                                             "team": "ops"})
    assert refused.status_code == 403 and "own teams" in refused.json()["detail"]
    assert "acme/personal/alice/api-notes/Packing-list.md" not in pages(tenants["bob"])
    assert "acme/team/search/api-notes/Team-note.md" in pages(tenants["dave"])
    assert "acme/shared/api-notes/For-all.md" in pages(tenants["bob"])
    assert "acme/shared/api-notes/For-all.md" not in pages(tenants["carol"])
    # searchable for alice, not for carol (the search routes of the scopes work filter too)
    assert own["searchable"] is True


def test_deletes_only_in_the_callers_scope(tenants):
    alice, bob, dave = tenants["alice"], tenants["bob"], tenants["dave"]
    team = alice.post("/documents", json={"title": "Team scratch", "scope": "team",
                                          "team": "search"}).json()
    shared = alice.post("/documents", json={"title": "Shared scratch",
                                            "scope": "shared"}).json()
    mine = alice.post("/documents", json={"title": "Mine"}).json()
    assert bob.delete(f"/documents/{team['id']}").status_code == 404     # not in his view
    assert bob.delete(f"/documents/{mine['id']}").status_code == 404
    assert dave.delete(f"/documents/{team['id']}").status_code == 200    # his team's
    assert bob.delete(f"/documents/{shared['id']}").status_code == 200   # his tenant's
    handbook = alice.delete(f"/documents/{doc('acme/shared/Handbook.md')}")
    assert handbook.status_code == 403
    assert (tenants["base"] / "raw" / "acme/shared/Handbook.md").is_file()


def test_links_never_reach_out_of_view(tenants):
    alice, bob = tenants["alice"], tenants["bob"]
    plan, handbook = doc("acme/personal/alice/Alice plan.md"), doc("acme/shared/Handbook.md")
    made = alice.post("/links", json={"from": plan, "to": handbook, "kind": "depends_on",
                                      "context": "The plan follows the handbook."})
    assert made.status_code == 200, made.text
    assert [b["page"] for b in alice.get(f"/documents/{handbook}/links").json()["backlinks"]] \
        == ["acme/personal/alice/Alice plan.md"]
    assert bob.get(f"/documents/{handbook}/links").json()["backlinks"] == []
    batch = bob.post("/links/batch", json={"ids": [handbook]}).json()
    assert batch["documents"][handbook]["backlinks"] == []
    other = alice.post("/links", json={"from": plan, "to": doc(
        "globex/shared/Globex trunks.md"), "kind": "related"})
    assert other.status_code == 404                     # another tenant's page: not there
    assert bob.delete(f"/links/{made.json()['id']}").status_code == 404
    # written into the shared page, a link to alice's personal page would show its path to bob
    widening = alice.post("/links", json={"from": handbook, "to": plan, "kind": "related"})
    assert widening.status_code == 403 and "narrower" in widening.json()["detail"]
    team = alice.post("/links", json={"from": doc("acme/team/search/Ranking.md"),
                                      "to": handbook, "kind": "reference"})
    assert team.status_code == 200                      # team → shared: every reader sees both


def test_uploads_go_to_the_callers_scope_or_team(tenants):
    alice = tenants["alice"]
    note = [("files", ("idea.md", b"# Idea\n\nA trunk on wheels.\n", "text/markdown"))]
    assert alice.post("/upload", files=note, data={"scope": "team", "team": "ops"}
                      ).status_code == 403
    done = alice.post("/upload", files=note, data={"scope": "team", "team": "search"})
    assert done.status_code == 200, done.text
    assert done.json()["documents"][0]["raw"] == "acme/team/search/api-notes/idea.md"
    assert "acme/team/search/api-notes/idea.md" not in pages(tenants["bob"])


def test_rescans_are_one_per_tenant_and_status_is_per_tenant(tenants):
    alice, bob, carol = tenants["alice"], tenants["bob"], tenants["carol"]
    service = alice.app.state.documents
    held = service.start_rescan(alice.app.state.callers.view_of(
        alice.app.state.callers.scopes.identity("alice")))
    assert bob.post("/rescan").status_code == 409           # the same tenant
    started = carol.post("/rescan", json={"embed": False})
    assert started.status_code == 202                       # another tenant is not held up
    assert [j["id"] for j in alice.get("/status").json()["running"]] == [held.id]
    assert held.id not in {j["id"] for j in carol.get("/status").json()["running"]
                           + carol.get("/status").json()["recent"]}
    service.jobs.finish(held)


def test_an_agents_rescan_status_holds_no_workspace_wide_counts(tenants):
    import time

    alice = tenants["alice"]
    assert alice.post("/rescan", json={"embed": True}).status_code == 202
    deadline = time.monotonic() + 60
    while alice.get("/status").json()["running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    (job,) = [j for j in alice.get("/status").json()["recent"] if j.get("outcome")][:1]
    embed = job["outcome"]["embed"]
    assert embed["done"] is True and set(embed) == {"done", "seconds"}


def test_job_ids_count_nothing(tenants):
    import re

    started = tenants["carol"].post("/rescan", json={"embed": False})
    assert started.status_code == 202
    job = started.json().get("job") or started.json()
    ident = job["id"] if isinstance(job, dict) else job
    assert re.fullmatch(r"job-[0-9a-f]{12}", ident), ident     # not job-1, job-2, …


def test_a_failed_upload_is_deleted_only_by_who_may_change_its_scope(tenants):
    """A note whose compile failed has no page; its id still finds it for its writer, and
    for no one who could not see it (404 in the same words as for no note at all)."""
    upload = tenants["alice"].post("/upload", files=[
        ("files", ("broken.md", b"---\ntitle: [unclosed\n---\n# Broken\n", "text/markdown"))])
    note = upload.json()["documents"][0]
    assert note["compile"]["status"] == "failed"
    raw = tenants["base"] / "raw" / note["raw"]
    assert note["raw"].startswith("acme/personal/alice/") and raw.is_file()
    for other in ("bob", "carol", "anonymous"):
        assert tenants[other].delete(f"/documents/{note['id']}").status_code in (401, 404)
    assert raw.is_file()
    assert tenants["alice"].delete(f"/documents/{note['id']}").status_code == 200
    assert not raw.exists()


def test_a_note_an_agent_creates_is_embedded_once_its_searches_used_vectors(tenants):
    # With identities every search runs in a view; the workspace kept changed pages
    # embedded only once its own (the owner's) hybrid search had used vectors, so a note
    # created through POST /documents in a server only agents used was never embedded
    from click.testing import CliRunner

    from mindgraph.cli import cli

    base, alice = tenants["base"], tenants["alice"]
    result = CliRunner().invoke(cli, ["-C", str(base), "embed"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert alice.get("/smart_search", params={"q": "trunks"}).status_code == 200
    made = alice.post("/documents", json={"title": "Zeppelin hangar",
                                          "text": "The zeppelin hangar stores airships."})
    assert made.status_code == 200, made.text
    store = Mindgraph.open(base).vector_store()
    assert store.hashes(store_model(base)).get(made.json()["page"])
    found = alice.get("/smart_search", params={"q": "zeppelin hangar airships"}).json()
    first = found["results"][0]
    assert first["page"] == made.json()["page"] and "vector" in first["sources"]


def store_model(base):
    return Mindgraph.open(base).embedding_provider().model_version


def test_status_names_only_files_the_caller_sees(tenants):
    """A job compiles notes of the whole tenant: the file at hand (``current``) of bob's
    upload into his personal folder is named to bob, never to alice of the same tenant."""
    bob, alice = tenants["bob"], tenants["alice"]
    made = bob.post("/upload", files=[("files", ("Resignation letter.md", b"# Leaving\n\nBye.\n",
                                                 "text/markdown"))])
    assert made.status_code == 200, made.text
    raw = made.json()["documents"][0]["raw"]
    assert raw == "acme/personal/bob/api-notes/Resignation letter.md"
    assert raw in {j["current"] for j in bob.get("/status").json()["recent"]}
    seen_by_alice = alice.get("/status").json()
    assert seen_by_alice["recent"], "the tenant's jobs are still listed"
    assert "Resignation" not in json.dumps(seen_by_alice)
    stream = alice.get("/status", params={"stream": "true"})
    assert "Resignation" not in stream.text and "event: idle" in stream.text


def test_a_symlinked_scope_folder_gets_nothing_made_where_it_leads(tenants, tmp_path_factory):
    """bob's team folder is a symlink out of raw/: his upload is refused, and no api-notes/
    folder is made outside the workspace on the way (it was, before the refusal)."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (tenants["base"] / "raw" / "acme" / "team" / "ops").symlink_to(elsewhere)
    refused = tenants["bob"].post("/upload", data={"scope": "team", "team": "ops"},
                                  files=[("files", ("x.md", b"# x\n", "text/markdown"))])
    assert refused.status_code == 415 and "resolves outside raw/" in refused.json()["detail"]
    made = tenants["bob"].post("/documents", json={"title": "y", "text": "y", "scope": "team",
                                                   "team": "ops"})
    assert made.status_code == 415
    assert list(elsewhere.iterdir()) == []
