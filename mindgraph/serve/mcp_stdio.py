"""`mindgraph mcp` over stdio, with a word on stderr for a person who is not an MCP client.

The MCP SDK (2.x) reads stdin line by line and drops a line that is not JSON-RPC with only a
debug log: `echo garbage | mindgraph mcp` would exit 0 having said nothing. Here each such
line gets a line on stderr (stdout carries the protocol and nothing else) and the run ends
with a non-zero status once stdin closes; a line a client sends that the SDK reads is
served as before.

A request sent before ``initialize`` gets the SDK's bare -32602 "Invalid request
parameters", which reads as a fault in the request's params; here the same code comes with
a message that names the fix (send ``initialize`` first; serve/mcp_initialize.py, shared with
MCP over HTTP).

A client that writes its requests and closes stdin (`printf '…' | mindgraph mcp`, a script
sending a batch) gets every answer: the SDK cancels the requests in flight when stdin ends,
so the end is passed on only once each request read has been answered (or after
``DRAIN_S``). Under load the second of two pings was lost that way."""

from __future__ import annotations

import sys
from typing import Any, Callable

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

from .mcp_initialize import InitializeFirst

NOT_JSON_RPC_STATUS = 2
DRAIN_S = 60.0          # the longest stdin's end waits for the answers still owed


def run_stdio(server: MCPServer, say: Callable[[str], None]) -> int:
    """Serve ``server`` over stdin/stdout until stdin closes: 0, or NOT_JSON_RPC_STATUS when
    a line of stdin was not JSON-RPC (each said through ``say``, to stderr)."""
    bad: list[Exception] = []

    def refused(exc: Exception) -> None:
        bad.append(exc)
        if len(bad) <= 3:
            say(f"mindgraph mcp: a line on stdin is not a JSON-RPC message "
                f"({_first_line(exc)}); this command speaks MCP over stdio for an MCP "
                f"client (the README's 'Connect an MCP client' shows one), not typed "
                f"commands.")

    async def serve() -> None:
        lowlevel = server._lowlevel_server     # what MCPServer.run_stdio_async runs
        lowlevel.middleware.append(InitializeFirst())
        async with stdio_server() as (read_stream, write_stream):
            owed = _Owed()
            await lowlevel.run(_Watched(read_stream, refused, owed),
                               _Answering(write_stream, owed),
                               lowlevel.create_initialization_options())

    anyio.run(serve)
    return NOT_JSON_RPC_STATUS if bad else 0


class _Owed:
    """The ids of the requests read and not yet answered; ``settled`` is set when none is."""

    def __init__(self) -> None:
        self.ids: set[Any] = set()
        self.settled = anyio.Event()

    def read(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, JSONRPCRequest):
            self.ids.add(message.id)

    def answered(self, item: Any) -> None:
        message = getattr(item, "message", None)
        if isinstance(message, (JSONRPCResponse, JSONRPCError)):
            self.ids.discard(message.id)
            if not self.ids:
                self.settled.set()
                self.settled = anyio.Event()

    async def drain(self) -> None:
        """Wait until every request read is answered, at most DRAIN_S."""
        with anyio.move_on_after(DRAIN_S):
            while self.ids:
                await self.settled.wait()


class _Answering:
    """The SDK's write stream, telling ``owed`` of each answer sent."""

    def __init__(self, stream: Any, owed: _Owed):
        self._stream = stream
        self._owed = owed

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    async def send(self, item: Any) -> None:
        await self._stream.send(item)
        self._owed.answered(item)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> "_Answering":
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)


class _Watched:
    """The SDK's read stream, telling ``refused`` of each line it could not parse (an
    Exception item) before passing it on as it was, and ending only once ``owed`` is
    settled."""

    def __init__(self, stream: Any, refused: Callable[[Exception], None], owed: _Owed):
        self._stream = stream
        self._refused = refused
        self._owed = owed

    def __getattr__(self, name: str) -> Any:       # last_context and the like
        return getattr(self._stream, name)

    def _seen(self, item: Any) -> Any:
        if isinstance(item, Exception) and not _blank_line(item):
            self._refused(item)
        self._owed.read(item)
        return item

    async def receive(self) -> Any:
        try:
            item = await self._stream.receive()
        except anyio.EndOfStream:
            await self._owed.drain()
            raise
        return self._seen(item)

    def __aiter__(self) -> "_Watched":
        return self

    async def __anext__(self) -> Any:
        try:
            item = await self._stream.__anext__()
        except StopAsyncIteration:
            await self._owed.drain()
            raise
        return self._seen(item)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def __aenter__(self) -> "_Watched":
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._stream.__aexit__(*exc)


def _blank_line(exc: Exception) -> bool:
    """Whether the line the SDK could not parse was empty or only spaces (a client writing
    CRLF, or an empty line between messages): no message at all, so nothing refused."""
    errors = getattr(exc, "errors", None)
    try:
        found = errors() if callable(errors) else []
    except Exception:  # noqa: BLE001 - not a pydantic error: count it
        return False
    return bool(found) and all(isinstance(e.get("input"), str) and not e["input"].strip()
                               for e in found)


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    line = (text[1] if len(text) > 1 else text[0] if text else type(exc).__name__).strip()
    return line.split(" [type=", 1)[0]      # pydantic's machine part after the reason


def stdin_is_terminal() -> bool:
    try:
        return sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
