"""MCP sessions over HTTP, per identity: each session belongs to the identity (token) that
opened it, and one identity holds at most ``serve.mcp_max_sessions_per_identity`` of them.

The SDK caps the sessions of the whole server (``serve.mcp_max_sessions``; past it a new one
is 503 for everyone). Without a share per identity, one token that kept calling
``initialize`` took every session and the server refused all the others until its sessions
went idle (30 minutes). Here an identity at its share that opens one more closes its own
least recently used session first (a DELETE, as its client would send), so it never takes
another identity's room; and a request naming a session another identity opened is answered
404, as the MCP transport answers a session it does not know (the session's client is
told nothing of who else exists).

ASGI middleware between ``BearerAuth`` (which puts the identity in the scope) and the SDK's
app; used only when the server authenticates (without a token every caller is the same).
A request naming several sessions is refused (400): which one the SDK would use is not the
one to guess.
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSION_HEADER = b"mcp-session-id"
_TEMPLATE_KEYS = ("type", "asgi", "http_version", "scheme", "server", "client", "root_path",
                  "path", "raw_path")


class SessionOwners:
    """Binds each session to its identity and keeps each identity within ``per_identity``
    sessions (0: no share). ``identity_of(scope)`` names the request's identity."""

    def __init__(self, app: ASGIApp, per_identity: int, identity_of: Callable[[Scope], str]):
        self.app = app
        self.per_identity = per_identity
        self._identity_of = identity_of
        self._owner: dict[str, str] = {}
        # per identity: its sessions, least recently used first, each with the scope (path,
        # host) to close it through
        self._sessions: dict[str, OrderedDict[str, dict[str, Any]]] = {}
        self._opening: dict[str, int] = {}

    def sessions_of(self, identity: str) -> list[str]:
        """The sessions ``identity`` holds, least recently used first."""
        return list(self._sessions.get(identity, ()))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        who = self._identity_of(scope)
        named = [v for k, v in scope.get("headers", ()) if k == SESSION_HEADER]
        if len(named) > 1:
            # the SDK routes by the first, a dict of the headers holds the last: checking one
            # while the SDK used the other let a token act in (and DELETE) any session
            await _answer(send, 400, -32600, "Send one Mcp-Session-Id header, not several.")
            return
        session = named[0] if named else None
        if session is not None:
            await self._in_session(who, session.decode("latin-1"), scope, receive, send)
        elif scope.get("method") == "POST":
            await self._opening_request(who, scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _in_session(self, who: str, session: str, scope: Scope, receive: Receive,
                          send: Send) -> None:
        owner = self._owner.get(session)
        if owner is not None and owner != who:
            # answered by the SDK itself for an id no one holds: byte for byte what an
            # unknown session gets, so the answer does not tell that this one exists
            await self.app(_with_session(scope, secrets.token_hex(16)), receive, send)
            return
        if owner is not None:
            self._sessions[owner].move_to_end(session)
        status = await _status_of(self.app, scope, receive, send)
        if owner is not None and (status == 404 or (scope.get("method") == "DELETE"
                                                    and status is not None and status < 400)):
            self._forget(session)               # ended (DELETE) or expired (idle)

    async def _opening_request(self, who: str, scope: Scope, receive: Receive,
                               send: Send) -> None:
        if self.per_identity:
            while self._sessions.get(who) and \
                    len(self._sessions[who]) + self._opening.get(who, 0) >= self.per_identity:
                await self._close(next(iter(self._sessions[who].items())))
            if self._opening.get(who, 0) >= self.per_identity:
                await _too_many(send, self.per_identity)
                return
        self._opening[who] = self._opening.get(who, 0) + 1
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                found = dict(message.get("headers", ())).get(SESSION_HEADER)
                if found:
                    opened.append(found.decode("latin-1"))
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self._opening[who] -= 1
            if not self._opening[who]:
                del self._opening[who]
        for session in opened:
            self._owner[session] = who
            self._sessions.setdefault(who, OrderedDict())[session] = {
                **{k: scope[k] for k in _TEMPLATE_KEYS if k in scope},
                "host": dict(scope.get("headers", ())).get(b"host", b"")}
        while self.per_identity and len(self._sessions.get(who, ())) > self.per_identity:
            await self._close(next(iter(self._sessions[who].items())))

    async def _close(self, item: tuple[str, dict[str, Any]]) -> None:
        """End a session as its client would (DELETE through the SDK), and forget it."""
        session, template = item
        self._forget(session)
        scope = {k: v for k, v in template.items() if k != "host"} | {
            "method": "DELETE", "query_string": b"", "state": {},
            "headers": [(b"host", template["host"]), (SESSION_HEADER, session.encode())]}

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(_: Message) -> None:
            pass

        await self.app(scope, receive, discard)

    def _forget(self, session: str) -> None:
        owner = self._owner.pop(session, None)
        if owner is not None:
            mine = self._sessions.get(owner)
            if mine is not None:
                mine.pop(session, None)
                if not mine:
                    del self._sessions[owner]


async def _status_of(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> int | None:
    status: list[int] = []

    async def watch(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        await send(message)

    await app(scope, receive, watch)
    return status[0] if status else None


async def _answer(send: Send, status: int, code: int, message: str) -> None:
    """A JSON-RPC error without an id, as the SDK's transport answers."""
    body = json.dumps({"jsonrpc": "2.0", "id": None,
                       "error": {"code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _with_session(scope: Scope, session: str) -> Scope:
    """``scope`` asking for ``session`` instead of the session it named."""
    headers = [(k, v) for k, v in scope.get("headers", ()) if k != SESSION_HEADER]
    return {**scope, "headers": [*headers, (SESSION_HEADER, session.encode("latin-1"))]}


async def _too_many(send: Send, share: int) -> None:
    await _answer(send, 429, -32603,
                  f"Too many sessions being opened at once by this identity: at most {share} "
                  f"(serve.mcp_max_sessions_per_identity). Retry once they are open.")


__all__ = ["SessionOwners"]
