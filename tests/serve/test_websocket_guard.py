"""WebSocket handshakes get the Host, Origin and token checks of an HTTP request: no route
takes WebSockets today, but one added later (or mounted by a library) must not be reachable
from another site's page or without a token. Both middlewares passed every scope that was
not ``http`` straight through."""

from __future__ import annotations

import asyncio

import pytest
from fastapi import WebSocket
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from mindgraph.config import ServeSettings, settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_http_app, create_mcp_server
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
WS = "ws://127.0.0.1:8765"
TOKEN = "w" * 40
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def client(workspace):
    """The REST app with a token and a WebSocket route added after it was built: it echoes."""
    mg = Mindgraph(settings_from_dict({"embedding": {"provider": "hashing", "dimension": 32}},
                                      base_dir=workspace))
    app = create_app(mg, TOKEN)

    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        await websocket.send_text(await websocket.receive_text())
        await websocket.close()

    app.add_api_websocket_route("/ws", echo)
    app.add_api_websocket_route("/", echo)          # a public path for HTTP
    return TestClient(app, base_url=LOCAL)


def refusal(client, path, headers):
    with pytest.raises(WebSocketDisconnect) as refused:
        with client.websocket_connect(WS + path, headers=headers) as ws:
            ws.send_text("hello")
            ws.receive_text()
    assert refused.value.code == 1008
    return refused.value.reason


def test_a_websocket_with_the_token_and_our_host_is_let_through(client):
    with client.websocket_connect(WS + "/ws", headers=BEARER) as ws:
        ws.send_text("hello")
        assert ws.receive_text() == "hello"


def test_a_websocket_without_a_token_is_refused_on_every_path(client):
    assert "Unauthorized" in refusal(client, "/ws", {})
    assert "Unauthorized" in refusal(client, "/", {})       # public for HTTP GET, not here
    assert "Unauthorized" in refusal(client, "/ws", {"Authorization": "Bearer " + "x" * 40})


def test_a_websocket_from_another_site_or_host_is_refused(client):
    assert "Origin" in refusal(client, "/ws", {**BEARER, "Origin": "https://evil.example.com"})
    assert "Host" in refusal(client, "/ws", {**BEARER, "Host": "evil.example.com"})
    with client.websocket_connect(WS + "/ws", headers={**BEARER, "Origin": LOCAL}) as ws:
        ws.send_text("own origin")
        assert ws.receive_text() == "own origin"


def test_the_mcp_http_app_refuses_a_websocket_without_a_token(workspace):
    mg = Mindgraph(settings_from_dict({"embedding": {"provider": "hashing", "dimension": 32}},
                                      base_dir=workspace))
    app = create_http_app(create_mcp_server(mg), TOKEN, serve=ServeSettings())
    sent: list[dict] = []

    async def receive():
        return {"type": "websocket.connect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "websocket", "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
             "headers": [(b"host", b"127.0.0.1:8765")], "scheme": "ws",
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8765), "subprotocols": [],
             "asgi": {"version": "3.0", "spec_version": "2.3"}}
    asyncio.run(app(scope, receive, send))
    assert sent[0]["type"] == "websocket.close" and sent[0]["code"] == 1008, sent
    assert "Unauthorized" in sent[0]["reason"]
