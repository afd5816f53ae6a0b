"""Fact propagation stays inside what the changed page's readers may read: a tenant's note
never has its change drafted into another tenant's pages, a personal note never into its
tenant's team or shared pages — through the real entry points (documents REST API for the
agents, `mindgraph propagate` for the owner). A shared page's change still reaches its
tenant's team pages, and a correction the owner states reaches every page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tenant_workspace import owner, tenant_clients
TOKENS = {name: f"{name}-token-" + "x" * 32 for name in ("alice", "dave", "carol")}
CONFIG = """\
embedding: {provider: hashing, dimension: 64}
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, teams: [search], token_env: TOKEN_ALICE}
    - {name: dave, tenant: acme, agent: dave, teams: [search], token_env: TOKEN_DAVE}
    - {name: carol, tenant: globex, agent: carol, token_env: TOKEN_CAROL}
"""
FACT = "Vendor invoices are paid to account {n} at Acme Bank."
OWNED = {"acme/shared/Payments.md": "# Payments\n\n" + FACT.format(n="12345678") + "\n",
         "acme/team/search/Search payments.md":
             "# Search payments\n\n" + FACT.format(n="12345678") + "\n",
         "globex/shared/Globex payments.md":
             "# Globex payments\n\n" + FACT.format(n="12345678") + "\n"}


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """A compiled two-tenant workspace with the fact on a page of three scopes."""
    files = {f"raw/{rel}": text for rel, text in OWNED.items()}
    return tmp_path, tenant_clients(tmp_path, monkeypatch, TOKENS, CONFIG, files)


def wiki(base: Path) -> dict[str, bytes]:
    return {p.relative_to(base / "wiki").as_posix(): p.read_bytes()
            for p in sorted((base / "wiki").rglob("*.md"))}


def text_of(client: TestClient, title: str) -> str:
    """The page ``title`` as its reader gets it (GET /page, then each /section)."""
    page = client.get("/page", params={"page": title})
    assert page.status_code == 200, page.text
    return "\n".join(client.get("/section", params={"page": title, "section_id": x["id"]}
                                ).json()["text"] for x in page.json()["sections"])


def post(client: TestClient, title: str, number: str) -> dict:
    answer = client.post("/documents", json={"title": title, "text": FACT.format(n=number)})
    assert answer.status_code == 200, answer.text
    return answer.json()


def repost(client: TestClient, doc: dict, title: str, number: str) -> dict:
    assert client.delete(f"/documents/{doc['id']}").status_code == 200
    return post(client, title, number)


def test_a_tenants_or_an_agents_change_reaches_no_page_of_a_wider_audience(workspace):
    base, client = workspace
    carol = post(client["carol"], "Bank details", "12345678")
    alice = post(client["alice"], "Alice bank", "12345678")
    assert "baseline taken" in owner(base, "propagate").output
    repost(client["carol"], carol, "Bank details", "66666666")
    repost(client["alice"], alice, "Alice bank", "77777777")
    before = wiki(base)
    shown = owner(base, "propagate").output
    # both changes are found; neither is drafted into another tenant's, a team's or a shared
    # page: their readers may not read carol's or alice's personal notes
    assert "changed  globex/personal/carol/api-notes/Bank-details.md" in shown
    assert "changed  acme/personal/alice/api-notes/Alice-bank.md" in shown
    assert "2 change(s); no other page they may reach (scopes) states them: nothing to " \
           "queue." in shown
    for page in OWNED:
        assert page not in shown
    assert "0 plan(s) awaiting approval." in owner(base, "propagate", "--queue").output
    assert wiki(base) == before
    for who, title in (("alice", "Payments"), ("dave", "Search payments"),
                       ("carol", "Globex payments")):
        text = text_of(client[who], title)
        assert "12345678" in text and "66666666" not in text and "77777777" not in text


def test_a_shared_change_reaches_its_tenants_team_pages_and_a_stated_one_every_page(
        workspace):
    base, client = workspace
    post(client["carol"], "Bank details", "12345678")
    assert "baseline taken" in owner(base, "propagate").output
    (base / "raw" / "acme/shared/Payments.md").write_text(
        "# Payments\n\n" + FACT.format(n="87654321") + "\n")
    owner(base, "ingest")
    planned = json.loads(owner(base, "propagate", "--json").output)
    assert [c["page"] for c in planned["changes"]] == ["acme/shared/Payments.md"]
    assert [(t["path"], t["how"]) for t in planned["targets"]] == [
        ("acme/team/search/Search payments.md", "substituted")]       # not globex's pages
    owner(base, "propagate", "--apply", planned["plan"], "--approve", planned["digest"])
    assert "87654321" in text_of(client["dave"], "Search payments")
    carol = text_of(client["carol"], "Bank details")
    assert "12345678" in carol and "87654321" not in carol
    # the owner's own correction is no page's change: it reaches every tenant
    stated = owner(base, "propagate", "--old", FACT.format(n="12345678"),
                   "--new", FACT.format(n="99999999")).output
    targets = re.findall(r"^  substituted (.+)$", stated, re.M)
    assert targets == ["globex/personal/carol/api-notes/Bank-details.md",
                       "globex/shared/Globex payments.md"]
