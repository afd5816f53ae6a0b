"""The MCP server through real MCP clients: the SDK's client over stdio (a spawned
`python -m mindgraph mcp`), in-process, and the streamable HTTP app behind its bearer token."""

import json
import sys

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from starlette.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_http_app, create_mcp_server

WRITE_TOOLS = {"approve_propagation", "create_document", "link_documents", "create_item",
               "update_item"}
CORE_TOOLS = {"get_page", "list_sections", "get_section", "backlinks", "timeline", "extract",
              "coverage"}


def make_workspace(root):
    wiki = root / "wiki"
    wiki.mkdir()
    (wiki / "Catalog.md").write_text(
        "---\ntitle: Trunk Catalog\ndate: 2024-02-01\naliases: [Trunk list]\n---\n"
        "Bookmarks of trunks. See [[Packing]].\n\n## Data\n```json\n{\"n\": 1}\n```\n\n"
        "### Sizes\nSmall and large trunks.\n")
    (wiki / "Packing.md").write_text(
        "---\ntitle: Packing\ndate: 2024-03-05\n---\nBack to [[Catalog]]; bookmarks again. "
        "Call `pack_trunk()`. See [[Nowhere]].\n")
    (root / "code").mkdir()
    (root / "code" / "packing.py").write_text("def pack_trunk():\n    pass\n")
    (root / "code" / "unpacking.py").write_text("def unpack():\n    pass\n")
    return root


@pytest.fixture
def workspace(tmp_path):
    return make_workspace(tmp_path)


@pytest.fixture
def mg(workspace):
    return Mindgraph(settings_from_dict({}, base_dir=workspace))


def run_session(server, script, timeout=30):
    """Connect a real SDK client to ``server`` and return what ``script(client)`` returns."""
    async def main():
        with anyio.fail_after(timeout):
            async with Client(server) as client:
                return await script(client)
    return anyio.run(main)


def payload(result):
    """The JSON object a successful tool call returned (text block and structured copy)."""
    assert not result.is_error, result.content[0].text
    data = json.loads(result.content[0].text)
    assert result.structured_content == data
    return data


# -- over stdio: one spawned server, one scripted session ------------------------------------


@pytest.fixture(scope="module")
def stdio_session(tmp_path_factory):
    """Run `python -m mindgraph mcp -C <workspace>` and talk to it over stdio."""
    workspace = make_workspace(tmp_path_factory.mktemp("stdio"))
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "mindgraph", "mcp", "-C", str(workspace)])

    async def script(client):
        return {
            "tools": (await client.list_tools()).tools,
            "page": await client.call_tool("get_page", {"page": "trunk catalog"}),
            "section": await client.call_tool("get_section",
                                              {"page": "Catalog.md", "section_id": "data"}),
            "timeline": await client.call_tool("timeline", {"concept": "bookmarks"}),
            "unknown": await client.call_tool("get_page", {"page": "Nope"}),
            "too_many": await client.call_tool("timeline", {"concept": "x", "limit": 10_000}),
        }

    results = run_session(params, script)
    log = Mindgraph(settings_from_dict({}, base_dir=workspace)).usage_log
    results["usage"] = list(log.lines())
    return results


def test_stdio_lists_tools_read_only_with_schemas(stdio_session):
    tools = {t.name: t for t in stdio_session["tools"]}
    assert CORE_TOOLS <= set(tools)
    for tool in tools.values():
        # every tool reads only, but the one that applies a plan approved by its digest and
        # the documents API's two writers (which add to the wiki and delete nothing) and the
        # note app's two (which add to or change an item in the app)
        assert tool.annotations.read_only_hint is (tool.name not in WRITE_TOOLS), tool.name
        assert tool.annotations.destructive_hint is False, tool.name
        assert tool.description and len(tool.description) > 40, tool.name
    assert "digest" in tools["approve_propagation"].description
    page_schema = tools["get_page"].input_schema
    assert page_schema["required"] == ["page"]
    assert page_schema["properties"]["page"]["minLength"] == 1
    limit = tools["timeline"].input_schema["properties"]["limit"]
    assert (limit["type"], limit["minimum"], limit["maximum"]) == ("integer", 1, 200)
    assert tools["extract"].input_schema["properties"]["block"]["maximum"] == 100


def test_stdio_get_page_cites_sections_and_links(stdio_session):
    page = payload(stdio_session["page"])
    assert page["path"] == "Catalog.md"
    assert page["title"] == "Trunk Catalog"
    assert [s["id"] for s in page["sections"]] == ["lead", "data", "data/sizes"]
    assert page["links_to"] == ["Packing.md"]
    assert page["linked_from"] == ["Packing.md"]
    assert page["text"].startswith("Bookmarks of trunks.")


def test_stdio_get_section_and_timeline(stdio_session):
    section = payload(stdio_session["section"])
    assert (section["page"], section["id"], section["heading"]) == ("Catalog.md", "data", "Data")
    assert section["children"] == ["data/sizes"]
    assert '{"n": 1}' in section["text"] and "Small and large" not in section["text"]
    timeline = payload(stdio_session["timeline"])
    assert [(e["date"], e["path"]) for e in timeline["entries"]] == [
        ("2024-02-01", "Catalog.md"), ("2024-03-05", "Packing.md")]


def test_stdio_errors_are_tool_errors_with_the_message(stdio_session):
    unknown = stdio_session["unknown"]
    assert unknown.is_error
    assert "No page named 'Nope'" in unknown.content[0].text
    too_many = stdio_session["too_many"]
    assert too_many.is_error
    assert "limit" in too_many.content[0].text


def test_stdio_calls_are_logged(stdio_session):
    lines = stdio_session["usage"]
    assert {line["interface"] for line in lines} == {"mcp"}
    assert [line["intent"] for line in lines] == ["get_page", "get_section", "timeline",
                                                  "get_page"]
    assert lines[0]["query"] == "trunk catalog"
    assert lines[0]["top"] == ["Catalog.md"]
    assert lines[3]["results"] == 0 and lines[3]["error"] == "NotFoundError"


# -- in-process ------------------------------------------------------------------------------


async def _names(client):
    return {t.name for t in (await client.list_tools()).tools}


def test_long_text_is_cut_with_a_pointer(mg):
    async def script(client):
        return (await client.call_tool("get_page", {"page": "Catalog", "max_chars": 8}),
                await client.call_tool("get_section", {"page": "Catalog", "section_id": "nope"}))

    page, missing = run_session(create_mcp_server(mg), script)
    data = payload(page)
    assert data["text"] == "Bookmark" and data["truncated"] is True
    assert "get_section(page='Catalog.md', section_id='lead')" in data["more"]   # where it cut
    assert data["frontmatter"] == {"date": "2024-02-01"}        # what the outline does not say
    assert missing.is_error
    assert "has no section 'nope'" in missing.content[0].text
    assert "data/sizes" in missing.content[0].text  # the ids it does have


def test_backlinks_extract_coverage(mg):
    async def script(client):
        return [await client.call_tool(name, args) for name, args in [
            ("backlinks", {"page": "Packing"}),
            ("extract", {"page": "Catalog"}),
            ("extract", {"page": "Packing"}),
            ("list_sections", {"page": "Trunk list"}),
            ("coverage", {"codebase": "code"}),
            ("coverage", {"codebase": "../.."}),
        ]]

    links, data, no_data, sections, cov, escape = run_session(create_mcp_server(mg), script)
    links = payload(links)
    assert [b["page"] for b in links["backlinks"]] == ["Catalog.md"]
    assert [(o["target"], o["status"]) for o in links["outgoing"]] == [
        ("Catalog", "resolved"), ("Nowhere", "missing")]
    assert payload(data)["data"] == {"n": 1}
    assert no_data.is_error and "no ```json or ```yaml block" in no_data.content[0].text
    assert [s["lines"] for s in payload(sections)["sections"]] == [[6, 7], [8, 12], [13, 15]]
    cov = payload(cov)
    assert (cov["total"], cov["covered"]) == (2, 1)
    assert cov["uncovered"] == ["unpacking.py"]
    assert escape.is_error and "not a folder inside the workspace" in escape.content[0].text


def test_search_and_graph_tools_over_the_real_core(mg):
    async def script(client):
        names = await _names(client)
        calls = [await client.call_tool(name, args) for name, args in [
            ("search", {"query": "trunks", "limit": 1}),
            ("related", {"page": "Packing", "depth": 2}),
            ("communities", {}),
            ("path", {"source": "Catalog", "target": "Packing"}),
            ("path", {"source": "Catalog", "target": "Nope"}),
            ("smart_search", {"query": "trunk catalog sizes", "limit": 2}),
            ("context", {"situation": "I am packing trunks"}),
        ]]
        return names, calls

    names, (search, related, communities, path, no_path, smart, context) = run_session(
        create_mcp_server(mg), script)
    answer = payload(smart)
    assert answer["results"][0]["page"] == "Catalog.md"
    assert answer["intent"]["name"] and answer["degradation"]   # no vectors embedded here
    block = payload(context)
    assert block["status"] == "ok" and "Catalog.md" in block["sources"]
    assert {"search", "related", "communities", "path"} <= names
    hits = payload(search)["results"]
    assert len(hits) == 1 and hits[0]["page"] == "Catalog.md" and hits[0]["score"] > 0
    assert [n["path"] for n in payload(related)["related"]] == ["Catalog.md"]
    groups = payload(communities)["communities"]
    assert sorted(m for g in groups for m in g["members"]) == ["Catalog.md", "Packing.md"]
    assert payload(path) == {"path": ["Catalog.md", "Packing.md"], "steps": [
        {"from": "Catalog.md", "to": "Packing.md", "direction": "both"}]}
    assert no_path.is_error and "No page named 'Nope'" in no_path.content[0].text
    logged = list(mg.usage_log.lines())
    assert (logged[0]["intent"], logged[0]["top"]) == ("search", ["Catalog.md"])


def test_path_coverage_and_context_are_logged_with_what_they_found(mg):
    from mindgraph.usage import summarise

    async def script(client):
        return [await client.call_tool(name, args) for name, args in [
            ("path", {"source": "Catalog", "target": "Packing"}),
            ("coverage", {"codebase": "code"}),
            ("context", {"situation": "I am packing trunks"}),
            ("search", {"query": "trunks"}),
            ("stats", {}),
            ("search", {"query": "zeppelin"}),
        ]]

    calls = run_session(create_mcp_server(mg), script)
    assert not any(call.is_error for call in calls)
    logged = {line["intent"]: line for line in mg.usage_log.lines()}
    assert (logged["path"]["results"], logged["path"]["top"]) == (2, ["Catalog.md",
                                                                     "Packing.md"])
    assert (logged["coverage"]["results"], logged["coverage"]["kind"]) == (2, "lookup")
    sources = payload(calls[2])["sources"]
    assert logged["context"]["results"] == len(sources) >= 1
    assert logged["context"]["kind"] == "query" and "Catalog.md" in logged["context"]["top"]
    summary = summarise(mg.usage_log.lines())
    assert summary["zero_result_queries"] == [{"query": "zeppelin", "count": 1}]
    assert (summary["queries"], summary["lookups"]) == (3, 3)


# -- streamable HTTP and the CLI -------------------------------------------------------------

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "pytest", "version": "0"}}}
HEADERS = {"Accept": "application/json, text/event-stream"}


def test_http_needs_the_bearer_token(mg):
    app = create_http_app(create_mcp_server(mg), token="s3cret")
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        missing = client.post("/mcp", json=INITIALIZE, headers=HEADERS)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == "Bearer"
        wrong = client.post("/mcp", json=INITIALIZE,
                            headers=HEADERS | {"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        ok = client.post("/mcp", json=INITIALIZE,
                         headers=HEADERS | {"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200
        assert '"name":"mindgraph"' in ok.text.replace(" ", "")


def test_http_without_token_on_loopback_answers(mg):
    app = create_http_app(create_mcp_server(mg))
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        assert client.post("/mcp", json=INITIALIZE, headers=HEADERS).status_code == 200


def test_http_a_request_before_initialize_is_told_to_send_initialize_first(mg):
    """The SDK answered 400 "Bad Request: Missing session ID" (with the id of a session it had
    opened and discarded at once), and for a session it does not hold 404 "Session not found":
    neither said what to do. The answer now names it, as MCP over stdio does."""
    app = create_http_app(create_mcp_server(mg))
    early = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        first = client.post("/mcp", json=early, headers=HEADERS)
        assert first.status_code == 400 and "mcp-session-id" not in first.headers
        error = first.json()["error"]
        assert first.json()["id"] == 1 and error["code"] == -32600
        assert error["message"].startswith("this request came before 'initialize': an MCP "
                                           "client sends 'initialize'")
        assert "Mcp-Session-Id header of initialize's answer" in error["message"]
        assert error["data"] == {"method": "tools/list", "send_first": "initialize"}
        gone = client.post("/mcp", json={**early, "id": 2},
                           headers=HEADERS | {"mcp-session-id": "0123abcd"})
        assert gone.status_code == 404
        assert gone.json()["error"]["message"].startswith(
            "Session not found: the Mcp-Session-Id names no session open on this server")
        assert "send 'initialize' again" in gone.json()["error"]["message"]
        opened = client.post("/mcp", json=INITIALIZE, headers=HEADERS)
        assert opened.status_code == 200
        listed = client.post("/mcp", json=early, headers=HEADERS | {
            "mcp-session-id": opened.headers["mcp-session-id"]})
        assert listed.status_code == 200 and '"name":"search"' in listed.text


def test_cli_refuses_public_http_without_token(workspace, monkeypatch):
    monkeypatch.delenv("MINDGRAPH_API_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["mcp", "-C", str(workspace), "--transport", "http",
                                      "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "MINDGRAPH_API_TOKEN" in result.output


def test_cli_needs_a_wiki(tmp_path):
    result = CliRunner().invoke(cli, ["mcp", "-C", str(tmp_path)])
    assert result.exit_code == 2 and "not a mindgraph workspace" in result.output
    (tmp_path / "mindgraph.yml").write_text("serve:\n  port: 8799\n")
    result = CliRunner().invoke(cli, ["mcp", "-C", str(tmp_path)])
    assert result.exit_code == 1
    assert "does not exist" in result.output


def test_communities_are_capped_largest_first():
    from mindgraph.graph.communities import Community
    from mindgraph.serve.mcp_results import communities_result

    found = [Community(0, "Small", "s.md", ("s.md",)),
             Community(1, "Big", "b0.md", tuple(f"b{i}.md" for i in range(50)))]
    result = communities_result(found, limit=1, members=3)
    assert result["count"] == 2 and len(result["communities"]) == 1
    big = result["communities"][0]
    assert (big["name"], big["members"], big["more_members"]) == \
        ("Big", ["b0.md", "b1.md", "b2.md"], 47)


def test_search_results_are_brief_unless_verbose(mg):
    async def script(client):
        return [await client.call_tool(name, args) for name, args in [
            ("search", {"query": "trunks"}), ("search", {"query": "trunks", "verbose": True}),
            ("smart_search", {"query": "trunks"}),
            ("smart_search", {"query": "trunks", "verbose": True})]]

    brief, full, smart_brief, smart_full = (payload(r) for r in run_session(
        create_mcp_server(mg), script))
    hit, detailed = brief["results"][0], full["results"][0]
    assert {"page", "section_id", "heading", "snippet", "score"} <= set(hit)
    assert not {"scores", "matched_terms", "why"} & set(hit)
    assert {"scores", "matched_terms", "why"} <= set(detailed)
    assert "timings_ms" not in smart_brief and "timings_ms" in smart_full
    assert "sources" not in smart_brief["results"][0] and \
        smart_brief["results"][0]["retrievers"]
    assert set(smart_brief["intent"]) == {"name", "confidence"}


def test_a_brief_search_skips_only_the_why_it_leaves_out(mg):
    # the field-by-field why is not computed for a brief answer (a fifth of a warm call),
    # and nothing else about the hits changes
    async def script(client):
        return [await client.call_tool("search", {"query": "trunks", "verbose": verbose})
                for verbose in (False, True)]

    brief, full = (payload(r) for r in run_session(create_mcp_server(mg), script))
    dropped = ("scores", "matched_terms", "why", "rank")
    assert brief["results"] == [{k: v for k, v in hit.items() if k not in dropped}
                                for hit in full["results"]]
    unexplained = mg.search("trunks", why=False)
    assert [(h.path, h.section_id, h.snippet, h.score) for h in unexplained] == \
        [(h.path, h.section_id, h.snippet, h.score) for h in mg.search("trunks")]
    assert all(h.fields == {} and h.matched == () and h.why == "" for h in unexplained)


def test_keyword_hits_say_which_retriever_found_them(mg):
    async def script(client):
        return [await client.call_tool("search", {"query": "trunks", "verbose": verbose})
                for verbose in (False, True)]

    for answer in map(payload, run_session(create_mcp_server(mg), script)):
        assert answer["results"]
        assert all(hit["retrievers"] == ["keyword"] for hit in answer["results"])


def test_refused_arguments_and_outside_folders_say_what_works(mg):
    calls = [("search", {}), ("search", {"query": 5}), ("get_section", {"page": "Catalog"}),
             ("timeline", {"concept": "x", "limit": 10_000}),
             ("timeline", {"concept": "x", "since": "2024"}),
             ("extract", {"page": "Catalog", "language": "xml"}),
             ("coverage", {"codebase": "../mindgraph"}),
             ("coverage", {"codebase": "code"})]

    async def script(client):
        return [await client.call_tool(name, args) for name, args in calls]

    *refused, outside, inside = run_session(create_mcp_server(mg), script)
    texts = [r.content[0].text for r in refused]
    assert all(r.is_error for r in refused)
    assert texts == [
        "search needs 'query' (a string).",
        "search: 'query' must be a string of 1 to 1000 characters, not 5.",
        "get_section needs 'section_id' (a string).",
        "timeline: 'limit' must be an integer from 1 to 200, not 10000.",
        "timeline: 'since' must be a string in the form YYYY-MM-DD, not '2024'.",
        "extract: 'language' must be one of 'json', 'yaml', not 'xml'."]
    assert outside.is_error
    assert "is not a folder inside the workspace" in outside.content[0].text
    assert "run `mindgraph coverage ../mindgraph` for code outside it" in outside.content[0].text
    assert payload(inside)["total"] == 2


def test_communities_tool_leaves_out_lone_pages_unless_asked(mg, workspace):
    (workspace / "wiki" / "Lone.md").write_text("# Lone\n\nNo links here.\n")

    async def script(client):
        return [await client.call_tool("communities", args)
                for args in ({}, {"min_size": 1})]

    default, every = run_session(create_mcp_server(mg), script)
    assert [c["size"] for c in payload(default)["communities"]] == [2]
    assert sorted(c["size"] for c in payload(every)["communities"]) == [1, 2]


def test_an_empty_answer_from_a_wiki_never_compiled_says_so_to_agents(tmp_path):
    """`init` then an agent's search: {"results": []}, which an agent reads as "the notes do
    not say" when they were only never compiled. MCP search and REST /search now say it."""
    from mindgraph.serve.rest import create_app

    notes = tmp_path / "vault"
    notes.mkdir()
    (notes / "Sync.md").write_text("# Sync\nSync keeps notes the same on every device.\n")
    base = tmp_path / "kb"
    assert CliRunner().invoke(cli, ["init", str(base), "--raw", str(notes)]).exit_code == 0
    said = ("the wiki has no pages yet: its notes have not been compiled (`mindgraph ingest` "
            "compiles them)")

    async def script(client):
        return await client.call_tool("search", {"query": "sync"})

    core = Mindgraph(settings_from_dict({"paths": {"raw": "../vault"}}, base_dir=base))
    assert payload(run_session(create_mcp_server(core), script)) == {"results": [],
                                                                    "degradation": [said]}
    with TestClient(create_app(core), base_url="http://127.0.0.1:8765") as client:
        answer = client.get("/search", params={"q": "sync"}).json()
    assert (answer["count"], answer["degradation"]) == (0, [said])
    assert CliRunner().invoke(cli, ["ingest", "-C", str(base)]).exit_code == 0
    compiled = Mindgraph(settings_from_dict({"paths": {"raw": "../vault"}}, base_dir=base))
    found = payload(run_session(create_mcp_server(compiled), script))
    assert found["results"][0]["page"] == "Sync.md" and "degradation" not in found
    nothing = payload(run_session(create_mcp_server(compiled), lambda client: client.call_tool(
        "search", {"query": "zebra"})))
    assert nothing == {"results": []}          # a wiki with pages: no match is no match


def test_an_empty_raw_folder_is_named_with_what_to_put_there_not_run_ingest(tmp_path):
    """With raw/ empty every surface said the notes were never compiled, run ingest: an
    ingest that then compiled nothing. The CLI, REST, MCP and the dashboard now name the raw
    folder and what to put there."""
    from mindgraph.serve.rest import create_app

    notes = tmp_path / "vault"
    notes.mkdir()
    base = tmp_path / "kb"
    assert CliRunner().invoke(cli, ["init", str(base), "--raw", str(notes)]).exit_code == 0
    empty = (f"The wiki has no pages yet: {notes} holds no notes. Put Markdown files there "
             f"(.md, .markdown or .txt), then run `mindgraph ingest`.")
    for argv in (["search", "sync"], ["check"], ["graph", "hubs"], ["get", "Sync"],
                 ["links", "Sync"], ["graph", "path", "Sync", "Sync"]):
        said = CliRunner().invoke(cli, [*argv, "-C", str(base)])
        assert empty in said.output and "never compiled" not in said.output, (argv, said.output)
    to_agents = ("the wiki has no pages yet: its raw folder (../vault) holds no notes; put "
                 "Markdown files there (.md, .markdown or .txt), then run `mindgraph ingest`")
    core = Mindgraph(settings_from_dict({"paths": {"raw": "../vault"}}, base_dir=base))
    assert payload(run_session(create_mcp_server(core), lambda client: client.call_tool(
        "search", {"query": "sync"}))) == {"results": [], "degradation": [to_agents]}
    with TestClient(create_app(core), base_url="http://127.0.0.1:8765") as client:
        assert client.get("/search", params={"q": "sync"}).json()["degradation"] == [to_agents]
        assert client.get("/dashboard/graph").json()["notes"] == [to_agents]
        missing = client.get("/page", params={"name": "Sync"})
        assert missing.status_code == 404 and "holds no notes" in missing.text, missing.text
    (notes / "Sync.md").write_text("# Sync\nSync keeps notes the same on every device.\n")
    never = CliRunner().invoke(cli, ["search", "sync", "-C", str(base)]).output
    assert "were never compiled" in never and "holds no notes" not in never


def test_a_hybrid_answer_from_a_wiki_never_compiled_says_so_to_agents(tmp_path):
    """Hybrid search on a wiki with no page said only "the wiki has no pages to embed yet"
    (why vectors are missing): REST /smart_search and MCP smart_search now also say why the
    answer is empty, as keyword search does."""
    from mindgraph.serve.mcp_results import NO_PAGES
    from mindgraph.serve.rest import create_app

    notes = tmp_path / "vault"
    notes.mkdir()
    (notes / "Sync.md").write_text("# Sync\nSync keeps notes the same on every device.\n")
    base = tmp_path / "kb"
    assert CliRunner().invoke(cli, ["init", str(base), "--raw", str(notes)]).exit_code == 0
    config = {"paths": {"raw": "../vault"}, "embedding": {"provider": "hashing"}}
    core = Mindgraph(settings_from_dict(config, base_dir=base))
    said = payload(run_session(create_mcp_server(core), lambda client: client.call_tool(
        "smart_search", {"query": "sync"})))
    assert not said.get("results") and NO_PAGES in said["degradation"]
    with TestClient(create_app(core), base_url="http://127.0.0.1:8765") as client:
        answer = client.get("/smart_search", params={"q": "sync"}).json()
    assert answer["results"] == [] and NO_PAGES in answer["degradation"]
    assert CliRunner().invoke(cli, ["ingest", "-C", str(base)]).exit_code == 0
    compiled = Mindgraph(settings_from_dict(config, base_dir=base))
    nothing = payload(run_session(create_mcp_server(compiled), lambda client: client.call_tool(
        "smart_search", {"query": "zebra"})))
    assert NO_PAGES not in nothing.get("degradation", [])
