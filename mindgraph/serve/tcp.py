"""The HTTP protocol the REST server runs: uvicorn's, with Nagle's algorithm always off.

uvicorn answers a request with two writes (head, then body). asyncio turns TCP_NODELAY on only
for sockets it created itself: the listening socket that uvicorn shares between worker
processes (`mindgraph serve --workers N`) comes without it, so every keep-alive answer waited
for the client's delayed ACK — 44 ms instead of 1 ms per request, measured. Setting the option
on each connection makes both modes answer alike (uvloop, used when installed, sets it itself;
the standard asyncio loop, e.g. on Windows, does not).
"""

from __future__ import annotations

import asyncio
import socket

from uvicorn.protocols.http.auto import AutoHTTPProtocol


class NoDelayHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
    """uvicorn's HTTP protocol (httptools when installed, else h11) with TCP_NODELAY on."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Turn Nagle off for this connection, then serve it as usual."""
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        super().connection_made(transport)
