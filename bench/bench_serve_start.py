"""`mindgraph serve`'s start: time to the first /health and the first keyword /search answer,
its CPU, and its peak resident memory (VmHWM), for one or more checkouts side by side.

    python bench/bench_serve_start.py --serve main=/work/main/.venv/bin/python:/tmp/ws-main \\
        --serve branch=.venv/bin/python:/tmp/ws-branch --runs 2 --query "cell adhesion"

Each ``--serve NAME=PYTHON:WORKSPACE`` starts ``PYTHON -m mindgraph serve -C WORKSPACE`` (from
/tmp, so a checkout in the working folder shadows nothing) on a free loopback port; the runs
alternate between them (A B A B ...) so that the machine's load falls on both alike. Each run:
wait for the port, one GET /health (the first answer: it builds the vault), one GET /search,
then read /proc/PID/status and stop the server. Give each workspace its own copy: a process
may rewrite the state files it starts from. Prints one JSON line a run, then the medians.
Run it under ``nice -n 5`` on a shared machine; the load average is recorded with each run.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _memory_mb(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    found = {line.split(":")[0]: int(line.split()[1]) // 1024 for line in status.splitlines()
             if line.startswith(("VmRSS", "VmHWM"))}
    return {"rss_mb": found["VmRSS"], "peak_mb": found["VmHWM"]}


def _load() -> float:
    return os.getloadavg()[0]


def _answer(url: str, params: dict, deadline: float):
    """GET until an answer: a request past the server's time budget is answered 504 while
    the work it started goes on (serve/guard.py), so ask again, as a client would."""
    import httpx

    while True:
        response = httpx.get(url, params=params, timeout=max(deadline - time.monotonic(), 1))
        if response.status_code != 504 or time.monotonic() > deadline:
            response.raise_for_status()
            return response
        time.sleep(0.1)


def one_run(name: str, python: str, workspace: str, query: str, timeout: float) -> dict:
    """Start the server, time its first /health and /search answers, read its memory."""
    import httpx

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    load_before = _load()
    started = time.perf_counter()
    server = subprocess.Popen([python, "-m", "mindgraph", "serve", "-C", workspace, "--port",
                               str(port)], cwd="/tmp", stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if server.poll() is not None:
                raise SystemExit(f"{name}: server exited: {server.stderr.read().decode()}")
            if time.monotonic() > deadline:
                raise SystemExit(f"{name}: no port within {timeout:g} s")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        listening_s = time.perf_counter() - started
        health = _answer(f"{base}/health", {}, deadline)
        health_s = time.perf_counter() - started
        health_cpu, health_mem = _cpu_seconds(server.pid), _memory_mb(server.pid)
        search = _answer(f"{base}/search", {"q": query, "limit": 10}, deadline)
        search_s = time.perf_counter() - started
        memory = _memory_mb(server.pid)
        return {"name": name, "listening_s": round(listening_s, 1),
                "health_s": round(health_s, 1), "health_cpu_s": round(health_cpu, 1),
                "peak_at_health_mb": health_mem["peak_mb"],
                "search_s": round(search_s, 1),
                "search_cpu_s": round(_cpu_seconds(server.pid), 1),
                "peak_mb": memory["peak_mb"], "rss_mb": memory["rss_mb"],
                "pages": health.json()["pages"],
                "hits": [h["page"] for h in search.json()["results"]],
                "load_before": round(load_before, 1), "load_after": round(_load(), 1)}
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve", action="append", required=True,
                        metavar="NAME=PYTHON:WORKSPACE")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--query", default="cell adhesion epithelia")
    parser.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args()
    servers = []
    for spec in args.serve:
        name, _, rest = spec.partition("=")
        python, _, workspace = rest.partition(":")
        servers.append((name, python, workspace))
    runs: dict[str, list[dict]] = {name: [] for name, _, _ in servers}
    for _ in range(args.runs):
        for name, python, workspace in servers:
            run = one_run(name, python, workspace, args.query, args.timeout)
            runs[name].append(run)
            print(json.dumps({k: v for k, v in run.items() if k != "hits"}), flush=True)
    answers = {name: (r[0]["pages"], r[0]["hits"]) for name, r in runs.items()}
    print(json.dumps({"same_answers": len({json.dumps(a) for a in answers.values()}) == 1}))
    for name, done in runs.items():
        print(json.dumps({"name": name, "runs": len(done), **{
            f"median_{key}": statistics.median(r[key] for r in done)
            for key in ("health_s", "health_cpu_s", "peak_at_health_mb", "search_s",
                        "search_cpu_s", "peak_mb", "rss_mb")}}))


if __name__ == "__main__":
    main()
