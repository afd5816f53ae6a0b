"""The documents tools of the MCP server through a real SDK client (in-process, as the local
identity) and over streamable HTTP with identity tokens (each caller sees its own view)."""

import json

import anyio
import pytest
from documents_support import compiled_tenants
from mcp import Client
from starlette.testclient import TestClient

from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_http_app, create_mcp_server

TOKENS = {"alice": "a" * 40, "carol": "c" * 40}
CONFIG = """\
embedding: {provider: hashing, dimension: 64}
scopes:
  identities:
    - {name: alice, tenant: acme, agent: alice, teams: [search], token_env: TOKEN_ALICE}
    - {name: carol, tenant: globex, agent: carol, token_env: TOKEN_CAROL}
"""
NOTES = {"acme/shared/Trunk guide.md": "---\ntype: guide\n---\n# Trunk guide\n\n"
                                       "How to pack a trunk.\n",
         "acme/personal/alice/Trunk diary.md": "# Trunk diary\n\nMy trunk went to Kyoto.\n",
         "globex/shared/Globex trunk.md": "# Globex trunk\n\nAnother tenant's trunk.\n"}


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    return compiled_tenants(tmp_path, monkeypatch, CONFIG, NOTES, TOKENS)


def run_session(server, script):
    async def main():
        with anyio.fail_after(30):
            async with Client(server) as client:
                return await script(client)
    return anyio.run(main)


def payload(result):
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def test_search_documents_is_listed_with_its_arguments(workspace):
    server = create_mcp_server(Mindgraph.open(workspace))

    async def script(client):
        return {t.name: t for t in (await client.list_tools()).tools}

    tools = run_session(server, script)
    assert {"search_documents", "create_document", "link_documents"} <= set(tools)
    schema = tools["search_documents"].input_schema
    assert set(schema["properties"]) == {"query", "scope", "types", "max_results"}
    assert tools["search_documents"].annotations.read_only_hint is True
    assert tools["create_document"].annotations.read_only_hint is False


def test_local_search_filters_by_scope_and_type_then_create_and_link(workspace):
    server = create_mcp_server(Mindgraph.open(workspace))

    async def script(client):
        everything = payload(await client.call_tool("search_documents", {"query": "trunk"}))
        guides = payload(await client.call_tool("search_documents",
                                                {"query": "trunk", "types": ["guide"]}))
        personal = payload(await client.call_tool("search_documents",
                                                  {"query": "trunk", "scope": "personal",
                                                   "max_results": 1}))
        made = payload(await client.call_tool("create_document", {
            "title": "Zeppelin cargo", "text": "Zeppelins carry trunks over the sea."}))
        found = payload(await client.call_tool("search_documents",
                                               {"query": "zeppelins carry"}))
        link = payload(await client.call_tool("link_documents", {
            "source": "Zeppelin cargo", "target": "acme/shared/Trunk guide.md",
            "kind": "depends_on", "context": "Pack before flying."}))
        back = payload(await client.call_tool("backlinks", {"page": "Trunk guide"}))
        bad = await client.call_tool("link_documents", {"source": "Zeppelin cargo",
                                                        "target": "No such page",
                                                        "kind": "related"})
        return everything, guides, personal, made, found, link, back, bad

    everything, guides, personal, made, found, link, back, bad = run_session(server, script)
    assert {r["page"] for r in everything["results"]} == set(NOTES)     # local: every page
    assert [r["page"] for r in guides["results"]] == ["acme/shared/Trunk guide.md"]
    assert [r["page"] for r in personal["results"]] == ["acme/personal/alice/Trunk diary.md"]
    assert personal["results"][0]["id"] and personal["results"][0]["section_id"] == "lead"
    assert made["searchable"] is True and made["raw"] == "api-notes/Zeppelin-cargo.md"
    assert found["results"][0]["page"] == "api-notes/Zeppelin-cargo.md"
    assert link["kind"] == "depends_on" and link["origin"] == "manual"
    assert ("api-notes/Zeppelin-cargo.md", "depends_on") in {
        (b["page"], b["relation"]) for b in back["backlinks"]}
    assert bad.is_error and "no document" in bad.content[0].text


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "pytest", "version": "0"}}}


def call_over_http(client, token, tool, arguments):
    """One MCP session over streamable HTTP: initialize, then one tool call; its result."""
    headers = {"Accept": "application/json, text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    opened = client.post("/mcp", json=INITIALIZE, headers=headers)
    assert opened.status_code == 200, opened.text
    headers |= {"mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18"}
    client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers=headers)
    answer = client.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                       "params": {"name": tool, "arguments": arguments}},
                         headers=headers)
    data = [line[6:] for line in answer.text.splitlines() if line.startswith("data: ")]
    return json.loads(data[-1])["result"]


def test_over_http_each_token_sees_its_own_view(workspace):
    mg = Mindgraph.open(workspace)
    app = create_http_app(create_mcp_server(mg), scopes=mg.scopes)
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        alice = call_over_http(client, TOKENS["alice"], "search_documents", {"query": "trunk"})
        carol = call_over_http(client, TOKENS["carol"], "search_documents", {"query": "trunk"})
        # without a token the server refuses the session itself (401), before any tool
        nobody = client.post("/mcp", json=INITIALIZE,
                             headers={"Accept": "application/json, text/event-stream"})
        wrote = call_over_http(client, TOKENS["carol"], "create_document",
                               {"title": "Carol note", "text": "A globex trunk list."})
    assert sorted(r["page"] for r in alice["structuredContent"]["results"]) == [
        "acme/personal/alice/Trunk diary.md", "acme/shared/Trunk guide.md"]
    assert [r["page"] for r in carol["structuredContent"]["results"]] == [
        "globex/shared/Globex trunk.md"]
    assert nobody.status_code == 401 and "Authorization: Bearer" in nobody.text
    assert wrote["structuredContent"]["raw"] == "globex/personal/carol/api-notes/Carol-note.md"


@pytest.mark.parametrize("backend", ["embedded", "pgvector"])
def test_rescan_embeds_then_search_finds_by_meaning_in_the_view_on_both_stores(
        workspace, backend, request, monkeypatch):
    """A REST rescan (compile + embed) as alice, then search_documents over HTTP: the vector
    retriever takes part, and each identity still gets only its own view."""
    from fastapi.testclient import TestClient as RestClient

    from mindgraph.serve.rest import create_app

    if backend == "pgvector":
        monkeypatch.setenv("MINDGRAPH_PG_DSN", request.getfixturevalue("pg_dsn"))
        (workspace / "mindgraph.yml").write_text(
            CONFIG + "store: {backend: pgvector, table: mg_test_documents}\n")
    rest = RestClient(create_app(Mindgraph.open(workspace)), base_url="http://127.0.0.1:8765",
                      headers={"Authorization": f"Bearer {TOKENS['alice']}"})
    assert rest.post("/rescan").status_code == 202
    for _ in range(400):
        status = rest.get("/status").json()
        if not status["busy"]:
            break
        anyio.run(anyio.sleep, 0.05)
    job = status["recent"][0]
    assert job["phase"] == "done", job
    assert job["outcome"]["embed"]["done"] is True     # an agent sees no workspace counts
    mg = Mindgraph.open(workspace)
    app = create_http_app(create_mcp_server(mg), scopes=mg.scopes)
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        alice = call_over_http(client, TOKENS["alice"], "search_documents",
                               {"query": "packing a trunk", "max_results": 10})
        carol = call_over_http(client, TOKENS["carol"], "search_documents",
                               {"query": "packing a trunk", "max_results": 10})
    hits = alice["structuredContent"]["results"]
    assert {h["page"] for h in hits} <= {"acme/personal/alice/Trunk diary.md",
                                        "acme/shared/Trunk guide.md"}
    assert hits[0]["page"] == "acme/shared/Trunk guide.md"
    assert any("vector" in h["retrievers"] for h in hits)
    assert {h["page"] for h in carol["structuredContent"]["results"]} <= {
        "globex/shared/Globex trunk.md"}
