"""A local HTTP API that refuses every POST with an error in OpenAI's JSON shape, for tests
of what agents read when a provider fails (its words may name the operator's account)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def refusing_api(status: int, error: Callable[[BaseHTTPRequestHandler], dict]
                 ) -> Iterator[ThreadingHTTPServer]:
    """A running server answering each POST ``status`` with ``{"error": error(request)}``."""

    class Refusing(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            data = json.dumps({"error": error(self)}).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
