"""Real `mindgraph serve` subprocesses for the deployment tests: start on a free port, wait
for GET /health, stop by PID."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

TOKEN = "deploy-test-token-0123456789abcdefghij"


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(workspace: Path, env: dict[str, str], *args: str,
                command: tuple[str, ...] | None = None) -> subprocess.Popen:
    """`mindgraph serve -C workspace` (or ``command``) in a subprocess with ``env`` added."""
    argv = [sys.executable, "-m", "mindgraph",
            *(command or ("serve", "-C", str(workspace))), *args]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **env}, cwd=workspace)


def wait_healthy(process: subprocess.Popen, base: str, within_s: float = 90) -> None:
    """Return once GET /health answers 200; fail with the server's stderr if it exits."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None:
            raise AssertionError(f"server exited {process.returncode}: "
                                 f"{process.stderr.read().decode()}")
        if time.monotonic() > deadline:
            raise AssertionError("server not ready")
        time.sleep(0.2)


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 20 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
