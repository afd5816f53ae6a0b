"""What an agent sees of the server's filesystem: paths relative to the workspace, never the
absolute folder it lives in (that names the user, the machine's layout, other projects).

One rule at each boundary, so a new route, tool or error message cannot forget it:
``AgentPaths`` rewrites the JSON bodies of the REST app, ``WorkspacePaths.value`` the results
and errors of the MCP tools. ``/tmp/ws/wiki/A.md`` becomes ``wiki/A.md``, ``/tmp/ws`` itself
``.``, and a ``file://`` address of a workspace file its relative path (an agent cannot open
the server's files anyway; ``obsidian://`` addresses name only the vault and stay).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any


class WorkspacePaths:
    """Rewrites the absolute forms of one workspace folder to workspace-relative ones."""

    def __init__(self, base: Path):
        given, real = Path(base).absolute(), Path(base).resolve()
        forms = {real.as_uri(), given.as_uri(), str(real), str(given)}
        ordered = sorted(forms, key=len, reverse=True)     # file:///x before /x
        # a form ends at a separator or where a name ends: /tmp/ws2, /tmp/ws.bak are others
        self._pattern = re.compile("|".join(f"{re.escape(f)}(?:/|(?![\\w-]|\\.\\w))"
                                            for f in ordered))
        self._needles = [n for f in ordered for n in {f.encode(), json.dumps(f)[1:-1].encode()}]
        # each form as it appears inside a JSON string written with ensure_ascii=False
        self._in_json = [json.dumps(f, ensure_ascii=False)[1:-1] for f in ordered]

    def text(self, text: str) -> str:
        """``text`` with every absolute workspace path made relative."""
        return self._pattern.sub(lambda m: "" if m.group().endswith("/") else ".", text)

    def value(self, data: Any) -> Any:
        """A JSON-like value with every string (and key) rewritten by ``text``."""
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {self.value(k): self.value(v) for k, v in data.items()}
        if isinstance(data, (list, tuple)):
            return [self.value(v) for v in data]
        return data

    def named_in(self, json_text: str) -> bool:
        """Whether JSON written with ``ensure_ascii=False`` may name the workspace (in a key
        or a string): when not, ``value`` of the data it was written from changes nothing."""
        return any(form in json_text for form in self._in_json)

    def found_in(self, body: bytes) -> bool:
        """Whether ``body`` may name the workspace (a cheap test before parsing it)."""
        return any(n in body for n in self._needles)


@functools.lru_cache(maxsize=16)
def workspace_paths(base: Path) -> WorkspacePaths:
    """The (cached) rewriter of one workspace: a server builds it once, not per call."""
    return WorkspacePaths(base)


class AgentPaths:
    """ASGI middleware: JSON responses (answers and errors) with workspace-relative paths.

    Only a body that contains the workspace's path is parsed and written again, so the
    usual answer costs a byte search."""

    def __init__(self, app: Any, base: Path):
        self.app = app
        self.paths = workspace_paths(Path(base))

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: dict | None = None
        chunks: list[bytes] = []

        async def send_relative(message: dict) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", ()))
                if headers.get(b"content-type", b"").startswith(b"application/json"):
                    start = message         # held until the body is complete
                    return
            elif message["type"] == "http.response.body" and start is not None:
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                body = b"".join(chunks)
                if self.paths.found_in(body):
                    body = json.dumps(self.paths.value(json.loads(body)), ensure_ascii=False,
                                      separators=(",", ":")).encode()
                headers = [(k, v) for k, v in start.get("headers", ())
                           if k != b"content-length"]
                await send({**start, "headers": [*headers, (b"content-length",
                                                            str(len(body)).encode())]})
                message = {"type": "http.response.body", "body": body}
            await send(message)

        await self.app(scope, receive, send_relative)


__all__ = ["AgentPaths", "WorkspacePaths", "workspace_paths"]
