"""The HTTP protocol both servers run (`mindgraph serve`, `mindgraph mcp --transport http`):
uvicorn's httptools protocol with Nagle's algorithm off, a deadline on request heads and a cap
on open connections.

Nagle: uvicorn answers a request with two writes (head, then body). asyncio turns TCP_NODELAY
on only for sockets it created itself: the listening socket that uvicorn shares between worker
processes (`mindgraph serve --workers N`) comes without it, so every keep-alive answer waited
for the client's delayed ACK — 44 ms instead of 1 ms per request, measured. Setting the option
on each connection makes both modes answer alike (uvloop, used when installed, sets it itself;
the standard asyncio loop, e.g. on Windows, does not).

Slow heads (slowloris): uvicorn times out only idle keep-alive connections, so a client that
connects and sends nothing, or half a request line, or headers a byte a minute, held its
connection (and a file descriptor) forever. Here a request's line and headers must be complete
within ``serve.header_timeout_s`` of the connection opening or of the request's first byte
(a keep-alive connection waiting for its next request is still closed by uvicorn's keep-alive
timeout); past it the client gets a 408 and the connection closes. The body is not timed here
(a large upload whose headers came promptly is bounded by the app's own budgets).

Open connections: past ``serve.max_connections`` at once a new connection gets a 503 and is
closed before anything is read. uvicorn's ``limit_concurrency`` does not do this: it answers 503
only once a request's headers are parsed, so it never sees a connection whose headers never
finish, and it keeps every connection open. The cap counts connections before any token is
checked, so one client holding idle sockets could fill it: past
``serve.max_connections_per_client`` from one address, that client's next connection gets a
429 and is closed, while other addresses are still served (0: no share; behind a reverse
proxy every client has the proxy's address).

Closing with bytes unsent: asyncio's ``close()`` waits for the write buffer to drain, so a
client that stopped reading (an attachment cut off at its deadline: timed_file.py; any answer
a client never reads) kept its socket and its place in ``serve.max_connections`` for as long
as it stayed connected. A close that leaves bytes in the buffer becomes an abort (the socket
is dropped) ``CLOSE_GRACE_S`` later unless they drain first.

Cutting a response short on purpose: an app that returns before its body is complete makes
uvicorn log an error ("ASGI callable returned without completing response") and close the
connection. A response that stops by design (an attachment past its deadline: timed_file.py)
finds ``CUT_RESPONSE`` in its scope's extensions: calling it closes the connection and tells
uvicorn the response is over, so only the app's own warning is logged.

Large heads: uvicorn's httptools protocol keeps a request's headers in memory however large
they are (the parser buffers a header value, uvicorn appends each header), so one connection,
before any token is checked, could send a gigabyte of headers within the head's deadline and
the process held it (300 MB of headers took 1.6 s and were answered 200). A request's line and
headers may take at most ``serve.max_header_bytes`` (128 KiB: above the parser's own limit of
about 64 KB on a URL, which keeps its 400); past it the client gets a 431 and the connection
closes, the bytes counted as they arrive (at most one read past the limit is held).

Trailers: a chunked body may end with trailer fields, which uvicorn appended to the request's
headers (after the Guard and the token gate had read them) with no bound, after the head's
count had stopped: a client with no token sent 800 MB of them in 3 s after its 401, and the
process held them. Trailers are dropped (nothing reads them; they never join the headers), and
the bytes of whole reads that arrive after the last chunk's header, before the request ends,
are counted against ``serve.max_header_bytes`` as a head's are: past it the connection closes
(with a 431 when nothing was answered yet).

The rest of a request answered early: a request refused before its body was read (a 401, a
415) left the connection open for the rest of the body with no deadline, and one whose body
ended after its answer was then idle with no timer at all (uvicorn's keep-alive timer, armed
at the answer, was stopped by the body's bytes): a client with no token held a connection for
ever by sending a body a byte at a time after its 401, or by sending it whole and nothing
more. Now the rest of such a request must arrive within ``serve.header_timeout_s`` of the
answer, or the connection closes; once it has, the connection waits for its next request under
uvicorn's keep-alive timeout, as after any answer.

A request uvicorn cannot parse (a URL over about 64 KB, bytes that are not HTTP) is refused
before it reaches the app, with uvicorn's plain-text 400; ours answers in the JSON every other
error has, saying what the limit is. The parser also refuses a URL holding bytes that are not
ASCII (``curl "…/search?q=ワークスペース"`` sends the UTF-8 as it is; browsers and HTTP
libraries percent-encode it): that 400 says so and how to encode it, as a user of a Japanese
or Chinese vault would otherwise read "not well-formed" and not know why.
"""

from __future__ import annotations

import asyncio
import functools
import json
import socket
import time
from typing import Any, Callable

# httptools is a dependency, so uvicorn's "auto" protocol is always this one; the deadline on
# heads hooks its parser callbacks (on_message_begin, on_headers_complete).
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# the scope extension holding {"close": f}: f() ends this response short, on purpose
CUT_RESPONSE = "mindgraph.cut_response"
_REFUSAL_LOG_EVERY_S = 10.0     # a flood of refused connections logs one line per this
CLOSE_GRACE_S = 5.0             # a closed connection's unsent bytes may drain this long


class _GraceClose:
    """A connection's transport whose ``close()``, when bytes are still waiting to be sent,
    is followed by an abort ``grace_s`` later (the module docstring); all else is the
    transport's own."""

    def __init__(self, transport: asyncio.Transport, grace_s: float) -> None:
        self._transport, self._grace_s = transport, grace_s

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def close(self) -> None:
        transport = self._transport
        closing = transport.is_closing()
        transport.close()
        if not closing and transport.get_write_buffer_size():
            # a no-op when the buffer drained and the connection ended meanwhile
            asyncio.get_running_loop().call_later(self._grace_s, transport.abort)


class NoDelayHTTPProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with TCP_NODELAY on, a deadline on each request's line and
    headers and a cap on open connections. Build it with :func:`http_protocol`."""

    _last_refusal_log = 0.0

    def __init__(self, *args: Any, header_timeout_s: float | None = None,
                 max_connections: int | None = None, max_per_client: int = 0,
                 max_header_bytes: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.header_timeout_s = header_timeout_s
        self.max_header_bytes = max_header_bytes
        self._head_refused = False
        self._in_head = True            # reading a request's line and headers (not a body)
        self._head_bytes = 0            # bytes received since that head began
        self.max_connections = max_connections
        self.max_per_client = max_per_client
        self._head_timer: asyncio.TimerHandle | None = None
        self._refused = False
        self._peer_host: str | None = None
        self._last_bytes = b""          # the chunk being parsed, for the 400's reason
        self._messages = 0              # requests whose last byte was parsed
        self._past_chunk_header = False     # no body byte since the last chunk's header
        self._tail_bytes = 0            # bytes of whole reads after the last chunk (trailers)
        self._rest_timer: asyncio.TimerHandle | None = None     # see on_response_complete

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Refuse the connection past ``max_connections``, or past ``max_per_client`` from
        its address; else turn Nagle off, serve it as usual, and start the clock for its
        first request's head."""
        if self.max_connections is not None \
                and len(self.connections) >= self.max_connections:
            self._refuse(transport)
            return
        peer = transport.get_extra_info("peername")
        self._peer_host = peer[0] if isinstance(peer, (tuple, list)) and peer else None
        if self._over_share():
            self._refuse_client(transport)
            return
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        super().connection_made(_GraceClose(transport, CLOSE_GRACE_S))  # type: ignore[arg-type]
        self._start_head_clock()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the head clock, then let uvicorn clean up."""
        self._stop_head_clock()
        self._stop_rest_clock()
        if self._refused:
            return
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Ignore bytes on a refused connection (it is closing)."""
        if self._refused or self._head_refused:
            return
        self._last_bytes = data
        if self._in_head:
            self._head_bytes += len(data)
        # a whole read that came after the last chunk's header, in the same request, holds
        # no body: trailer fields, which the parser keeps until each one ends
        trailing, message = not self._in_head and self._past_chunk_header, self._messages
        super().data_received(data)
        if self.max_header_bytes is None or self.transport.is_closing():
            return
        if self._in_head and self._head_bytes > self.max_header_bytes:
            self._head_too_large()
        elif trailing and self._past_chunk_header and self._messages == message:
            self._tail_bytes += len(data)
            if self._tail_bytes > self.max_header_bytes:
                self._trailers_too_large()

    def on_header(self, name: bytes, value: bytes) -> None:
        """A header of the head; a trailer field (after a chunked body) is dropped: nothing
        reads one, and appended to the headers it changed them after they were checked."""
        if self._in_head:
            super().on_header(name, value)

    def on_chunk_header(self) -> None:
        """A chunk's size line: its body follows, or, after the last one, its trailers."""
        self._past_chunk_header = True

    def on_body(self, body: bytes) -> None:
        """Body bytes: what came before them was no trailer."""
        self._past_chunk_header = False
        self._tail_bytes = 0
        super().on_body(body)

    def on_message_begin(self) -> None:
        """A request's first byte: its head must be complete within ``header_timeout_s`` (from
        the connection's opening for the first request)."""
        super().on_message_begin()
        if self._head_timer is None:
            self._start_head_clock()

    def on_headers_complete(self) -> None:
        """The head is complete: the body (if any) is not timed here. The request's scope
        gets ``CUT_RESPONSE`` (see the module docstring)."""
        self._stop_head_clock()
        self._in_head = False
        if self.max_header_bytes is not None and self._parsed_head_bytes() > \
                self.max_header_bytes:
            self._head_too_large()      # a whole head that came in one read
            raise _HeadTooLarge         # stops the parser: no app, no body
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is not None and cycle.scope is self.scope:     # not an upgrade
            self.scope.setdefault("extensions", {})[CUT_RESPONSE] = {
                "close": functools.partial(_cut, cycle)}

    def on_message_complete(self) -> None:
        """The request is whole: what arrives next is the next request's head. When it was
        answered already, the connection now waits for that head under uvicorn's keep-alive
        timeout, as after an answer (the body's bytes had stopped that timer)."""
        super().on_message_complete()
        self._in_head, self._head_bytes = True, 0
        self._messages += 1
        self._past_chunk_header, self._tail_bytes = False, 0
        if self._rest_timer is not None:
            self._stop_rest_clock()
            if not self.pipeline and not self.transport.is_closing():
                self._unset_keepalive_if_required()
                self.timeout_keep_alive_task = self.loop.call_later(
                    self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def on_response_complete(self) -> None:
        """An answer is sent. When the request it answers is not whole yet (refused before its
        body was read: a 401, a 415), the rest must come within ``header_timeout_s``, else
        the connection closes: its bytes would otherwise keep it open without end."""
        super().on_response_complete()
        if not self._in_head and self.header_timeout_s is not None \
                and self._rest_timer is None and not self.transport.is_closing():
            self._rest_timer = self.loop.call_later(self.header_timeout_s, self._rest_too_slow)

    def _parsed_head_bytes(self) -> int:
        """The size of the head just parsed, as sent (request line and header lines)."""
        return len(self.url) + 16 + sum(len(name) + len(value) + 4
                                        for name, value in self.headers)

    def _head_too_large(self) -> None:
        """The head passed ``max_header_bytes``: 431 and close (nothing of it is kept)."""
        self._stop_head_clock()
        self._head_refused = True       # the rest of its bytes are not parsed
        self._log_refusal("Refusing a request head over %d bytes (431): "
                          "serve.max_header_bytes.", self.max_header_bytes)
        self._answer_and_close(431, "Request Header Fields Too Large", "HeadersTooLarge", (
            f"The request line and headers are over {self.max_header_bytes:,} bytes "
            f"(serve.max_header_bytes): send shorter headers (a token, a cookie and a URL "
            f"take a few kB)."))

    def send_400_response(self, msg: str) -> None:
        """The 400 for a request that is not parseable HTTP, as a JSON error like the app's."""
        if self._head_refused:          # answered 431 already (the parser stopped for it)
            return
        target = unencoded_target(self._last_bytes)
        if target is not None:
            detail = (f"{msg.rstrip('.')}: the URL holds characters that are not "
                      f"percent-encoded ({target}). Send them as UTF-8 percent escapes "
                      f"('ワ' as %E3%83%AF): curl -G URL --data-urlencode 'q=…' does it, as "
                      f"browsers and HTTP libraries do.")
        else:
            detail = (f"{msg.rstrip('.')}: its request line or a header is not well-formed "
                      f"HTTP/1.1, or its URL is over 64 KB (a search query is at most 1,000 "
                      f"characters).")
        self._answer_and_close(400, "Bad Request", "BadRequest", detail)

    def _trailers_too_large(self) -> None:
        """The trailers passed ``max_header_bytes``: 431 and close, or only close when an
        answer has begun already (a 401 sent before the body)."""
        self._head_refused = True       # the rest of its bytes are not parsed
        self._log_refusal("Refusing a request's trailers over %d bytes: "
                          "serve.max_header_bytes.", self.max_header_bytes)
        cycle = self.cycle
        if cycle is not None and cycle.response_started:
            _cut(cycle)
            return
        if cycle is not None:
            cycle.disconnected = True   # the app's answer, if it comes, is not sent
        self._answer_and_close(431, "Request Header Fields Too Large", "HeadersTooLarge", (
            f"The request's trailer fields are over {self.max_header_bytes:,} bytes "
            f"(serve.max_header_bytes): send the body without trailers."))

    def _rest_too_slow(self) -> None:
        """The rest of an answered request did not come in time: close."""
        self._rest_timer = None
        if not self.transport.is_closing():
            self._log_refusal("Closing a connection whose request, answered, was not sent "
                              "whole within %g s (serve.header_timeout_s).",
                              self.header_timeout_s)
            self.transport.close()

    def _stop_rest_clock(self) -> None:
        if self._rest_timer is not None:
            self._rest_timer.cancel()
            self._rest_timer = None

    def _start_head_clock(self) -> None:
        if self.header_timeout_s is not None:
            self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_too_slow)

    def _stop_head_clock(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        """The head did not arrive in time: 408 and close, or, when an answer to an earlier
        (pipelined) request is still being written, close once it is done."""
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.keep_alive = False
            return
        self._answer_and_close(408, "Request Timeout", "RequestTimeout", (
            f"The request line and headers did not arrive within {self.header_timeout_s:g} s "
            f"(serve.header_timeout_s): send a request's head at once."))

    def _over_share(self) -> bool:
        """Does this connection's address already hold ``max_per_client`` connections?
        (Counted only once that many are open at all: most of the time there are fewer.)"""
        share = self.max_per_client
        if not share or self._peer_host is None or len(self.connections) < share:
            return False
        host = self._peer_host
        return sum(1 for c in self.connections
                   if getattr(c, "_peer_host", None) == host) >= share

    def _refuse(self, transport: asyncio.Transport) -> None:
        self._log_refusal("Refusing connections (503): %d are open, serve.max_connections.",
                          len(self.connections))
        self._refused = True
        self.transport = transport
        self._answer_and_close(503, "Service Unavailable", "TooManyConnections", (
            f"{self.max_connections} connections are open (serve.max_connections): retry "
            f"later."))

    def _refuse_client(self, transport: asyncio.Transport) -> None:
        self._log_refusal("Refusing connections from %s (429): it holds %d, "
                          "serve.max_connections_per_client.", self._peer_host,
                          self.max_per_client)
        self._refused = True
        self.transport = transport
        self._answer_and_close(429, "Too Many Requests", "TooManyConnections", (
            f"This client address holds {self.max_per_client} open connections "
            f"(serve.max_connections_per_client): close some, or reuse them (keep-alive), "
            f"and retry."))

    def _log_refusal(self, message: str, *args: Any) -> None:
        now = time.monotonic()
        if now - NoDelayHTTPProtocol._last_refusal_log >= _REFUSAL_LOG_EVERY_S:
            NoDelayHTTPProtocol._last_refusal_log = now
            self.logger.warning(message, *args)

    def _answer_and_close(self, status: int, reason: str, error: str, detail: str) -> None:
        # UTF-8 as the app's answers are: escaped, the URL it quotes read '\u30ef…' in curl
        body = json.dumps({"error": error, "detail": detail}, ensure_ascii=False).encode("utf-8")
        head = [f"HTTP/1.1 {status} {reason}\r\n".encode("ascii")]
        for name, value in self.server_state.default_headers:
            head.append(name + b": " + value + b"\r\n")
        head.append(b"content-type: application/json\r\ncontent-length: "
                    + str(len(body)).encode("ascii") + b"\r\nconnection: close\r\n\r\n")
        self.transport.write(b"".join(head) + body)
        self.transport.close()


class _HeadTooLarge(Exception):
    """Raised in a parser callback to stop parsing a head over ``max_header_bytes``."""


def unencoded_target(chunk: bytes, shown: int = 80) -> str | None:
    """The URL of the request line that opens ``chunk`` when it holds bytes that are not
    ASCII (shown decoded, cut to ``shown`` characters), else None."""
    line = chunk.split(b"\n", 1)[0]
    parts = line.split(b" ")
    if len(parts) < 2 or parts[1].isascii():
        return None
    text = parts[1].decode("utf-8", "replace")
    return repr(text if len(text) <= shown else text[:shown] + "…")


def _cut(cycle: Any) -> None:
    """End ``cycle``'s response where it is: the connection closes (a client sees fewer bytes
    than Content-Length promised, an error), and uvicorn sends nothing more and logs nothing
    when the app returns, as for a client gone."""
    cycle.keep_alive = False
    cycle.disconnected = True
    cycle.transport.close()


def http_protocol(header_timeout_s: float, max_connections: int,
                  max_per_client: int = 0,
                  max_header_bytes: int | None = None) -> Callable[..., Any]:
    """The protocol factory to pass as uvicorn's ``http=``: a ``functools.partial`` of a
    module-level class, so it pickles into `serve --workers N`'s processes."""
    return functools.partial(NoDelayHTTPProtocol, header_timeout_s=header_timeout_s,
                             max_connections=max_connections, max_per_client=max_per_client,
                             max_header_bytes=max_header_bytes)


__all__ = ["NoDelayHTTPProtocol", "http_protocol"]
