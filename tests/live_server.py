"""Real `mindgraph serve` processes for the tests: a free port, waiting until GET /health
answers, and stopping one (importable from any test folder: tests/ is on sys.path through its
conftest)."""

from __future__ import annotations

import socket
import subprocess
import time

import httpx


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(process: subprocess.Popen, base: str, within_s: float = 90) -> None:
    """Return once GET /health answers 200; fail with the server's stderr if it exits."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        assert time.monotonic() < deadline, "server not ready"
        time.sleep(0.2)


def stop(process: subprocess.Popen, within_s: float = 20) -> None:
    """SIGTERM, then SIGKILL if it has not ended ``within_s`` later."""
    process.terminate()
    try:
        process.wait(within_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
