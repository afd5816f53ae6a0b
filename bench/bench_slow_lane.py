"""Do slow endpoints starve fast ones? /search throughput of `mindgraph serve` alone and while
eight clients keep /timeline busy (issue 12).

    python bench/bench_slow_lane.py                  # this checkout
    python bench/bench_slow_lane.py --code DIR       # another checkout's mindgraph/ (e.g. main)
    python bench/bench_slow_lane.py --seconds 20 --slow-clients 8 --json

A workspace in a temp dir whose wiki is the Obsidian Help vault (883 pages), raw its release
notes;
`mindgraph serve` on a free loopback port; one client sends /search (keyword, a fixed list of
words) back to back for --seconds, first alone, then while --slow-clients clients each send
/timeline back to back. Reported per phase: searches per second, median and p95 latency, and
the timelines answered (by status). The ratio alone/loaded is the starvation factor.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)
from serving import wait_healthy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VAULT = shared_corpora.corpora() / "obsidian-help"
WORDS = ["canvas", "bookmarks", "properties", "sync", "publish", "graph", "templates", "links",
         "plugins", "search", "themes", "hotkeys", "backlinks", "daily notes", "embeds"]
CONCEPTS = ["Canvas", "Bases", "Properties", "Web viewer", "Bookmarks", "Sync", "Publish",
            "Graph view"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(workspace: Path, code: Path | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    process = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C",
                                str(workspace), "--port", str(port)], env=env, cwd=workspace,
                               stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_healthy(process, base)
    return process, base


def searches(base: str, seconds: float) -> dict:
    latencies, errors = [], 0
    with httpx.Client(base_url=base, timeout=60) as http:
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            started = time.perf_counter()
            try:
                answer = http.get("/search", params={"q": WORDS[i % len(WORDS)]})
                errors += answer.status_code != 200
            except httpx.HTTPError:
                errors += 1
            latencies.append((time.perf_counter() - started) * 1e3)
            i += 1
    latencies.sort()
    return {"searches_per_s": round(len(latencies) / seconds, 1),
            "median_ms": round(statistics.median(latencies), 1),
            "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1), "errors": errors}


def keep_busy(base: str, stop: threading.Event, statuses: Counter, i: int) -> None:
    with httpx.Client(base_url=base, timeout=120) as http:
        while not stop.is_set():
            try:
                answer = http.get("/timeline", params={"concept": CONCEPTS[i % len(CONCEPTS)]})
                statuses[answer.status_code] += 1
            except httpx.HTTPError:
                statuses["error"] += 1
            i += 1


def _served(code: Path | None) -> str:
    """Which lanes the served code has (a check that --code took effect)."""
    root = code or ROOT
    return "serve/lanes.py" if (root / "mindgraph" / "serve" / "lanes.py").exists() \
        else "no serve/lanes.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--code", type=Path, help="folder holding the mindgraph/ to serve")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--slow-clients", type=int, default=8)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / "mindgraph.yml").write_text(
            f"paths:\n  wiki: {VAULT}\n  raw: {VAULT / 'Release notes'}\n  state: {workspace / 'state'}\n"
            f"embedding:\n  provider: hashing\n")
        process, base = start(workspace, args.code)
        try:
            started = time.perf_counter()
            httpx.get(f"{base}/timeline", params={"concept": "Canvas"}, timeout=120)
            one_timeline = time.perf_counter() - started
            alone = searches(base, args.seconds)
            stop, statuses = threading.Event(), Counter()
            busy = [threading.Thread(target=keep_busy, args=(base, stop, statuses, i))
                    for i in range(args.slow_clients)]
            for thread in busy:
                thread.start()
            time.sleep(1)
            loaded = searches(base, args.seconds)
            stop.set()
            for thread in busy:
                thread.join()
        finally:
            process.terminate()
            process.wait(30)
    result = {"code": str(args.code or ROOT), "serve": "mindgraph/" + _served(args.code), "one_timeline_s": round(one_timeline, 2),
              "alone": alone, "loaded": loaded,
              "timelines": {str(k): v for k, v in statuses.items()},
              "slowdown": round(alone["searches_per_s"] / max(loaded["searches_per_s"], 0.1), 2)}
    print(json.dumps(result, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
