"""The HTTP protocol the REST server runs: uvicorn's, with Nagle's algorithm always off.

uvicorn answers a request with two writes (head, then body). asyncio turns TCP_NODELAY on only
for sockets it created itself: the listening socket that uvicorn shares between worker
processes (`mindgraph serve --workers N`) comes without it, so every keep-alive answer waited
for the client's delayed ACK — 44 ms instead of 1 ms per request, measured. Setting the option
on each connection makes both modes answer alike (uvloop, used when installed, sets it itself;
the standard asyncio loop, e.g. on Windows, does not).

A request uvicorn cannot parse (a URL over about 64 KB, bytes that are not HTTP) is refused
before it reaches the app, with uvicorn's plain-text 400; ours answers in the JSON every other
error has, saying what the limit is.
"""

from __future__ import annotations

import asyncio
import json
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

    def send_400_response(self, msg: str) -> None:
        """The 400 for a request that is not parseable HTTP, as a JSON error like the app's."""
        body = json.dumps({"error": "BadRequest", "detail": (
            f"{msg.rstrip('.')}: its request line or a header is not well-formed HTTP/1.1, "
            f"or its URL is over 64 KB (a search query is at most 1,000 characters).")}
        ).encode("utf-8")
        head = [b"HTTP/1.1 400 Bad Request\r\n"]
        for name, value in self.server_state.default_headers:
            head.append(name + b": " + value + b"\r\n")
        head.append(b"content-type: application/json\r\ncontent-length: "
                    + str(len(body)).encode("ascii") + b"\r\nconnection: close\r\n\r\n")
        self.transport.write(b"".join(head) + body)
        self.transport.close()
