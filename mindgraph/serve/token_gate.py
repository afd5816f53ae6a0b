"""The bearer-token gate in front of the whole REST app: once a server needs tokens (any
address but loopback, or a token or identities configured), no request reaches a route
without one, unless its path is on ``PUBLIC`` — which says why for each entry.

Each route also checks the token itself (``Caller`` in serve/rest_routing.py), but the routes
FastAPI adds on its own (/openapi.json, /docs, /docs/oauth2-redirect, /redoc), the
dashboard's, and any route added later without the ``route`` helper are covered only here:
the gate sees every HTTP request, so a new route is guarded unless someone adds it to
``PUBLIC`` with a reason (tests/serve/test_every_route_needs_a_token.py enumerates the app's
routes and holds the same list).
"""

from __future__ import annotations

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import Unauthenticated
from ..scopes import Authenticator

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


class TokenGate:
    """ASGI middleware: 401 for an HTTP request without a valid bearer token, unless its path
    is public or the server needs no token (loopback with none configured)."""

    def __init__(self, app: ASGIApp, auth: Authenticator):
        self.app = app
        self._auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._auth.required or \
                is_public(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        headers = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
        try:
            if len(headers) > 1:    # two tokens: which one the route reads is not ours to guess
                raise Unauthenticated("Send one Authorization header, not several.")
            self._auth.identity_for(headers[0] if headers else None)
        except Unauthenticated as exc:
            await JSONResponse({"error": "Unauthorized", "detail": str(exc)}, status_code=401,
                               headers={"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        await self.app(scope, receive, send)


__all__ = ["PUBLIC", "TokenGate", "is_public"]
