"""Helpers the trust tests import (a conftest cannot be imported by name: tests/serve has one
too)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

LOCAL = "http://127.0.0.1:8765"     # the Host a loopback server answers to

NOTES = {
    "Sync.md": "# Sync\n\nSync keeps 12 months of version history.\n\n"
               "- Each vault holds up to 10 GB.\n",
    "日本語/メモ.md": "# メモ\n\nObsidianはノートをローカルに保存します。\n",
    "Plain.md": "# Plain\n\nA plain note about canvases.\n",
}


def plan_of(mg, base: Path, *args: str) -> dict:
    """Run `verify --json` and return its answer."""
    result = mg(base, "verify", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


class Route:
    """What the local evidence server answers on one path."""

    def __init__(self, body: bytes | str = b"", status: int = 200,
                 content_type: str = "text/html; charset=utf-8", delay_s: float = 0.0,
                 headers: dict | None = None):
        self.body = body.encode("utf-8") if isinstance(body, str) else body
        self.status, self.content_type, self.delay_s = status, content_type, delay_s
        self.headers = headers or {}


@contextlib.contextmanager
def evidence_server(routes: dict[str, Route]):
    """A real HTTP server on 127.0.0.1 (a free port) answering ``routes``; yields its base
    URL. ``routes`` may be changed while it runs; requests are counted in ``hits``."""
    import http.server
    import threading
    import time

    hits: dict[str, int] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):     # noqa: N802 (the stdlib's name)
            hits[self.path] = hits.get(self.path, 0) + 1
            route = routes.get(self.path, Route("missing", 404, "text/plain"))
            if route.delay_s:
                time.sleep(route.delay_s)
            self.send_response(route.status)
            self.send_header("Content-Type", route.content_type)
            self.send_header("Content-Length", str(len(route.body)))
            for key, value in route.headers.items():
                self.send_header(key, value)
            self.end_headers()
            try:
                self.wfile.write(route.body)
            except OSError:
                pass            # the client gave up (a timeout test)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        yield base, hits
    finally:
        server.shutdown()
        server.server_close()
