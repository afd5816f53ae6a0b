"""Every route a server registers refuses a request without a valid bearer token once the
server is bound beyond loopback — FastAPI's own (/openapi.json, /docs, /redoc), the
dashboard's and the MCP transport's included — except the allow-list below, each entry with
its reason. The routes are enumerated from the apps, so a route added later is checked too."""

import re

import pytest
from fastapi.testclient import TestClient
from starlette.routing import Mount

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.errors import ConfigError
from mindgraph.serve.mcp import create_http_app, create_mcp_server
from mindgraph.serve.rest import create_app
from mindgraph.serve.rest_documents import UPLOAD_PATH as UPLOAD
from mindgraph.serve.token_gate import PUBLIC

TOKEN = "k" * 40
PUBLIC_HOST = "http://wiki.example.com:8765"     # a server bound to 0.0.0.0, reached by name

# path → why it may answer without a token. Adding a route here needs a reason a reviewer
# accepts; a route missing from here must answer 401 without a token.
ALLOWED = {
    "/health": "liveness probe: status and version only (the page count needs a token)",
    "/": "the dashboard's page: no data, and a browser cannot send a token when opening a URL",
    "/dashboard/static/{name:path}": "the dashboard's scripts and styles: no data",
}


def _mindgraph(workspace):
    return Mindgraph(settings_from_dict({"embedding": {"provider": "hashing", "dimension": 32}},
                                        base_dir=workspace))


def _concrete(path: str) -> str:
    """'/dashboard/static/{name:path}' → '/dashboard/static/x'."""
    return re.sub(r"\{[^}]+\}", "x", path)


def _routes(app):
    """(path, method) of every route the app registers, mounts walked."""
    found = []
    for r in app.routes:
        if isinstance(r, Mount):
            found += [(r.path + p, m) for p, m in _routes(r.app)]
            continue
        for method in sorted(getattr(r, "methods", None) or {"GET", "POST", "DELETE"}):
            found.append((r.path, method))
    return found


def _call(client, path, method, **headers):
    """A request with a body of the type the route takes (the Guard's 415 comes first)."""
    body = {"content": b"{}", "headers": {"content-type": "application/json", **headers}} \
        if method in ("POST", "PUT", "PATCH", "DELETE") else {"headers": headers}
    if method == "POST" and path == UPLOAD:
        body = {"content": b"--b--\r\n", "headers": {
            "content-type": "multipart/form-data; boundary=b", **headers}}
    return client.request(method, _concrete(path), **body)


def test_the_allow_list_is_the_gates_list():
    assert {p.replace("{name:path}", "") for p in ALLOWED} == set(PUBLIC)


def test_every_rest_route_refuses_a_request_without_a_token_off_loopback(workspace):
    app = create_app(_mindgraph(workspace), TOKEN, "0.0.0.0")
    client = TestClient(app, base_url=PUBLIC_HOST)
    routes = _routes(app)
    paths = {p for p, _ in routes}
    # FastAPI's own pages and the dashboard's are among them, not only the API's
    assert {"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc", "/",
            "/dashboard/static/{name:path}", "/dashboard/graph", "/reindex"} <= paths
    assert len(paths) > 40
    leaks = []
    for path, method in routes:
        if path in ALLOWED:
            continue
        for headers in ({}, {"Authorization": "Bearer " + "w" * 40},
                        {"Authorization": TOKEN}):          # no scheme: not a bearer token
            answer = _call(client, path, method, **headers)
            if answer.status_code != 401:
                leaks.append((method, path, headers, answer.status_code))
    assert leaks == []
    # a path no route has is refused alike (nothing to learn about which paths exist)
    assert client.get("/nowhere").status_code == 401
    for path in ALLOWED:
        assert _call(client, path, "GET").status_code != 401, path
    assert client.get("/health").json()["pages"] is None
    # with the token every one of them answers (the docs included)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for path in ("/openapi.json", "/docs", "/redoc", "/docs/oauth2-redirect"):
        assert client.get(path, headers=auth).status_code == 200, path
    assert client.get("/health", headers=auth).json()["pages"] == 2


def test_two_authorization_headers_are_refused(workspace):
    client = TestClient(create_app(_mindgraph(workspace), TOKEN, "0.0.0.0"),
                        base_url=PUBLIC_HOST)
    answer = client.get("/openapi.json", headers=[("Authorization", f"Bearer {TOKEN}"),
                                                   ("Authorization", "Bearer nope")])
    assert answer.status_code == 401 and "one Authorization header" in answer.json()["detail"]


def test_every_mcp_route_refuses_a_request_without_a_token_off_loopback(workspace):
    mg = _mindgraph(workspace)
    server = create_mcp_server(mg)
    client = TestClient(create_http_app(server, TOKEN, "0.0.0.0", mg.settings.serve),
                        base_url=PUBLIC_HOST)
    routes = _routes(server.streamable_http_app())
    assert ("/mcp", "POST") in routes
    for path, method in routes + [("/nowhere", "GET")]:
        assert _call(client, path, method).status_code == 401, (method, path)


@pytest.mark.parametrize("kind", ["rest", "mcp"])
def test_a_server_off_loopback_without_a_token_is_not_built(workspace, kind):
    mg = _mindgraph(workspace)
    with pytest.raises(ConfigError, match="needs a bearer token.*MINDGRAPH_API_TOKEN"):
        if kind == "rest":
            create_app(mg, None, "0.0.0.0")
        else:
            create_http_app(create_mcp_server(mg), None, "10.0.0.5", mg.settings.serve)
