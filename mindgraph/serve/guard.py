"""Who may talk to an HTTP server: the Host, Origin, body and CORS rules shared by the REST API
and the MCP HTTP server (one ``Guard`` middleware in front of each).

A server on a loopback address (127.0.0.0/8, ::1, localhost) is reachable from every web page
the user opens: a page can send it requests and, by DNS rebinding (evil.example.com resolving
to 127.0.0.1), even read the answers. So:

- On loopback, Host must name a loopback address or localhost (any port) or one of
  ``serve.allowed_hosts``; else 421, before any work.
- On every address, a request a browser marks as coming from another site (its ``Origin``, or
  ``Sec-Fetch-Site`` when no Origin is sent) is refused with 403 unless that origin is in
  ``serve.cors_origins``. Following a link (a GET navigation) stays allowed.
- A request body must be JSON (``application/json`` or ``*/*+json``, else 415: no HTML form and
  no "simple" cross-site request can make one) and at most ``serve.max_body_bytes`` (413 from
  Content-Length before the body is read, or as soon as a streamed body passes the limit); it
  must arrive within the request budget (408). A ``BodyRule`` per path prefix gives a route its
  own limit and media types: POST /upload takes multipart bodies up to its own cap, streamed
  to the app rather than read into memory first (413 as soon as the stream passes the cap,
  408 when it has not all arrived within the rule's own time). Such bodies are spooled to the
  temporary folder before the app can look at them, so together they draw on one budget
  (``SpoolBudget``, ``serve.upload_spool_bytes`` per process): an upload that does not fit
  what the others hold is 503 with Retry-After — at once when its Content-Length says so,
  else as soon as its stream passes it — and its bytes count until its request ends (its
  spooled files are removed by then). Before, 250 connections of one client could each
  spool the 100 MB cap at once: 25 GB in the temporary folder.
- CORS: none by default; the origins in ``serve.cors_origins`` get CORS headers (preflight
  included), no other origin does.
- A WebSocket handshake gets the same Host and Origin checks (a browser lets any page open a
  WebSocket to any address, so its Origin is the only thing that tells a page of another site
  from ours); a refused one is closed before it is accepted (code 1008, the reason given;
  the client sees an HTTP 403). No route takes WebSockets today: this keeps one added later,
  or one a library mounts, behind the checks. Only ``lifespan`` passes unchecked.
- A request the token check behind the Guard will refuse (``unauthorized``: no valid token,
  no signed ticket, not a public path) has no body read here: it goes on at once to its 401.
  The Guard read a JSON body (up to 1 MiB, waiting up to ``serve.request_timeout_s``) before
  anyone had shown a token, so a client with no token held that memory and the connection for
  30 s per request, up to ``serve.max_connections`` of them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..config import ServeSettings
from ..errors import ConfigError
from ..scopes.identities import MIN_TOKEN_CHARS, TOKEN_RECIPE, token_problem

JSON = ("application/json",)
_BODYLESS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and localhost (a name or an address, brackets allowed)."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_token(token: str | None, env_name: str) -> None:
    """Refuse a bearer token short enough to guess (ConfigError with the fix)."""
    problem = None if token is None else token_problem(token)
    if problem is not None:
        raise ConfigError(
            f"The token in {env_name} {problem}; use at least {MIN_TOKEN_CHARS} random "
            f"printable ones, e.g. export {env_name}=$({TOKEN_RECIPE}).")


class SpoolBudget:
    """The bytes that streamed request bodies may hold at once, across requests (the event
    loop's own: no lock). ``take`` says False instead of passing ``limit``."""

    def __init__(self, limit: int, setting: str = "serve.upload_spool_bytes"):
        self.limit, self.setting, self.held = limit, setting, 0

    def take(self, size: int) -> bool:
        """Hold ``size`` more bytes, if they fit."""
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give(self, size: int) -> None:
        """Let ``size`` bytes go (their request ended)."""
        self.held -= size

    def refusal(self, size: int) -> str:
        """Why a body of ``size`` more bytes is refused now."""
        return (f"The server is spooling {self.held} bytes of other uploads; this one's "
                f"{size} more would pass the {self.limit} bytes all uploads may hold at once "
                f"({self.setting}). Retry in a moment, or send fewer or smaller files.")


@dataclass(frozen=True)
class BodyRule:
    """How large a request body may be and which media types it may have."""

    max_bytes: int
    media_types: tuple[str, ...] = JSON
    streamed: bool = False          # handed to the app as it arrives, counted, not buffered
    timeout_s: float | None = None  # the whole body's time (None: the request budget)
    setting: str = "serve.max_body_bytes"   # named in the 413
    budget: SpoolBudget | None = None  # streamed bodies: what all may hold at once

    def accepts(self, content_type: str) -> bool:
        """True when ``content_type`` (a header value, parameters allowed) is one of ours."""
        media = content_type.partition(";")[0].strip().lower()
        return any(media == m or (m == "application/json" and media.startswith("application/")
                                  and media.endswith("+json")) for m in self.media_types)


@dataclass(frozen=True)
class Policy:
    """The rules for one bound address (build it with ``Policy.for_server``)."""

    loopback: bool
    allowed_hosts: frozenset[str]
    cors_origins: tuple[str, ...]
    body: BodyRule
    body_timeout_s: float
    routes: tuple[tuple[str, BodyRule], ...] = ()   # (path prefix, rule), first match wins

    @classmethod
    def for_server(cls, serve: ServeSettings, host: str,
                   routes: tuple[tuple[str, BodyRule], ...] = ()) -> "Policy":
        """The policy of a server bound to ``host`` with these settings."""
        return cls(loopback=is_loopback(host),
                   allowed_hosts=frozenset(h.strip("[]").lower() for h in serve.allowed_hosts),
                   cors_origins=tuple(o.lower() for o in serve.cors_origins),
                   body=BodyRule(serve.max_body_bytes), body_timeout_s=serve.request_timeout_s,
                   routes=routes)

    def rule_for(self, path: str) -> BodyRule:
        """The body rule of the route at ``path``."""
        return next((rule for prefix, rule in self.routes if path.startswith(prefix)),
                    self.body)

    def host_refused(self, host: str | None) -> str | None:
        """Why a request with this Host header is refused (None: it is not)."""
        if not self.loopback:
            return None
        name = _host_name(host or "")
        if name and (is_loopback(name) or name in self.allowed_hosts):
            return None
        return (f"Host {(host or '(none)')[:100]!r} is not this server: a server on a loopback "
                f"address answers only to localhost or a loopback address (a web page that "
                f"renamed it cannot read your notes). If you reach it under another name, add "
                f"that name to serve.allowed_hosts.")

    def origin_refused(self, headers: Headers, scheme: str, method: str) -> str | None:
        """Why a browser request from another site is refused (None: it is not)."""
        origins = headers.getlist("origin")     # two: checking one let the other pass
        origin = ", ".join(origins) if origins else None
        if origin is not None:
            own = f"{scheme}://{headers.get('host', '')}".lower()
            if origin.lower() == own or origin.lower() in self.cors_origins:
                return None
            source = f"Origin {origin[:100]!r}"
        else:
            site = headers.get("sec-fetch-site", "").lower()
            navigation = method == "GET" and headers.get("sec-fetch-mode") == "navigate"
            if site not in ("cross-site", "same-site") or navigation:
                return None
            source = "a page of another site (Sec-Fetch-Site)"
        return (f"Refused a request from {source}: web pages of other sites may not use this "
                f"server. To let a browser app in, add its origin (scheme://host:port) to "
                f"serve.cors_origins.")


class Guard:
    """ASGI middleware applying a ``Policy`` to every HTTP request, CORS included."""

    def __init__(self, app: ASGIApp, policy: Policy,
                 unauthorized: Callable[[Scope], bool] | None = None):
        """``unauthorized(scope)``: whether the app's token check will refuse the request
        (its body is then not read here)."""
        self.policy = policy
        self.unauthorized = unauthorized
        self.app = app if not policy.cors_origins else CORSMiddleware(
            app, allow_origins=list(policy.cors_origins),
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["authorization", "content-type", "accept", "last-event-id",
                           "mcp-session-id", "mcp-protocol-version"],
            expose_headers=["mcp-session-id", "server-timing"], max_age=600)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await self._websocket(scope, receive, send)
            return
        headers = Headers(scope=scope)
        method = scope["method"]
        hosts = headers.getlist("host")   # two Host headers: checking one let the other pass
        refused = self.policy.host_refused(", ".join(hosts) if hosts else None)
        if refused is not None:
            await _error(421, "Misdirected Request", refused)(scope, receive, send)
            return
        refused = self.policy.origin_refused(headers, scope.get("scheme", "http"), method)
        if refused is not None:
            await _error(403, "Forbidden", refused)(scope, receive, send)
            return
        length = headers.get("content-length")
        streamed = "chunked" in headers.get("transfer-encoding", "").lower()
        if method in _BODYLESS and not streamed and length in (None, "0"):
            await self.app(scope, receive, send)
            return
        if self.unauthorized is not None and self.unauthorized(scope):
            await self.app(scope, receive, send)    # its 401, with nothing of its body read
            return
        rule = self.policy.rule_for(scope.get("path", ""))
        kind = headers.get("content-type")
        if (kind is not None or streamed or length not in (None, "0")) \
                and not rule.accepts(kind or ""):
            await _error(415, "Unsupported Media Type",
                         f"Send the body as {' or '.join(rule.media_types)} (Content-Type "
                         f"header), not {(kind or 'without a Content-Type')[:100]}.",
                         )(scope, receive, send)
            return
        try:
            declared = int(length) if length is not None else None
        except ValueError:
            declared = None
        if declared is not None and declared > rule.max_bytes:
            await _too_large(rule)(scope, receive, send)
            return
        if declared == 0 or (declared is None and not streamed):
            await self.app(scope, receive, send)
            return
        if rule.streamed:
            await self._streamed(rule, scope, receive, send)
            return
        try:
            body = await asyncio.wait_for(_read_body(receive, rule.max_bytes),
                                          self.policy.body_timeout_s)
        except _TooLarge:
            await _too_large(rule)(scope, receive, send)
            return
        except asyncio.TimeoutError:
            await _error(408, "Request Timeout",
                         f"The request body did not arrive within {self.policy.body_timeout_s:g} "
                         f"s (serve.request_timeout_s).")(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A WebSocket handshake (or any scope but http and lifespan): the Host and Origin
        checks of an HTTP GET, refused by closing it before it is accepted."""
        if scope["type"] != "websocket":
            await refuse_websocket(send, f"Not served here: {str(scope['type'])[:40]!r}.")
            return
        headers = Headers(scope=scope)
        hosts = headers.getlist("host")
        refused = self.policy.host_refused(", ".join(hosts) if hosts else None)
        if refused is None:
            scheme = "https" if scope.get("scheme") == "wss" else "http"   # what Origin says
            refused = self.policy.origin_refused(headers, scheme, "WEBSOCKET")
        if refused is not None:
            await refuse_websocket(send, refused)
            return
        await self.app(scope, receive, send)

    async def _streamed(self, rule: BodyRule, scope: Scope, receive: Receive,
                        send: Send) -> None:
        """Hand the body to the app as it arrives, refusing it once it passes the cap or its
        time (the app's parser sees an HTTP error, which its handlers answer)."""
        from starlette.exceptions import HTTPException

        loop = asyncio.get_running_loop()
        deadline = loop.time() + (rule.timeout_s or self.policy.body_timeout_s)
        size = 0
        budget = rule.budget
        if budget is not None:
            declared = Headers(scope=scope).get("content-length", "")
            if declared.isdigit() and budget.held + int(declared) > budget.limit:
                await JSONResponse({"error": "Unavailable",
                                    "detail": budget.refusal(int(declared))},
                                   status_code=503, headers={"Retry-After": "1",
                                                             "Connection": "close"},
                                   )(scope, receive, send)
                return

        async def counted() -> Message:
            nonlocal size
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                raise HTTPException(408, f"The request body did not arrive within "
                                         f"{rule.timeout_s or self.policy.body_timeout_s:g} s "
                                         f"(serve.upload_timeout_s).",
                                    headers={"Connection": "close"}) from None
            chunk = len(message.get("body", b""))
            if size + chunk > rule.max_bytes:
                raise HTTPException(413, _too_large_text(rule), headers={"Connection": "close"})
            if budget is not None and not budget.take(chunk):
                raise HTTPException(503, budget.refusal(chunk),
                                    headers={"Retry-After": "1", "Connection": "close"})
            size += chunk
            return message

        try:
            await self.app(scope, counted, send)
        finally:
            if budget is not None:
                budget.give(size)


async def refuse_websocket(send: Send, reason: str) -> None:
    """Close a WebSocket before accepting it: code 1008 (policy violation), the server answers
    the handshake with 403. The reason is cut to the 123 bytes a close frame holds."""
    await send({"type": "websocket.close", "code": 1008,
                "reason": reason.encode()[:123].decode(errors="ignore")})


def _host_name(host: str) -> str:
    """'127.0.0.1:8765' → '127.0.0.1', '[::1]:8765' → '::1', 'Wiki.Local.' → 'wiki.local';
    '' for anything else (refused): a Host is a name or IPv4 address, or an IPv6 address in
    brackets, then nothing or ':' and the port's digits ('[::1]evil.com' is not loopback)."""
    found = _HOST.fullmatch(host.strip().lower())
    if found is None:
        return ""
    return found.group("ipv6") or found.group("name").rstrip(".")


_HOST = re.compile(r"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._-]+))(?::[0-9]{1,5})?",
                   re.ASCII)


class _TooLarge(Exception):
    pass


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body read already, then the real messages."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed


def _too_large(rule: BodyRule) -> JSONResponse:
    return _error(413, "Content Too Large", _too_large_text(rule))


def _too_large_text(rule: BodyRule) -> str:
    return (f"The request body is larger than {rule.max_bytes} bytes ({rule.setting}); "
            f"send less.")


def _error(status: int, error: str, detail: str) -> JSONResponse:
    content: dict[str, Any] = {"error": error, "detail": detail}
    return JSONResponse(content, status_code=status, headers={"Connection": "close"}
                        if status in (408, 413) else None)


__all__ = ["BodyRule", "Guard", "MIN_TOKEN_CHARS", "Policy", "SpoolBudget", "TOKEN_RECIPE",
           "check_token",
           "is_loopback", "refuse_websocket"]
