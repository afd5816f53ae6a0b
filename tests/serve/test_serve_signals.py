"""A real `mindgraph serve` / `mindgraph mcp --transport http` with a request hung in a read:
other requests still answer, and SIGTERM stops the process within seconds."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest
from live_server import free_port

# The CLI, with the code reader of coverage replaced by one that never returns (as a FIFO or a
# dead network mount would block a read).
LAUNCH = """
import sys, threading
import mindgraph.coverage.units as units
units.discover_units = lambda *args, **kwargs: threading.Event().wait()
from mindgraph.cli import cli
cli(sys.argv[1:])
"""


@pytest.fixture
def workspace(workspace):
    """The shared workspace, with quick time budgets."""
    (workspace / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 32\n"
        "serve:\n  request_timeout_s: 120\n  shutdown_timeout_s: 1\n")
    return workspace


def start(workspace, *command: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", LAUNCH, *command, "-C", str(workspace),
                                "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, port
        except OSError:
            if process.poll() is not None:
                raise AssertionError(process.stderr.read().decode())
            time.sleep(0.1)
    process.kill()
    raise AssertionError("the server did not start")


def in_background(call) -> threading.Thread:
    def run():
        try:
            call()
        except httpx.HTTPError:
            pass                      # the server went away under it: expected
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def stops_on_sigterm(process: subprocess.Popen, within_s: float = 10) -> float:
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(within_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"still running {within_s} s after SIGTERM") from None
    return time.monotonic() - started


def test_serve_answers_around_a_hung_request_and_stops_on_sigterm(workspace):
    process, port = start(workspace, "serve")
    base = f"http://127.0.0.1:{port}"
    try:
        in_background(lambda: httpx.get(f"{base}/coverage", params={"codebase": "code"},
                                        timeout=120))
        time.sleep(1.0)                                        # it is stuck in the read now
        search = httpx.get(f"{base}/search", params={"q": "trunks"}, timeout=10)
        assert search.status_code == 200 and search.json()["count"] == 2
        assert httpx.get(f"{base}/health", timeout=10).json()["pages"] == 2
    finally:
        took = stops_on_sigterm(process)
    assert took < 10


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "pytest", "version": "0"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def test_mcp_http_stops_on_sigterm_with_a_tool_call_hung(workspace):
    process, port = start(workspace, "mcp", "--transport", "http")
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        hello = httpx.post(url, json=INITIALIZE, headers=ACCEPT, timeout=30)
        assert hello.status_code == 200, hello.text
        session = ACCEPT | {"mcp-session-id": hello.headers["mcp-session-id"],
                            "mcp-protocol-version": "2025-06-18"}
        httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                   headers=session, timeout=30)
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "coverage", "arguments": {"codebase": "code"}}}
        in_background(lambda: httpx.post(url, json=call, headers=session, timeout=120))
        time.sleep(1.0)
        listed = httpx.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                                       "params": {"name": "stats", "arguments": {}}},
                            headers=session, timeout=10)
        assert listed.status_code == 200 and "pages" in listed.text
    finally:
        took = stops_on_sigterm(process)
    assert took < 10
