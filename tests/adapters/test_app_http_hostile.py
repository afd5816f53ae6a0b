"""A note app's API that answers with too much, too slowly, or with our token in its error
page: `mindgraph pull` (the real CLI, against a hostile server on a local port) fails that
adapter with a message saying which, in bounded time and memory, and never prints the token.

Before: the whole answer was read into memory however large (a server, or anything between
it and us, could take every byte of the machine's memory), a server dripping a byte every
few seconds held `pull` (and the server's native search threads) for ever, as httpx's timeout
is between two reads, not for the whole answer; and an error page that echoed the request's
Authorization header was quoted, token and all, into the error every client of the server
sees.
"""

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from mindgraph.adapters.http import MAX_RESPONSE_BYTES
from mindgraph.cli import cli

TOKEN = "tt-secret-token-0123456789abcdef"


class Hostile(BaseHTTPRequestHandler):
    """Answers every route as ``self.server.mode`` says."""

    def _answer(self) -> None:
        mode = self.server.mode            # type: ignore[attr-defined]
        self.close_connection = True
        if mode == "echo":
            body = f"bad request; you sent {self.headers.get('Authorization')}".encode()
            self.send_response(400)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        with contextlib.suppress(OSError):
            if mode == "huge":             # a valid JSON list, past the cap, no length given
                chunk = b'{"id": "p", "name": "x", "closed": true},' * 4096
                self.wfile.write(b"[")
                for _ in range(MAX_RESPONSE_BYTES // len(chunk) + 2):
                    self.wfile.write(chunk)
                self.wfile.write(b'{"id": "q", "closed": true}]')
            elif mode == "drip":           # a byte of whitespace a second, then []
                for _ in range(12):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(1.0)
                self.wfile.write(b"[]")

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """A workspace whose TickTick adapter talks to the hostile server; set ``.mode``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("TT_TOKEN", TOKEN)
    (tmp_path / "raw").mkdir()
    (tmp_path / "mindgraph.yml").write_text(
        "adapters:\n  - name: tasks\n    type: ticktick\n    options: {token_env: TT_TOKEN, "
        f"base_url: 'http://127.0.0.1:{server.server_port}', timeout_s: 3, max_retries: 0}}\n")
    server.workspace = tmp_path
    yield server
    server.shutdown()
    server.server_close()


def _pull(workspace):
    started = time.monotonic()
    result = CliRunner().invoke(cli, ["-C", str(workspace), "pull", "--json"])
    report = json.loads(result.stdout)
    failures = [f["reason"] for f in report["files"] if f["status"] == "failed"]
    return report, failures, time.monotonic() - started


def test_an_answer_past_the_cap_fails_the_adapter(hostile):
    hostile.mode = "huge"
    report, failures, _ = _pull(hostile.workspace)
    assert report["failed_adapters"] == 1, report
    assert f"more than {MAX_RESPONSE_BYTES:,} bytes" in failures[0]


def test_a_dripping_answer_is_cut_at_the_deadline(hostile):
    hostile.mode = "drip"
    report, failures, took = _pull(hostile.workspace)
    assert report["failed_adapters"] == 1, report
    assert "within timeout_s (3 s)" in failures[0]
    assert took < 8, took


def test_an_error_page_never_carries_the_token(hostile):
    hostile.mode = "echo"
    report, failures, _ = _pull(hostile.workspace)
    assert report["failed_adapters"] == 1, report
    assert "HTTP 400" in failures[0] and "you sent Bearer" in failures[0]
    assert TOKEN not in json.dumps(report)
