"""Telling an MCP client that sent a request before ``initialize`` to send it first: over stdio
and over HTTP, the same message and data (the method refused, what to send first).

- stdio (``InitializeFirst``, server middleware): the SDK answers such a request with a bare
  -32602 "Invalid request parameters", which reads as a fault in the request's params.
- HTTP (``HttpInitializeFirst``, ASGI middleware): a POST without an ``Mcp-Session-Id`` header
  that is not ``initialize`` got the SDK's 400 "Bad Request: Missing session ID", and one
  naming a session the server does not hold (idle too long, closed, the server restarted) its
  404 "Session not found"; neither says what to do. The status and the JSON-RPC code stay,
  the message and data say it.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

BEFORE_INITIALIZE = ("this request came before 'initialize': an MCP client sends "
                     "'initialize' (then 'notifications/initialized') first")
SEND_INITIALIZE_FIRST = f"{BEFORE_INITIALIZE}, and only 'ping' is answered before it"   # stdio
SESSION_HEADER = "mcp-session-id"
_READ_AT_MOST = 65_536      # of a request's body, to name its method (a request is small)
# the SDK's own words (mcp/server/streamable_http*.py) for the two refusals explained here
_NO_SESSION, _UNKNOWN_SESSION = "Bad Request: Missing session ID", "Session not found"


def initialize_first_data(method: str) -> dict[str, str]:
    """The error's data: the method refused and what to send first."""
    return {"method": method, "send_first": "initialize"}


class InitializeFirst:
    """Server middleware for stdio: the SDK's pre-``initialize`` refusal (a bare -32602 with no
    data) given the message that says what to do. One per stdio run, which is one
    connection."""

    def __init__(self) -> None:
        self.initialized = False

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            if (not self.initialized and ctx.method != "initialize"
                    and exc.code == INVALID_PARAMS and not exc.data):
                raise MCPError(INVALID_PARAMS, SEND_INITIALIZE_FIRST,
                               initialize_first_data(ctx.method)) from exc
            raise
        if ctx.method in ("initialize", "notifications/initialized"):
            self.initialized = True
        return result


class HttpInitializeFirst:
    """ASGI middleware around the streamable HTTP app: its refusal of a request outside any
    session (400) or in a session it does not hold (404) says to send ``initialize``."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        session = next((v.decode("latin-1") for k, v in scope.get("headers", ())
                        if k.lower() == SESSION_HEADER.encode()), None)
        body = bytearray()
        held: Message | None = None

        async def reading() -> Message:
            message = await receive()
            if message["type"] == "http.request" and len(body) < _READ_AT_MOST:
                body.extend(message.get("body", b"")[:_READ_AT_MOST - len(body)])
            return message

        async def sending(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start" and message["status"] in (400, 404):
                held = message          # until its body shows whether it is the SDK's refusal
                return
            if held is not None and message["type"] == "http.response.body":
                start, held = held, None
                said = None if message.get("more_body") else _explained(
                    bytes(message.get("body", b"")), session, bytes(body))
                if said is not None:
                    # and no session id: the SDK names the one it opened for this request
                    # and discarded at once, which no client could use
                    headers = [(k, v) for k, v in start.get("headers", ())
                               if k.lower() not in (b"content-length", SESSION_HEADER.encode())]
                    await send({**start, "headers": [*headers, (b"content-length",
                                                                str(len(said)).encode())]})
                    await send({"type": "http.response.body", "body": said})
                    return
                await send(start)
            await send(message)

        await self.app(scope, reading, sending)


def _explained(answer: bytes, session: str | None, request: bytes) -> bytes | None:
    """The SDK's refusal ``answer`` with a message naming the fix; None for any other."""
    try:
        error = json.loads(answer)["error"]
        said = error["message"]
    except (ValueError, KeyError, TypeError):
        return None
    if said == _NO_SESSION and session is None:
        message = (f"{BEFORE_INITIALIZE}, and puts the Mcp-Session-Id header of "
                   f"initialize's answer on every later request")
    elif said == _UNKNOWN_SESSION and session is not None:
        # the same words for every id (another identity's session answers as none does)
        message = ("Session not found: the Mcp-Session-Id names no session open on this "
                   "server (idle past serve.mcp_session_idle_s, closed, or the server "
                   "restarted): send 'initialize' again without an Mcp-Session-Id header, then "
                   "use the one its answer gives")
    else:
        return None
    method, request_id = _method_of(request)
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
        "code": error.get("code"), "message": message,
        "data": initialize_first_data(method)}}).encode()


def _method_of(request: bytes) -> tuple[str, Any]:
    """The method and id of a JSON-RPC request body (the first of a batch); "" when none."""
    try:
        message = json.loads(request)
    except ValueError:
        return "", None
    if isinstance(message, list) and message:
        message = message[0]
    if not isinstance(message, dict):
        return "", None
    method, request_id = message.get("method"), message.get("id")
    return (method if isinstance(method, str) else "",
            request_id if isinstance(request_id, (str, int)) else None)


__all__ = ["BEFORE_INITIALIZE", "HttpInitializeFirst", "InitializeFirst",
           "SEND_INITIALIZE_FIRST", "initialize_first_data"]
