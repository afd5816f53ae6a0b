"""A `mindgraph serve` a bench script started, waited for until it answers /health.

One place for the wait (bench_slow_lane.py, bench_fair_lanes.py and bench_two_servers.py each
polled it), and a server that never answers is killed and stops the script, naming it.
"""

from __future__ import annotations

import subprocess
import time

import httpx


def wait_healthy(process: subprocess.Popen, base: str, timeout_s: float = 120) -> None:
    """Return once ``base``/health answers 200; else kill ``process`` and stop the script."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server on {base} exited ({process.returncode}) before "
                             f"answering")
        try:
            if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"the server on {base} did not start within {timeout_s:g} s")
