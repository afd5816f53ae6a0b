"""--min-trust and --fresh on search, hybrid search and context, over the CLI, REST and MCP;
every result shows its page's trust, and what a filter left out is said."""

from __future__ import annotations

import json

import anyio
from trust_support import LOCAL, plan_of
from fastapi.testclient import TestClient
from mcp import Client

from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app

QUERY = "sync plain"
VERIFIED = {"level": 2, "status": "verified", "freshness": "fresh", "stale": []}
UNVERIFIED = {"level": 0, "status": "unverified", "freshness": "unverified", "stale": []}


def _verify_sync(mg, base):
    plan = plan_of(mg, base, "Sync.md")
    assert mg(base, "verify", "--apply", plan["plan"], "--approve",
              plan["digest"]).exit_code == 0


def _pages(results):
    return sorted((r["page"], r["trust"]) for r in results)


def test_cli_search_shows_trust_and_min_trust_filters_saying_what_went(compiled, mg):
    _verify_sync(mg, compiled)
    every = json.loads(mg(compiled, "search", QUERY, "--json").output)
    assert _pages(every["results"]) == [("Plain.md", UNVERIFIED), ("Sync.md", VERIFIED)]
    assert every["degradation"] == []
    lines = mg(compiled, "search", QUERY).output.splitlines()
    assert [line.split(". ", 1)[1].split("  ")[0] for line in lines
            if line.endswith("[L2 verified, fresh]")] == ["Sync.md"]
    assert len([line for line in lines if line.strip().startswith(("1.", "2."))]) == 2
    trusted = json.loads(mg(compiled, "search", QUERY, "--min-trust", "L2", "--json").output)
    assert _pages(trusted["results"]) == [("Sync.md", VERIFIED)]
    assert trusted["degradation"] == [
        "--min-trust L2 left out 1 of 2 result(s): 1 below L2 or disputed"]
    none = mg(compiled, "search", QUERY, "--min-trust", "L3")
    assert "note: --min-trust L3 left out 2 of 2 result(s)" in none.output
    assert "No page matching 'sync plain' meets --min-trust L3." in none.output
    bad = mg(compiled, "search", QUERY, "--min-trust", "high")
    assert bad.exit_code == 2 and "give a level L0, L1, L2 or L3" in bad.output


def test_cli_fresh_leaves_out_a_page_that_changed_since_it_was_verified(compiled, mg):
    _verify_sync(mg, compiled)
    page = compiled / "wiki" / "Sync.md"
    page.write_text(page.read_text().replace("10 GB", "20 GB"))
    found = json.loads(mg(compiled, "search", QUERY, "--min-trust", "L2", "--fresh",
                          "--json").output)
    assert found["results"] == []
    assert found["degradation"] == ["--min-trust L2 --fresh left out 2 of 2 result(s): "
                                    "1 below L2 or disputed, 1 not fresh; none left: "
                                    "`mindgraph verify` raises pages' levels"]
    stale = json.loads(mg(compiled, "search", "sync", "--json").output)["results"][0]
    assert stale["trust"]["freshness"] == "stale" and \
        stale["trust"]["stale"] == ["content_changed"]


def test_cli_hybrid_search_and_context_filter_too(compiled, mg):
    _verify_sync(mg, compiled)
    hybrid = json.loads(mg(compiled, "search", "--hybrid", QUERY, "--min-trust", "L2",
                           "--json").output)
    assert _pages(hybrid["results"]) == [("Sync.md", VERIFIED)]
    assert any("left out 1 of 2" in note for note in hybrid["degradation"])
    context = json.loads(mg(compiled, "context", QUERY, "--min-trust", "L2", "--json").output)
    assert context["sources"] == ["Sync.md"] and context["trust"] == {"Sync.md": VERIFIED}
    empty = json.loads(mg(compiled, "context", QUERY, "--min-trust", "L3", "--json").output)
    assert empty["status"] == "empty" and "--min-trust L3 left out" in empty["detail"]


def test_rest_search_smart_search_and_context_take_min_trust_and_fresh(compiled, mg):
    _verify_sync(mg, compiled)
    client = TestClient(create_app(Mindgraph(load_settings(compiled))), base_url=LOCAL)
    every = client.get("/search", params={"q": QUERY}).json()
    assert _pages(every["results"]) == [("Plain.md", UNVERIFIED), ("Sync.md", VERIFIED)]
    kept = client.get("/search", params={"q": QUERY, "min_trust": "L2", "fresh": "true"}).json()
    assert _pages(kept["results"]) == [("Sync.md", VERIFIED)]
    assert kept["degradation"] == [
        "--min-trust L2 --fresh left out 1 of 2 result(s): 1 below L2 or disputed"]
    smart = client.get("/smart_search", params={"q": QUERY, "min_trust": "L2"}).json()
    assert _pages(smart["results"]) == [("Sync.md", VERIFIED)]
    context = client.get("/context", params={"situation": QUERY, "min_trust": "L2"}).json()
    assert context["sources"] == ["Sync.md"] and context["trust"]["Sync.md"] == VERIFIED
    bad = client.get("/search", params={"q": QUERY, "min_trust": "L7"})
    assert bad.status_code == 422 and "min_trust" in bad.text


def test_mcp_tools_take_min_trust_and_fresh(compiled, mg):
    _verify_sync(mg, compiled)
    server = create_mcp_server(Mindgraph(load_settings(compiled)))

    async def main():
        async with Client(server) as client:
            return [json.loads((await client.call_tool(name, args)).content[0].text)
                    for name, args in [
                        ("search", {"query": QUERY}),
                        ("search", {"query": QUERY, "min_trust": "L2", "fresh": True}),
                        ("smart_search", {"query": QUERY, "min_trust": "L2"}),
                        ("context", {"situation": QUERY, "min_trust": "L2"})]]

    every, kept, smart, context = anyio.run(main)
    assert _pages(every["results"]) == [("Plain.md", UNVERIFIED), ("Sync.md", VERIFIED)]
    assert _pages(kept["results"]) == [("Sync.md", VERIFIED)]
    assert kept["degradation"] == [
        "--min-trust L2 --fresh left out 1 of 2 result(s): 1 below L2 or disputed"]
    assert _pages(smart["results"]) == [("Sync.md", VERIFIED)]
    assert context["sources"] == ["Sync.md"] and context["trust"]["Sync.md"] == VERIFIED


def test_get_page_shows_the_trust_and_the_record_on_rest_and_mcp(compiled, mg):
    _verify_sync(mg, compiled)
    core = Mindgraph(load_settings(compiled))
    client = TestClient(create_app(core), base_url=LOCAL)
    page = client.get("/page", params={"page": "Sync.md"}).json()
    assert page["trust"] == VERIFIED
    assert page["frontmatter"]["verification"]["level"] == 2
    assert page["frontmatter"]["evidence"]["sources"][0]["ref"] == "raw:Sync.md"
    assert page["frontmatter"]["provenance"]["origin"] == "compiled_offline"
    assert client.get("/page", params={"page": "Plain.md"}).json()["trust"] == UNVERIFIED

    async def main():
        async with Client(create_mcp_server(core)) as client:
            result = await client.call_tool("get_page", {"page": "Sync.md"})
            return json.loads(result.content[0].text)

    got = anyio.run(main)
    assert got["trust"] == VERIFIED
    assert got["frontmatter"]["verification"]["status"] == "verified"
