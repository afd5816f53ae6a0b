"""Who may talk to the HTTP servers: Host, Origin, CORS, body type and size, token length —
through the real REST app and the real MCP HTTP app, in-process."""

import asyncio
import socket

import httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.errors import ConfigError
from mindgraph.serve.guard import Policy, is_loopback
from mindgraph.serve.mcp import create_http_app, create_mcp_server
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
EVIL = "https://evil.example.com"
JSON_HEADERS = {"content-type": "application/json"}


def mindgraph(workspace, **serve):
    return Mindgraph(settings_from_dict({"embedding": {"provider": "hashing", "dimension": 32},
                                         "serve": serve}, base_dir=workspace))


def rest(workspace, host=None, token=None, **serve):
    return TestClient(create_app(mindgraph(workspace, **serve), token, host), base_url=LOCAL)


def ingested(workspace) -> bool:
    return (workspace / "wiki" / "zeppelins.md").exists()


# -- Host: DNS rebinding ------------------------------------------------------------------------

def test_a_rebound_host_cannot_read_the_wiki(workspace):
    client = rest(workspace)
    stolen = client.get("/page", params={"name": "Home"}, headers={"Host": "evil.example.com"})
    assert stolen.status_code == 421
    assert "serve.allowed_hosts" in stolen.json()["detail"] and "Home" not in stolen.text
    assert client.get("/health", headers={"Host": "evil.example.com:8765"}).status_code == 421
    for host in ("127.0.0.1:8765", "localhost:8765", "LOCALHOST", "127.0.0.2:9", "[::1]:8765"):
        assert client.get("/page", params={"name": "Home"}, headers={"Host": host}
                          ).status_code == 200, host


@pytest.mark.parametrize("host", [
    "[::1]evil.com", "[::1]evil.com:8765", "[::1]:8765evil", "[::1]:", "[::1]:80:80",
    "[::1].evil.com", "[::1]]", "[[::1]]", "[::1", "::1]", "[::1]@evil.com", "[::1]/x",
    "[::1]:８７６５", "[127.0.0.1]x", "[evil.com]", "localhost:", "localhost:8765:1",
    "localhost:²", "localhost:99999x", "localhost evil.com", "localhost@evil.com",
    "localhost/evil", "127.0.0.1:8765.evil.com", "evil.com#localhost", "lоcalhost", ""])
def test_a_host_that_only_starts_like_loopback_is_refused(workspace, host):
    client = rest(workspace)
    answer = client.get("/page", params={"name": "Home"}, headers={"Host": host.encode()})
    assert answer.status_code == 421, host
    assert "Home" not in answer.text


@pytest.mark.parametrize("host", ["[::1]", "[::1]:8765", "[0:0:0:0:0:0:0:1]:1", " [::1]:9 ",
                                  "localhost.", "localhost.:8765", "127.0.0.1",
                                  "127.9.9.9:65535"])
def test_loopback_hosts_written_strictly_are_served(workspace, host):
    assert rest(workspace).get("/page", params={"name": "Home"}, headers={"Host": host}
                               ).status_code == 200, host


def test_a_second_host_header_is_not_let_past_by_the_first(workspace):
    client = rest(workspace)
    for hosts in ([("Host", "localhost:8765"), ("Host", "evil.example.com")],
                  [("Host", "evil.example.com"), ("Host", "localhost:8765")]):
        assert client.get("/page", params={"name": "Home"}, headers=hosts).status_code == 421


def test_allowed_hosts_add_names_and_a_public_bind_checks_no_host(workspace):
    named = rest(workspace, allowed_hosts=["wiki.internal"])
    assert named.get("/health", headers={"Host": "wiki.internal:8765"}).status_code == 200
    assert named.get("/health", headers={"Host": "wiki.internal.evil.com"}).status_code == 421
    token = "t" * 32
    public = rest(workspace, host="0.0.0.0", token=token)     # a token guards it instead
    assert public.get("/health", headers={"Host": "wiki.example.com"}).status_code == 200


# -- Origin: other sites' pages ---------------------------------------------------------------

def test_a_cross_site_reindex_is_refused_before_any_work(workspace):
    client = rest(workspace)
    attack = client.post("/reindex", content="{}",
                         headers={"Origin": EVIL, "content-type": "text/plain"})
    assert attack.status_code == 403 and "serve.cors_origins" in attack.json()["detail"]
    no_body = client.post("/reindex", headers={"Origin": EVIL})      # fetch(..., no-cors)
    assert no_body.status_code == 403
    marked = client.post("/reindex", headers={"Sec-Fetch-Site": "cross-site"})
    assert marked.status_code == 403
    assert not ingested(workspace)
    # the server's own pages (/docs) send their own origin: fine
    own = client.post("/reindex", params={"embed": False}, headers={"Origin": LOCAL})
    assert own.status_code == 200 and ingested(workspace)


def test_cross_site_reads_are_refused_but_following_a_link_is_not(workspace):
    client = rest(workspace)
    assert client.get("/page", params={"name": "Home"},
                      headers={"Origin": EVIL}).status_code == 403
    assert client.get("/timeline", params={"concept": "trunks"},
                      headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"}
                      ).status_code == 403
    assert client.get("/health", headers={"Sec-Fetch-Site": "cross-site",
                                          "Sec-Fetch-Mode": "navigate"}).status_code == 200


def test_a_second_origin_header_is_not_let_past_by_the_first(workspace):
    client = rest(workspace)
    for origins in ([("Origin", LOCAL), ("Origin", EVIL)], [("Origin", EVIL), ("Origin", LOCAL)]):
        assert client.get("/page", params={"name": "Home"}, headers=origins).status_code == 403


def test_cors_is_off_by_default_and_on_for_listed_origins_only(workspace):
    plain = rest(workspace).get("/health")
    assert "access-control-allow-origin" not in plain.headers
    app = "http://localhost:6274"
    client = rest(workspace, cors_origins=[app])
    listed = client.get("/health", headers={"Origin": app})
    assert listed.status_code == 200 and listed.headers["access-control-allow-origin"] == app
    preflight = client.options("/reindex", headers={
        "Origin": app, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, authorization"})
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == app
    assert "POST" in preflight.headers["access-control-allow-methods"]
    other = client.options("/reindex", headers={"Origin": EVIL,
                                                "Access-Control-Request-Method": "POST"})
    assert other.status_code == 403 and "access-control-allow-origin" not in other.headers


@pytest.mark.parametrize("origins, fix", [(["*"], "every web page"),
                                          (["http://localhost:6274/"], "no path"),
                                          (["localhost:6274"], "scheme://host")])
def test_cors_origins_are_checked_at_config_load(origins, fix):
    with pytest.raises(ConfigError, match=fix):
        settings_from_dict({"serve": {"cors_origins": origins}})


def test_allowed_hosts_and_origins_come_from_the_environment_too(tmp_path):
    from mindgraph.config import load_settings

    settings = load_settings(tmp_path, environ={
        "MINDGRAPH_SERVE__CORS_ORIGINS": "http://localhost:6274, https://app.example.com",
        "MINDGRAPH_SERVE__ALLOWED_HOSTS": "wiki.internal"})
    assert settings.serve.cors_origins == ("http://localhost:6274", "https://app.example.com")
    assert settings.serve.allowed_hosts == ("wiki.internal",)
    with pytest.raises(ConfigError, match="MINDGRAPH_SERVE__ALLOWED_HOSTS"):
        load_settings(tmp_path, environ={"MINDGRAPH_SERVE__ALLOWED_HOSTS": "http://x/"})


# -- the body: JSON, bounded, an object -----------------------------------------------------------

def test_a_body_must_be_json(workspace):
    client = rest(workspace)
    form = client.post("/reindex", content="embed=false",
                       headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415 and "application/json" in form.json()["detail"]
    assert client.post("/reindex", content="{}", headers={"content-type": "text/plain"}
                       ).status_code == 415
    assert not ingested(workspace)
    ok = client.post("/reindex", content='{"embed": false}',
                     headers={"content-type": "application/json; charset=utf-8"})
    assert ok.status_code == 200 and ingested(workspace)


@pytest.mark.parametrize("body", ["null", "[]", "1", '"embed"', "true"])
def test_a_json_body_that_is_not_an_object_is_422_and_runs_nothing(workspace, body):
    answer = rest(workspace).post("/reindex", content=body, headers=JSON_HEADERS)
    assert answer.status_code == 422, answer.text
    assert "JSON object" in answer.json()["detail"]
    assert not ingested(workspace)


def _streamed_reindex(app, chunks: int, declared: int | None):
    """POST ``chunks`` MiB to /reindex; returns the answer and how many chunks were read."""
    pulled = []

    async def body():
        for _ in range(chunks):
            pulled.append(1)
            yield b" " * 2**20

    async def post():
        headers = dict(JSON_HEADERS)
        if declared is not None:
            headers["content-length"] = str(declared)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                     base_url=LOCAL) as http:
            return await http.post("/reindex", content=body(), headers=headers)

    return asyncio.run(post()), len(pulled)


def test_a_large_body_is_413_without_being_read(workspace):
    app = create_app(mindgraph(workspace, max_body_bytes=65536))
    answer, read = _streamed_reindex(app, 400, declared=400 * 2**20)
    assert answer.status_code == 413 and "serve.max_body_bytes" in answer.json()["detail"]
    assert read == 0
    answer, read = _streamed_reindex(app, 400, declared=None)        # chunked: no length
    assert answer.status_code == 413 and read <= 2
    assert not ingested(workspace)


def test_the_default_body_limit_is_one_mebibyte(workspace):
    app = create_app(mindgraph(workspace))
    answer, read = _streamed_reindex(app, 2, declared=None)
    assert answer.status_code == 413 and read == 2
    assert settings_from_dict({}).serve.max_body_bytes == 2**20


def test_a_route_can_have_its_own_body_rule():
    from mindgraph.config import ServeSettings
    from mindgraph.serve.guard import BodyRule

    upload = BodyRule(50 * 2**20, ("multipart/form-data",))
    policy = Policy.for_server(ServeSettings(), "127.0.0.1", routes=(("/upload", upload),))
    assert policy.rule_for("/upload/notes") is upload
    assert policy.rule_for("/reindex").max_bytes == 2**20
    assert upload.accepts("multipart/form-data; boundary=x") and not upload.accepts("text/plain")
    assert policy.body.accepts("application/vnd.api+json")


# -- tokens ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["serve"], ["mcp", "--transport", "http"]])
def test_a_short_token_is_refused_with_the_fix(workspace, monkeypatch, command):
    monkeypatch.setenv("MINDGRAPH_API_TOKEN", "abc")
    with socket.socket() as taken:     # were the token accepted, the server would not start
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = CliRunner().invoke(cli, [*command, "-C", str(workspace), "--port", port])
    assert result.exit_code == 2, result.output
    assert "MINDGRAPH_API_TOKEN has 3 characters" in result.output
    assert "secrets.token_urlsafe(32)" in result.output


@pytest.mark.parametrize("token", [" " * 40, "t" * 20 + " " + "t" * 20, "t" * 40 + "\n"])
def test_a_token_a_client_cannot_send_is_refused(workspace, monkeypatch, token):
    monkeypatch.setenv("MINDGRAPH_API_TOKEN", token)
    with socket.socket() as taken:     # were the token accepted, the server would not start
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        result = CliRunner().invoke(cli, ["serve", "-C", str(workspace), "--port", port])
    assert result.exit_code == 2, result.output
    assert "MINDGRAPH_API_TOKEN has spaces or unprintable characters" in result.output


def test_loopback_means_every_loopback_address():
    assert all(map(is_loopback, ["127.0.0.1", "127.0.0.2", "127.255.0.9", "::1", "[::1]",
                                 "localhost", "LOCALHOST."]))
    assert not any(map(is_loopback, ["0.0.0.0", "10.0.0.1", "evil.example.com", "::"]))


# -- the MCP HTTP server: the same rules, on every loopback address ------------------------------

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "pytest", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


def test_mcp_http_on_any_loopback_address_checks_host_origin_and_body(workspace):
    mg = mindgraph(workspace, max_body_bytes=4096)
    app = create_http_app(create_mcp_server(mg), host="127.0.0.2", serve=mg.settings.serve)
    with TestClient(app, base_url="http://127.0.0.2:8766") as client:
        rebound = client.post("/mcp", json=INITIALIZE,
                              headers=MCP_HEADERS | {"Host": "evil.example.com:8766"})
        assert rebound.status_code == 421
        cross = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS | {"Origin": EVIL})
        assert cross.status_code == 403
        plain = client.post("/mcp", content="{}",
                            headers=MCP_HEADERS | {"content-type": "text/plain"})
        assert plain.status_code == 415
        big = client.post("/mcp", content=b" " * 10_000, headers=MCP_HEADERS | JSON_HEADERS)
        assert big.status_code == 413
        ok = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        assert ok.status_code == 200 and '"mindgraph"' in ok.text
