"""Local HTTP APIs in a provider's JSON shape for tests of what agents read when a provider
answers or fails (its words may name the operator's account): ``json_api`` answers each POST
as told, ``refusing_api`` refuses every one with an error in OpenAI's shape."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def json_api(answer: Callable[[BaseHTTPRequestHandler, dict], tuple[int, dict]]
             ) -> Iterator[ThreadingHTTPServer]:
    """A running server answering each POST with ``answer(request, its JSON body)``: a status
    and the JSON to send."""

    class Answering(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, payload = answer(self, json.loads(body) if body else {})
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answering)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def refusing_api(status: int, error: Callable[[BaseHTTPRequestHandler], dict]
                 ) -> Iterator[ThreadingHTTPServer]:
    """A running server answering each POST ``status`` with ``{"error": error(request)}``."""
    with json_api(lambda request, _body: (status, {"error": error(request)})) as server:
        yield server
