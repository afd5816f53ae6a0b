"""A file response with a deadline: the dashboard's attachments (an image, a pdf, a video).

Streaming a big file is legitimate, so the request's budget (``serve.request_timeout_s``,
30 s) does not apply to the bytes: the handler that finds the file runs within it, and the
streaming starts after. But a response streams on the event loop for as long as its client
reads, and a client that reads slowly (or stops reading with its window full) held the
connection, its slot in ``serve.max_connections`` and an open file forever: a 3 GB file
was still streaming past any budget. Here the whole response must be sent within
``serve.attachment_timeout_s`` (600 s by default, the time an upload may take to arrive);
past it the server stops sending and closes the connection (the client sees fewer bytes than
Content-Length promised, an error, never a silently short file). A client that needs longer
(a video, a big pdf over a slow link) asks for the rest with a ``Range`` request: the route
answers ``206`` with the part asked for, and each part has the whole budget.

Why a deadline and not a size limit: a size limit does nothing about a slow reader (a 10 MB
picture read a byte a second holds the connection as long as a 3 GB one), and a file in raw/
is the user's own, to be shown whatever its size. Why the whole response and not a stall
timeout between writes (nginx's ``send_timeout``): a client that reads just enough to never
stall would keep the connection for days.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from starlette.responses import FileResponse
from starlette.types import Receive, Scope, Send

from .tcp import CUT_RESPONSE

_LOG = logging.getLogger("mindgraph.serve")


class TimedFileResponse(FileResponse):
    """A ``FileResponse`` whose sending stops ``timeout_s`` after it starts (see the module
    docstring); ``setting`` names the setting in the log line."""

    def __init__(self, *args: Any, timeout_s: float,
                 setting: str = "serve.attachment_timeout_s", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout_s, self.setting = timeout_s, setting

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        sent = 0

        async def counted(message: dict) -> None:
            nonlocal sent
            await send(message)
            sent += len(message.get("body", b""))

        with anyio.move_on_after(self.timeout_s) as deadline:
            await super().__call__(scope, receive, counted)
        if deadline.cancelled_caught:
            # our server's protocol ends it on purpose (tcp.py); elsewhere, returning with the
            # body unfinished makes the server close the connection (and log an error)
            cut = scope.get("extensions", {}).get(CUT_RESPONSE)
            if cut is not None:
                cut["close"]()
            _LOG.warning("%s: stopped after %g s with %d bytes sent (%s); the client can ask "
                         "for the rest with a Range request.", self.path, self.timeout_s,
                         sent, self.setting)


__all__ = ["TimedFileResponse"]
