"""The REST API in-process (no server started): statuses, auth, bounds."""

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app


@pytest.fixture
def workspace(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "Catalog.md").write_text("---\ntitle: Trunk Catalog\ndate: 2024-02-01\n---\n"
                                     "Bookmarks of trunks. See [[Packing]].\n\n## Data\n"
                                     "```json\n{\"n\": 1}\n```\n")
    (wiki / "Packing.md").write_text("---\ntitle: Packing\n---\nBack to [[Catalog]].\n")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "packing.py").write_text("def pack_trunk():\n    pass\n")
    return tmp_path


@pytest.fixture
def client(workspace):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    return TestClient(create_app(mg))


def test_health_and_page(client):
    assert client.get("/health").json()["pages"] == 2
    page = client.get("/page", params={"name": "trunk catalog"}).json()
    assert page["path"] == "Catalog.md"
    assert [o["page"] for o in page["outgoing"]] == ["Packing.md"]
    assert [b["page"] for b in page["backlinks"]] == ["Packing.md"]
    assert page["sections"][1]["id"] == "data"


def test_unknown_page_is_404_json(client):
    response = client.get("/page", params={"name": "Nope"})
    assert response.status_code == 404
    assert response.json()["error"] == "NotFoundError"


def test_bad_parameters_are_422(client):
    assert client.get("/page").status_code == 422
    assert client.get("/timeline", params={"concept": "x", "limit": 0}).status_code == 422
    assert client.get("/timeline", params={"concept": "x", "limit": 10**6}).status_code == 422
    assert client.get("/timeline", params={"concept": "x", "since": "2024-13-45"}).status_code \
        == 422


def test_section_extract_timeline_check_coverage(client):
    assert client.get("/section", params={"page": "Catalog", "id": "data"}).json()["heading"] \
        == "Data"
    assert client.get("/extract", params={"page": "Catalog"}).json()["data"] == {"n": 1}
    timeline = client.get("/timeline", params={"concept": "bookmarks"}).json()
    assert [e["path"] for e in timeline["entries"]] == ["Catalog.md"]
    assert client.get("/check").json()["errors"] == 0
    assert client.get("/coverage", params={"codebase": "code"}).json()["total"] == 1
    assert client.get("/coverage", params={"codebase": "../.."}).status_code == 404


def test_token_required_when_configured(workspace):
    mg = Mindgraph(settings_from_dict({}, base_dir=workspace))
    client = TestClient(create_app(mg, token="s3cret"))
    assert client.get("/health").status_code == 200
    assert client.get("/page", params={"name": "Packing"}).status_code == 401
    wrong = client.get("/page", params={"name": "Packing"},
                       headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    ok = client.get("/page", params={"name": "Packing"},
                    headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200


def test_openapi_document_lists_routes(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/health", "/page", "/section", "/timeline", "/coverage"} <= set(paths)


def test_serve_refuses_public_bind_without_token(workspace, monkeypatch):
    monkeypatch.delenv("MINDGRAPH_API_TOKEN", raising=False)
    result = CliRunner().invoke(cli, ["serve", "-C", str(workspace), "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "MINDGRAPH_API_TOKEN" in result.output


def test_search_related_path_communities_and_usage_log(client, workspace):
    found = client.get("/search", params={"q": "trunks"}).json()
    assert found["results"][0]["page"] == "Catalog.md"
    assert client.get("/search", params={"q": "x", "limit": 101}).status_code == 422
    related = client.get("/related", params={"page": "Packing"}).json()
    assert [r["path"] for r in related["related"]] == ["Catalog.md"]
    assert client.get("/path", params={"source": "Catalog", "target": "Packing"}).json() == \
        {"path": ["Catalog.md", "Packing.md"]}
    groups = client.get("/communities").json()["communities"]
    assert sorted(m for g in groups for m in g["members"]) == ["Catalog.md", "Packing.md"]
    logged = (workspace / ".mindgraph" / "usage.jsonl").read_text().splitlines()
    assert '"interface": "rest"' in logged[0] and '"trunks"' in logged[0]


def test_server_sees_edits_before_the_next_query(client, workspace):
    assert client.get("/search", params={"q": "zeppelin"}).json()["count"] == 0
    (workspace / "wiki" / "Packing.md").write_text("---\ntitle: Packing\n---\n"
                                                   "Pack the zeppelin. [[Catalog]]\n")
    hits = client.get("/search", params={"q": "zeppelin"}).json()["results"]
    assert [h["page"] for h in hits] == ["Packing.md"]
    (workspace / "wiki" / "Packing.md").unlink()
    assert client.get("/search", params={"q": "zeppelin"}).json()["count"] == 0
    assert client.get("/page", params={"name": "Packing"}).status_code == 404
