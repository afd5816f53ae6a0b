"""A ticket (serve/attachment_tickets.py) opens the one file it was signed for, as the
viewer who asked for the page, never another file the same embed would find later.

alice (acme) reads a shared note linking ``[[report.pdf]]``: it finds raw/acme/shared/
report.pdf, and her page's URL for it carries her ticket. She keeps a report.pdf of her own
in her personal folder. The ticket named only the embed's target and page, resolved again on
each request: once the shared file was gone (moved, deleted), the same URL — in her history,
pasted to a colleague as "the shared report" — opened her personal report.pdf, found by
name in her view, for whoever held it (as bob, with his own token, it is 404)."""

from __future__ import annotations

import html
import re

import pytest
from documents_support import compiled_tenants
from fastapi.testclient import TestClient

from mindgraph.core import Mindgraph
from mindgraph.scopes import Authenticator, Scopes
from mindgraph.serve.attachment_tickets import ticket_authorization, ticket_query
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
TOKENS = {name: f"{name}-token-" + "t" * 32 for name in ("alice", "bob", "owner")}
CONFIG = """\
embedding: {provider: hashing, dimension: 64}
serve: {token_env: TOKEN_OWNER}
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, teams: [search], token_env: TOKEN_ALICE}
    - {name: bob, tenant: acme, agent: bob, teams: [ops], token_env: TOKEN_BOB}
"""
SHARED = "acme/shared/Reading.md"
NOTES = {SHARED: "# Reading\n\nThe team's report: [[report.pdf]]\n"}
SHARED_PDF = b"%PDF-1.4 the shared report\n"
PRIVATE_PDF = b"%PDF-1.4 alice's own report\n"


@pytest.fixture
def served(tmp_path, monkeypatch):
    compiled_tenants(tmp_path, monkeypatch, CONFIG, NOTES, TOKENS)
    (tmp_path / "raw" / "acme" / "shared" / "report.pdf").write_bytes(SHARED_PDF)
    personal = tmp_path / "raw" / "acme" / "personal" / "alice"
    personal.mkdir(parents=True)
    (personal / "report.pdf").write_bytes(PRIVATE_PDF)
    mg = Mindgraph.open(tmp_path)
    yield tmp_path, TestClient(create_app(mg, TOKENS["owner"]), base_url=LOCAL)
    mg.close()


def _signed_url(client, who: str) -> str:
    page = client.get("/dashboard/page", params={"page": SHARED},
                      headers={"Authorization": f"Bearer {TOKENS[who]}"}).json()["html"]
    found = re.findall(r'href="(/dashboard/attachment\?target=report\.pdf[^"]*)"', page)
    assert len(found) == 1, page
    return html.unescape(found[0])


def test_a_ticket_opens_the_file_it_was_signed_for_not_one_found_later(served):
    base, client = served
    url = _signed_url(client, "alice")
    assert "ticket=" in url
    assert client.get(url).content == SHARED_PDF          # no header: the ticket stands in
    (base / "raw" / "acme" / "shared" / "report.pdf").unlink()
    # the embed now finds alice's own report.pdf (by name, in her view) ...
    mine = client.get("/dashboard/attachment", params={"target": "report.pdf", "page": SHARED},
                      headers={"Authorization": f"Bearer {TOKENS['alice']}"})
    assert mine.content == PRIVATE_PDF
    # ... and bob, with his own token, cannot open it
    assert client.get("/dashboard/attachment", params={"target": "report.pdf", "page": SHARED},
                      headers={"Authorization": f"Bearer {TOKENS['bob']}"}).status_code == 404
    # the URL that opened the shared file does not open it for whoever holds that URL
    response = client.get(url)
    assert response.status_code == 404 and PRIVATE_PDF not in response.content
    # nor with the file it names taken out or changed
    for changed in (re.sub(r"&file=[^&]*", "", url),
                    re.sub(r"&file=[^&]*", "&file=acme%2Fpersonal%2Falice%2Freport.pdf", url)):
        assert client.get(changed).status_code == 401, changed


def test_the_signed_fields_cannot_be_shifted_into_one_another():
    """The signed message joined the fields with newlines: a ticket for target "a" in page
    "b\\nc" was one for target "a\\nb" in page "c". Each field is its own now."""
    auth = Authenticator(Scopes(), ("MINDGRAPH_API_TOKEN", "k" * 40))
    header = "Bearer " + "k" * 40
    query = ticket_query(auth, header, "a.png", "b\nc.md", "x/a.png", now=1000.0)
    signed = dict(re.findall(r"&(\w+)=([^&]*)", query))
    shifted = (f"target=a.png%0Ab&page=c.md&file=x%2Fa.png&expires={signed['expires']}"
               f"&ticket={signed['ticket']}")
    assert ticket_authorization(auth, {"path": "/dashboard/attachment", "headers": [],
                                       "query_string": shifted.encode()}, now=1000.0) is None
    whole = (f"target=a.png&page=b%0Ac.md{query}").encode()
    assert ticket_authorization(auth, {"path": "/dashboard/attachment", "headers": [],
                                       "query_string": whole}, now=1000.0) == header.encode()
