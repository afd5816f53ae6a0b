"""Old REST parameter names that still work.

The page a route is about is ``page`` everywhere and a section id is ``section_id`` (as in the
MCP tools); ``/page?name=`` and ``/section?id=`` were the first names. This ASGI middleware
renames an old key in the query string before routing, so the OpenAPI document shows one name
per parameter and old clients keep working. A request that gives both keeps the new one.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

# route → {old key: new key}
OLD_NAMES: dict[str, dict[bytes, bytes]] = {
    "/page": {b"name": b"page"},
    "/section": {b"id": b"section_id"},
}


def renamed(query: bytes, renames: dict[bytes, bytes]) -> bytes:
    """``query`` with each old key renamed, unless the new key is given too (values untouched)."""
    parts = query.split(b"&")
    keys = {part.partition(b"=")[0] for part in parts}
    out = []
    for part in parts:
        key, eq, value = part.partition(b"=")
        new = renames.get(key)
        out.append(new + eq + value if new is not None and new not in keys else part)
    return b"&".join(out)


class OldParameterNames:
    """ASGI middleware: rename the old query keys of ``OLD_NAMES`` to the current ones."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        renames = OLD_NAMES.get(scope.get("path", "")) if scope["type"] == "http" else None
        if renames and scope.get("query_string"):
            scope = dict(scope, query_string=renamed(scope["query_string"], renames))
        await self.app(scope, receive, send)
