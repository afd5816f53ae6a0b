"""Real `mindgraph serve` subprocesses for the deployment tests: start on a free port, wait
for GET /health, stop by PID."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from live_server import free_port, wait_healthy  # noqa: F401 (the deploy tests' names)

TOKEN = "deploy-test-token-0123456789abcdefghij"


def start_serve(workspace: Path, env: dict[str, str], *args: str,
                command: tuple[str, ...] | None = None) -> subprocess.Popen:
    """`mindgraph serve -C workspace` (or ``command``) in a subprocess with ``env`` added."""
    argv = [sys.executable, "-m", "mindgraph",
            *(command or ("serve", "-C", str(workspace))), *args]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **env}, cwd=workspace)


def stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 20 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
