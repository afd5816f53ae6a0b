"""The bearer-token gate in front of the whole REST app: once a server needs tokens (any
address but loopback, or a token or identities configured), no request reaches a route
without one, unless its path is on ``PUBLIC`` — which says why for each entry.

Each route also checks the token itself (``Caller`` in serve/rest_routing.py), but the routes
FastAPI adds on its own (/openapi.json, /docs, /docs/oauth2-redirect, /redoc), the
dashboard's, and any route added later without the ``route`` helper are covered only here:
the gate sees every HTTP request, so a new route is guarded unless someone adds it to
``PUBLIC`` with a reason (tests/serve/test_every_route_needs_a_token.py enumerates the app's
routes and holds the same list). The one request that may stand in for a token is one to the
dashboard's attachment route carrying a ticket its token signed for that very file
(serve/attachment_tickets.py): an ``<img>`` or a link cannot send a header.

Fair between identities: the gate names the identity a request's work is queued for
(``lanes.CALLER``), so the lanes take each identity's calls in turn (serve/lanes.py), and it
lets one identity have at most ``serve.requests_per_identity`` requests in flight (from here
until the answer's last byte): past it, that identity's next request is 429 with
Retry-After before any other work — parsing its parameters, routing, queueing — while every
other identity is served. Without it, one token keeping a hundred searches in flight kept
the event loop and the query lane busy with its own, and every other agent's searches waited
behind them (504 once past the budget). The 429 is sent half a second late
(``REFUSAL_DELAY_S``): a flooder that retries at once, Retry-After unread, had the server
send thousands of refusals a second, and those alone held the other agents up. Of an
identity's requests in flight, only ``serve.share_per_identity`` are worked on at once while
another identity is served (serve/identity_shares.py): the rest wait here, admitted.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import Unauthenticated
from ..scopes import Authenticator
from .attachment_tickets import ticket_authorization
from .guard import refuse_websocket
from .identity_shares import Shares
from .lanes import CALLER

#: path (or prefix, ending in "/") → why it answers without a token
PUBLIC: dict[str, str] = {
    "/health": "liveness for load balancers and probes; 'ok' and the version, the page count "
               "only for a caller whose token it checks itself",
    "/": "the dashboard's page: no data in it, and a browser opening a URL cannot send a "
         "bearer token (the page asks for the token and sends it with every data request)",
    "/dashboard/static/": "the dashboard's own scripts and styles, the same for everyone: no "
                          "data, loaded by the page before it has a token",
}


def is_public(path: str) -> bool:
    """True when ``path`` answers without a token (see ``PUBLIC``)."""
    return path in PUBLIC or any(prefix.endswith("/") and prefix != "/" and
                                 path.startswith(prefix) for prefix in PUBLIC)


RETRY_AFTER_S = 1
REFUSAL_DELAY_S = 0.5       # a 429 is sent this long after the request came


def refused(auth: Authenticator, scope: Scope) -> bool:
    """Whether ``TokenGate`` answers this HTTP request 401 (the Guard in front then reads
    none of its body): a token is needed, the path is not public, and neither one
    Authorization header with a token of this server nor a signed ticket is there."""
    if not auth.required or is_public(scope.get("path", "")) or \
            ticket_authorization(auth, scope) is not None:
        return False
    headers = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
    if len(headers) != 1:
        return True
    try:
        auth.identity_for(headers[0])
    except Unauthenticated:
        return True
    return False


class TokenGate:
    """ASGI middleware: 401 for an HTTP request without a valid bearer token, unless its path
    is public or the server needs no token (loopback with none configured); a WebSocket
    handshake without one is closed before it is accepted, whatever its path. 429 for a
    request of an identity that has ``per_identity`` in flight already (0: no limit); of the
    ones in flight, ``share`` are worked on at once while other identities are served (see
    serve/identity_shares.py; 0: all of them)."""

    def __init__(self, app: ASGIApp, auth: Authenticator, per_identity: int = 0,
                 share: int = 0):
        self.app = app
        self._auth = auth
        self._per_identity = per_identity
        self._in_flight: Counter[str] = Counter()    # the event loop's own: no lock
        self.shares = Shares(share)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan" or not self._auth.required or \
                (kind == "http" and is_public(scope.get("path", ""))):
            await self.app(scope, receive, send)
            return
        if kind == "http" and (signed := ticket_authorization(self._auth, scope)) is not None:
            # as if the token that signed the ticket were sent: the route, the caller's view
            # and its lane read that header, as for any request
            scope = {**scope, "headers": [*scope.get("headers", ()), (b"authorization", signed)]}
        headers = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
        try:
            if len(headers) > 1:    # two tokens: which one the route reads is not ours to guess
                raise Unauthenticated("Send one Authorization header, not several.")
            identity = self._auth.identity_for(headers[0] if headers else None)
        except Unauthenticated as exc:
            if kind != "http":      # a WebSocket: no public path, refused before its accept
                await refuse_websocket(send, f"Unauthorized: {exc}")
                return
            await JSONResponse({"error": "Unauthorized", "detail": str(exc)}, status_code=401,
                               headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        name = identity.name
        held = self._in_flight[name]
        if self._per_identity and held >= self._per_identity and kind == "http":
            # answered late: a client that retries at once without reading Retry-After
            # waits here instead of keeping the event loop busy refusing it
            await asyncio.sleep(REFUSAL_DELAY_S)
            await JSONResponse(
                {"error": "TooManyRequests",
                 "detail": f"{held} requests of yours are in flight (serve."
                           f"requests_per_identity): wait for their answers, then retry. Other "
                           f"identities are served meanwhile."},
                status_code=429, headers={"Retry-After": str(RETRY_AFTER_S)},
            )(scope, receive, send)
            return
        self._in_flight[name] = held + 1
        caller = CALLER.set(name)
        try:
            if kind == "http":
                await self._worked_on(name, scope, receive, send)
            else:
                await self.app(scope, receive, send)
        finally:
            CALLER.reset(caller)
            self._in_flight[name] -= 1
            if not self._in_flight[name]:
                del self._in_flight[name]

    async def _worked_on(self, name: str, scope: Scope, receive: Receive, send: Send) -> None:
        """The request, once its identity's share lets it start; the share is given back when
        its answer starts (a stream then goes on outside it)."""
        await self.shares.start(name)
        working = True

        async def answer(message: dict) -> None:
            nonlocal working
            if working and message["type"] == "http.response.start":
                working = False
                self.shares.finish(name)
            await send(message)

        try:
            await self.app(scope, receive, answer)
        finally:
            if working:
                self.shares.finish(name)


__all__ = ["PUBLIC", "RETRY_AFTER_S", "TokenGate", "is_public", "refused"]
