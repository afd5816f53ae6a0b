"""HEAD on every GET route of the REST app: the answer a GET would get, status and headers
(Content-Length included), without the body — what Docker healthchecks, load balancers and
``curl -I`` send. FastAPI registers only the methods a route names, so without this a
``HEAD /health`` was 405.

The middleware is the outermost one (serve/rest.py): everything behind it — the Host and
Origin ``Guard``, the ``TokenGate``, each route's own token check, the rewriting of paths
(whose body length the Content-Length tells) — treats a HEAD exactly as the GET it stands for,
refusals included, and only the body is dropped on the way out. A route without GET still
answers 405, its ``Allow`` header unchanged.

A streamed answer (the server-sent events of ``GET /status?stream=true``, a file) is stopped
at its first body chunk, once the headers are out (the chunk's ``send`` raises into the app),
so a HEAD neither keeps an
event stream polling on the server until its jobs end (up to ``serve.reindex_timeout_s``) nor
reads a whole attachment to throw it away.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class _Answered(Exception):
    """Raised into the app at a streamed HEAD answer's first body chunk: it is complete."""


class HeadAsGet:
    """ASGI middleware: run a HEAD request as a GET and send the response without its body,
    stopping a streamed one at its first chunk."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return
        finished = False

        async def send_headers_only(message: Message) -> None:
            nonlocal finished
            if message["type"] != "http.response.body":
                await send(message)
                return
            if not finished:            # one empty, final body: the answer is complete
                finished = True
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            if message.get("more_body", False):     # a streamed body: stop the app here
                raise _Answered

        try:
            await self.app({**scope, "method": "GET"}, receive, send_headers_only)
        except _Answered:
            pass


__all__ = ["HeadAsGet"]
