"""HEAD on the REST server's GET routes answers as GET would, without the body (health checks:
Docker, load balancers, ``curl -I``), and the Host, Origin and token checks apply to it too —
through a real `mindgraph serve` and the real app in-process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import httpx
import pytest
from fastapi.testclient import TestClient

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app
from live_server import free_port, wait_healthy

LOCAL = "http://127.0.0.1:8765"
TOKEN = "h" * 40


def rest(workspace, token=None, host=None):
    mg = Mindgraph(settings_from_dict({"embedding": {"provider": "hashing", "dimension": 32}},
                                      base_dir=workspace))
    return TestClient(create_app(mg, token, host), base_url=LOCAL)


def raw_head(port: int, target: str) -> bytes:
    """Everything the server sends for one HEAD request, until it closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"HEAD {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     f"Connection: close\r\n\r\n".encode())
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def test_a_real_server_answers_head_on_health_and_a_page_without_a_body(workspace):
    (workspace / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n"
                                             "  dimension: 32\n")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(workspace),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE,
                              env={**os.environ, "MINDGRAPH_API_TOKEN": ""})
    try:
        base = f"http://127.0.0.1:{port}"
        wait_healthy(server, base)
        for target in ("/health", "/page?name=Home"):
            got = httpx.get(base + target, timeout=10)
            head, _, body = raw_head(port, target).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 "), (target, head)
            assert body == b"", target
            headers = dict(line.split(b": ", 1) for line in head.split(b"\r\n")[1:])
            assert headers[b"content-length"] == str(len(got.content)).encode(), target
            assert headers[b"content-type"] == b"application/json", target
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_head_has_the_get_answers_status_and_headers_without_the_body(workspace):
    client = rest(workspace)
    for path, params in (("/health", {}), ("/page", {"name": "Home"}), ("/stats", {}),
                         ("/page", {"name": "Nope"}), ("/page", {})):
        got, head = client.get(path, params=params), client.head(path, params=params)
        assert head.status_code == got.status_code, (path, params, head.status_code)
        assert head.content == b""
        assert head.headers["content-length"] == str(len(got.content))
        assert head.headers["content-type"] == got.headers["content-type"]
    assert client.head("/search", params={"q": "trunks"}).status_code == 200
    assert client.head("/docs").status_code == 200          # FastAPI's own pages as well


def test_head_on_a_route_without_get_is_still_405(workspace):
    answer = rest(workspace).head("/reindex")
    assert answer.status_code == 405 and answer.headers["allow"] == "POST"


def test_the_host_and_origin_guard_applies_to_head(workspace):
    client = rest(workspace)
    assert client.head("/health", headers={"Host": "evil.example.com"}).status_code == 421
    assert client.head("/page", params={"name": "Home"},
                       headers={"Origin": "https://evil.example.com"}).status_code == 403


def test_the_token_applies_to_head_and_health_stays_public(workspace):
    client = rest(workspace, token=TOKEN)
    assert client.head("/health").status_code == 200
    refused = client.head("/page", params={"name": "Home"})
    assert refused.status_code == 401 and refused.content == b""
    assert refused.headers["www-authenticate"] == "Bearer"
    assert client.head("/page", params={"name": "Home"},
                       headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.head("/page", params={"name": "Home"},
                       headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


@pytest.mark.parametrize("spec_version", ["2.3", "2.4"])
def test_head_on_the_status_event_stream_ends_it_at_once(workspace, spec_version):
    """While a job runs, GET /status?stream=true streams until it ends. A HEAD ran that stream
    on the server, its events thrown away, until the job ended (up to
    serve.reindex_timeout_s): under ASGI 2.4 nothing else stops it (the server's receive is
    not listened to; its ``send`` would raise only once the client is gone). Driven as uvicorn
    drives the app: ``receive`` says disconnect once the answer is complete."""
    import asyncio

    app = rest(workspace).app
    jobs = app.state.documents.jobs
    job = jobs.start("rescan", "acme")
    sent: list[dict] = []

    async def head() -> None:
        complete = asyncio.Event()

        async def receive():
            await complete.wait()
            return {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)
            if message["type"] == "http.response.body" and not message.get("more_body"):
                complete.set()

        scope = {"type": "http", "method": "HEAD", "path": "/status", "raw_path": b"/status",
                 "query_string": b"stream=true", "root_path": "", "scheme": "http",
                 "http_version": "1.1", "headers": [(b"host", b"127.0.0.1:8765")],
                 "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8765),
                 "asgi": {"version": "3.0", "spec_version": spec_version}}
        await asyncio.wait_for(app(scope, receive, send), 5)

    try:
        asyncio.run(head())
    finally:
        jobs.finish(job)
    assert sent[0]["status"] == 200
    assert dict(sent[0]["headers"])[b"content-type"].startswith(b"text/event-stream")
    assert [m.get("body", b"") for m in sent[1:]] == [b""]
