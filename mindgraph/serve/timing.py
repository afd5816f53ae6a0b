"""The ``Server-Timing`` header of the REST app: how long the app took over a request."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class ServerTiming:
    """Adds ``Server-Timing: app;dur=<ms>`` to every response.

    Plain ASGI rather than ``@app.middleware("http")``: Starlette's BaseHTTPMiddleware runs
    each request through an extra task and memory streams, a measurable cost per request."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def send_timed(message: dict) -> None:
            if message["type"] == "http.response.start":
                took = f"app;dur={(time.perf_counter() - started) * 1e3:.1f}".encode()
                message = {**message, "headers": [*message.get("headers", ()),
                                                  (b"server-timing", took)]}
            await send(message)

        await self.app(scope, receive, send_timed)


__all__ = ["ServerTiming"]
