"""The dashboard's routes through the real app: the page and its files behind the Guard with
a strict CSP, the graph and rendered-page endpoints behind the token like every data route."""

import hashlib

from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.dashboard import CSP
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
TOKEN = "d" * 40
DOC_ID_OF_PACKING = hashlib.sha256(b"page\nPacking.md").hexdigest()[:16]   # the documents API id


def _client(workspace, token=None, host=None):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    return TestClient(create_app(mg, token, host), base_url=LOCAL)


def test_the_dashboard_page_is_served_at_the_root_with_a_strict_csp(workspace):
    client = _client(workspace)
    response = client.get("/")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    assert response.headers["content-security-policy"] == CSP
    assert "script-src 'self';" in CSP and "unsafe-inline" not in CSP
    assert response.headers["x-content-type-options"] == "nosniff"
    assert '<script src="/dashboard/static/dashboard.js" defer></script>' in response.text
    script = client.get("/dashboard/static/vendor/sigma.min.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert script.headers["content-security-policy"] == CSP
    assert client.head("/").status_code == 200


def test_only_the_dashboards_own_files_are_served(workspace):
    client = _client(workspace)
    for name in ("nope.js", "../render.py", "..%2Frender.py", "%2e%2e/views.py",
                 "vendor/../../render.py"):
        response = client.get(f"/dashboard/static/{name}")
        assert response.status_code == 404, name
        assert b"def " not in response.content


def test_the_graph_endpoint_gives_nodes_with_facets_and_typed_edges(workspace):
    (workspace / "wiki" / "Packing.md").write_text(
        "---\ntype: guide\nscope: team\ntags: [travel]\nrelated: [Home]\n---\n# Packing\n\n"
        "Fold the trunks.\n")
    response = _client(workspace).get("/dashboard/graph")
    assert response.status_code == 200
    assert response.headers["content-security-policy"] == CSP
    body = response.json()
    nodes = {n["id"]: n for n in body["nodes"]}
    assert set(nodes) == {"Home.md", "Packing.md"}
    assert nodes["Packing.md"] | {"community": None} == {
        "id": "Packing.md", "doc": DOC_ID_OF_PACKING, "title": "Packing", "type": "guide", "tags": ["travel"],
        "scope": "team", "community": None, "trust": 0, "date": None, "links": 2,
        "backlinks": 1, "summary": "Fold the trunks."}
    assert {(e["source"], e["target"], e["kind"], e["relation"]) for e in body["edges"]} == {
        ("Home.md", "Packing.md", "extracted", "wikilink"),
        ("Packing.md", "Home.md", "extracted", "related")}
    assert sum(c["size"] for c in body["communities"]) == 2
    assert body["notes"] == []


def test_the_graph_of_a_wiki_never_compiled_says_why_the_list_is_empty(workspace):
    """`init` then `serve`: the dashboard read "0 of 0 pages", nothing saying the notes in
    raw/ were never compiled (the search box's answer said it)."""
    for page in (workspace / "wiki").iterdir():
        page.unlink()
    body = _client(workspace).get("/dashboard/graph").json()
    assert body["nodes"] == [] and body["notes"] == [
        "the wiki has no pages yet: its notes have not been compiled (`mindgraph ingest` "
        "compiles them)"]
    assert CliRunner().invoke(cli, ["ingest", "-C", str(workspace)]).exit_code == 0
    body = _client(workspace).get("/dashboard/graph").json()
    assert [n["id"] for n in body["nodes"]] == ["zeppelins.md"] and body["notes"] == []


def test_a_rendered_page_escapes_hostile_html_and_links_inside_the_dashboard(workspace):
    (workspace / "wiki" / "Home.md").write_text(
        "# Home\n\n<script>document.title='owned'</script> [[Packing]]\n\n"
        "<img src=x onerror=alert(1)>\n")
    client = _client(workspace)
    body = client.get("/dashboard/page", params={"page": "Home"}).json()
    assert body["path"] == "Home.md" and "<script" not in body["html"]
    assert "&lt;script&gt;" in body["html"] and "<img" not in body["html"]
    assert 'href="#page=Packing.md"' in body["html"]
    assert body["trust"]["level"] == 0 and body["trust"]["origin"] == "human"
    missing = client.get("/dashboard/page", params={"page": "Nowhere"})
    assert missing.status_code == 404 and missing.json()["error"] == "NotFoundError"


def test_behind_a_token_the_page_loads_but_its_data_needs_the_token(workspace):
    client = _client(workspace, token=TOKEN, host="0.0.0.0")
    assert client.get("/").status_code == 200           # no data in it: a browser opens it
    assert client.get("/dashboard/static/dashboard.js").status_code == 200
    assert client.get("/dashboard/graph").status_code == 401
    assert client.get("/dashboard/page", params={"page": "Home"}).status_code == 401
    signed = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get("/dashboard/graph", headers=signed).status_code == 200


def test_the_guard_stands_in_front_of_the_dashboard(workspace):
    client = _client(workspace)
    assert client.get("/", headers={"Host": "evil.example"}).status_code == 421
    assert client.get("/dashboard/graph",
                      headers={"Origin": "https://evil.example"}).status_code == 403
    assert client.get("/dashboard/graph", headers={"Origin": LOCAL}).status_code == 200


def test_the_api_documents_the_dashboard_data_routes_only(workspace):
    paths = _client(workspace).get("/openapi.json").json()["paths"]
    assert {"/dashboard/graph", "/dashboard/page"} <= set(paths)
    assert "/" not in paths and not any(p.startswith("/dashboard/static") for p in paths)


def test_a_compiled_page_names_its_compiler_not_written_by_hand(tmp_path):
    """A page `ingest` compiled records its compiler in provenance.generator; the detail read
    the old top-level ``compiler`` key, found none and said "none (written by hand)" beside
    "Origin compiled_offline". It names the compiler; a page written in wiki/ has none."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Garden.md").write_text("# Garden\n\nTomatoes and basil.\n")
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Hand.md").write_text("# Hand\n\nWritten here.\n")
    assert CliRunner().invoke(cli, ["ingest", "-C", str(tmp_path)]).exit_code == 0
    client = _client(tmp_path)
    garden = client.get("/dashboard/page", params={"page": "Garden"}).json()
    assert garden["trust"]["origin"] == "compiled_offline"
    assert garden["compile"]["compiler"].startswith("offline:v")
    assert garden["compile"]["sources"] == ["Garden.md"]
    hand = client.get("/dashboard/page", params={"page": "Hand"}).json()
    assert hand["compile"]["compiler"] is None and hand["trust"]["origin"] == "human"
