"""No answer to an agent names the server's filesystem: every REST route and every MCP tool,
answers and errors alike, shows workspace-relative paths (the local CLI may show absolute
ones). Each test walks the whole API, so a new route or tool must be added here to pass."""

import json

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from mindgraph.core import Mindgraph
from mindgraph.serve.agent_paths import WorkspacePaths
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"


@pytest.fixture
def workspace(tmp_path):
    base = tmp_path / "ws"
    (base / "wiki").mkdir(parents=True)
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n")
    (base / "wiki" / "Catalog.md").write_text(
        "---\ntitle: Trunk Catalog\ndate: 2024-02-01\n---\nBookmarks of trunks. See "
        "[[Packing]].\n\n## Data\n```json\n{\"n\": 1}\n```\n")
    (base / "wiki" / "Packing.md").write_text("---\ntitle: Packing\n---\nBack to [[Catalog]]; "
                                              "trunks again. See [[Nowhere]].\n")
    (base / "raw").mkdir()
    (base / "raw" / "idea.md").write_text("# Idea\nA trunk with wheels, 2024-03-01.\n")
    (base / "code").mkdir()
    (base / "code" / "packing.py").write_text("def pack_trunk():\n    pass\n")
    return base


def leaks(base, text):
    """The forms of the workspace's absolute path found in ``text``."""
    forms = {str(base), str(base.resolve()), base.resolve().as_uri()}
    return sorted(f for f in forms if f in text)


def test_no_rest_route_shows_an_absolute_server_path(workspace):
    mg = Mindgraph.open(workspace)
    mg.embed()
    app = create_app(mg)
    client = TestClient(app, base_url=LOCAL)
    created = client.post("/documents", json={"title": "Fresh note", "text": "About trunks."})
    assert created.status_code == 200, created.text
    doc = created.json()["id"]
    other = client.get("/documents").json()["documents"][0]["id"]
    made = client.post("/links", json={"from": doc, "to": other, "kind": "related"})
    link = made.json()
    calls = [
        ("get", "/health", {}), ("get", "/stats", {}), ("get", "/page", {"page": "Catalog"}),
        ("get", "/page", {"page": "Nope"}), ("get", "/section", {"page": "Catalog",
                                                                  "section_id": "data"}),
        ("get", "/section", {"page": "Catalog", "section_id": "nope"}),
        ("get", "/extract", {"page": "Catalog"}), ("get", "/extract", {"page": "Packing"}),
        ("get", "/search", {"q": "trunks"}), ("get", "/smart_search", {"q": "trunks"}),
        ("get", "/context", {"situation": "packing trunks"}),
        ("get", "/related", {"page": "Catalog"}),
        ("get", "/path", {"source": "Catalog", "target": "Packing"}),
        ("get", "/communities", {}), ("get", "/check", {}), ("get", "/lint", {}),
        ("get", "/calibrate", {}), ("get", "/timeline", {"concept": "trunk"}),
        ("get", "/coverage", {"codebase": "code"}), ("get", "/coverage", {"codebase": "wiki"}),
        ("get", "/coverage", {"codebase": "../.."}), ("get", "/coverage", {"codebase": "nope"}),
        ("post", "/validate", {"json": {"text": "Trunks fold.", "evidence": ["Trunks fold."]}}),
        ("get", "/propagate/queue", {}),
        ("post", "/propagate/apply", {"json": {"plan": "0" * 16, "approve": "0" * 16}}),
        ("get", "/sync/status", {}), ("post", "/reindex", {"json": {"dry_run": True}}),
        ("get", "/documents", {}), ("get", f"/documents/{doc}", {}),
        ("get", "/documents/nope", {}), ("put", f"/documents/{doc}", {"json": {"tags": ["x"]}}),
        ("get", f"/documents/{doc}/links", {}),
        ("post", "/links/batch", {"json": {"links": [{"from": doc, "to": "nope",
                                                      "kind": "related"}]}}),
        ("delete", f"/links/{link['id']}", {}), ("delete", "/links/nope", {}),
        ("post", "/upload", {"files": [("files", ("up.md", b"# Up\ntrunks\n", "text/markdown"))]}),
        ("post", "/upload", {"files": [("files", ("up.exe", b"MZ", "application/x-binary"))]}),
        ("post", "/rescan", {"json": {}}), ("get", "/status", {}),
        ("get", "/dashboard/graph", {}), ("get", "/dashboard/page", {"page": "Catalog"}),
        ("get", "/dashboard/page", {"page": "Nope"}),
        ("get", "/dashboard/propagation", {}),
        ("get", "/dashboard/attachment", {"target": "nope.png", "page": "Catalog"}),
        ("get", "/dashboard/attachment", {"target": "../../etc/passwd"}),
        ("get", "/apps/projects", {}), ("post", "/apps/items", {"json": {"title": "Buy tape"}}),
        ("patch", "/apps/items/x1", {"json": {"append": "why: none"}}),
        ("get", "/triage", {"since": "2024-01-01"}),
        ("get", "/triage/relevance", {"item": "x1", "title": "Buy tape"}),
        ("delete", f"/documents/{doc}", {}),
    ]
    covered = {(m.upper(), p) for m, p, _ in calls} | {("POST", "/documents"), ("POST", "/links")}
    documented = {(m.upper(), p) for p, ops in app.openapi()["paths"].items() for m in ops}
    assert documented - {(m, p.replace(doc, "{doc_id}").replace(link["id"], "{link_id}")
                                            .replace("/apps/items/x1", "/apps/items/{item_id}"))
                         for m, p in covered} == set()
    found = {f"POST {r.url.path}": leaks(workspace, r.text) for r in (created, made)
             if leaks(workspace, r.text)}
    for method, path, options in calls:
        params = options if method == "get" and options else None
        extra = {k: v for k, v in options.items() if k in ("json", "files")}
        response = getattr(client, method)(path, params=params, **extra)
        assert response.status_code < 500, (path, response.text)
        if leaked := leaks(workspace, response.text):
            found[f"{method.upper()} {path} {response.status_code}"] = leaked
    assert found == {}
    # what they show instead: the same places, relative to the workspace
    assert client.get("/stats").json()["wiki"] == "wiki"
    assert client.get("/page", params={"page": "Catalog"}).json()["url"] == "wiki/Catalog.md"
    assert client.get("/coverage", params={"codebase": "code"}).json()["codebase"] == "code"
    assert "wiki holds no source files" in client.get("/coverage",
                                                      params={"codebase": "wiki"}).text


def test_a_sibling_folder_is_not_taken_for_the_workspace(tmp_path):
    paths = WorkspacePaths(tmp_path / "ws")
    assert paths.text(f"{tmp_path}/ws2/a, {tmp_path}/ws.bak, {tmp_path}/ws/a, {tmp_path}/ws.") \
        == f"{tmp_path}/ws2/a, {tmp_path}/ws.bak, a, .."


def test_no_mcp_tool_shows_an_absolute_server_path(workspace):
    mg = Mindgraph.open(workspace)
    mg.embed()
    server = create_mcp_server(mg)
    calls = [
        ("get_page", {"page": "Catalog"}), ("get_page", {"page": "Nope"}),
        ("list_sections", {"page": "Catalog"}),
        ("get_section", {"page": "Catalog", "section_id": "data"}),
        ("get_section", {"page": "Catalog", "section_id": "nope"}),
        ("backlinks", {"page": "Packing"}), ("timeline", {"concept": "trunk"}),
        ("extract", {"page": "Catalog"}), ("extract", {"page": "Packing"}),
        ("coverage", {"codebase": "code"}), ("coverage", {"codebase": "wiki"}),
        ("coverage", {"codebase": "../.."}), ("coverage", {"codebase": "nope"}),
        ("sync_status", {}), ("search", {"query": "trunks"}),
        ("smart_search", {"query": "trunks"}), ("related", {"page": "Catalog"}),
        ("communities", {}), ("path", {"source": "Catalog", "target": "Packing"}),
        ("stats", {}), ("lint", {}), ("calibrate", {}), ("propagation_queue", {}),
        ("approve_propagation", {"plan": "0" * 16, "approve": "0" * 16}),
        ("validate", {"text": "Trunks fold.", "evidence": ["Trunks fold."]}),
        ("context", {"situation": "packing trunks"}),
        ("search_documents", {"query": "trunks"}),
        ("create_document", {"title": "Fresh note", "text": "About trunks."}),
        ("link_documents", {"source": "Fresh note", "target": "Catalog", "kind": "related"}),
        ("link_documents", {"source": "Nope", "target": "Catalog", "kind": "related"}),
        ("list_app_projects", {}), ("create_item", {"title": "Buy tape"}),
        ("update_item", {"item": "x1", "append": "why: none"}),
        ("triage_completed", {"since": "2024-01-01"}),
        ("item_relevance", {"item": "x1", "title": "Buy tape"}),
    ]

    async def main():
        with anyio.fail_after(60):
            async with Client(server) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                answers = [(name, await client.call_tool(name, args)) for name, args in calls]
                return tools, answers

    tools, answers = anyio.run(main)
    assert tools - {name for name, _ in calls} == set()
    found = {}
    for name, result in answers:
        text = json.dumps([c.text for c in result.content]) + json.dumps(
            result.structured_content)
        if leaked := leaks(workspace, text):
            found[name] = leaked
    assert found == {}
