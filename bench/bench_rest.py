"""Load benchmark for issue 6: `mindgraph serve` answering /smart_search under concurrent clients.

    python bench/bench_rest.py                       # embed once into a temp state dir, then load
    python bench/bench_rest.py --state DIR           # reuse (or create) a state dir with vectors
    python bench/bench_rest.py --seconds 30 --clients 20 --client httpx   # Python load generator
    python bench/bench_rest.py --workers 2               # mindgraph serve --workers 2
    python bench/bench_rest.py --json

What it does: a workspace in a temp dir whose mindgraph.yml points paths.wiki at the Obsidian
Help vault (883 pages) and paths.state at --state; `mindgraph embed` with the default local
model when the state has no vectors yet (~2-3 minutes); `mindgraph serve` under uvicorn on a
free loopback port; one sequential pass over the questions (warm-up, and the latency of one
client alone); then --clients concurrent clients for --seconds, each sending the next of the
40 dev questions (obsidian-help-queries.dev.jsonl, fixed order) to /smart_search.

--queries fresh sends queries the server has never seen instead, so no answer or query-vector
cache can help: "<section heading> <page title>" for every section of the vault (en, ja and
zh, ~6,000 distinct, shuffled with a fixed seed), none of them asked twice in a run, and the
sequential pass uses a separate slice of them.

The load generator is `wrk` (a C program; least CPU taken from the server on a small machine)
when installed, else httpx's async client. Both are closed-loop: a client sends its next request
when the previous answer arrives, so by Little's law median latency ~ clients / throughput.
Reported: requests, errors (non-2xx and socket errors; must be 0), requests/s, median and p95
latency, the machine's load average before the run. Target: median < 25 ms warm at 20 clients.
Exit code 1 when there are errors or the target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any, Iterator
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

ROOT = Path(__file__).resolve().parents[1]
CORPUS = shared_corpora.corpora()
VAULT = CORPUS / "obsidian-help"
QUESTIONS = CORPUS / "obsidian-help-queries.dev.jsonl"
TARGET_MEDIAN_MS = 25.0

WRK_SCRIPT = """
local paths = {%s}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i %% #paths) + 1])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests": %%d, "seconds": %%f, "errors": %%d, ' ..
    '"median_ms": %%f, "p95_ms": %%f, "p99_ms": %%f, "max_ms": %%f}\\n',
    summary.requests, summary.duration / 1e6,
    e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50) / 1e3, latency:percentile(95) / 1e3,
    latency:percentile(99) / 1e3, latency.max / 1e3))
end
"""


def main() -> int:
    """Run the benchmark; print a table or JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--state", type=Path, help="state dir to reuse (vectors are kept)")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--client", choices=("auto", "wrk", "httpx"), default="auto")
    parser.add_argument("--endpoint", default="/smart_search", help="/smart_search or /search")
    parser.add_argument("--workers", type=int, default=1, help="mindgraph serve --workers")
    parser.add_argument("--queries", choices=("dev", "fresh"), default="dev",
                        help="dev: the 40 dev questions repeating; fresh: never-seen queries")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    client = args.client if args.client != "auto" else ("wrk" if shutil.which("wrk") else "httpx")
    if args.queries == "dev":
        questions = [json.loads(line)["query"] for line in QUESTIONS.read_text().splitlines()
                     if line.strip()]
        warm_up = questions
    else:
        every = _fresh_queries()
        warm_up, questions = every[:40], every[40:]
    paths, warm_paths = ([f"{args.endpoint}?" + urllib.parse.urlencode({"q": q, "limit": 10})
                          for q in group] for group in (questions, warm_up))
    with tempfile.TemporaryDirectory(prefix="bench-rest-") as tmp:
        workspace = Path(tmp)
        state = (args.state or workspace / "state").resolve()
        (workspace / "mindgraph.yml").write_text(
            f"paths:\n  wiki: {VAULT}\n  raw: raw\n  state: {state}\n")
        embed_s = _embed(workspace)
        port = _free_port()
        server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C",
                                   str(workspace), "--port", str(port),
                                   "--workers", str(args.workers)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            base = f"http://127.0.0.1:{port}"
            _wait_ready(base, server)
            single = _sequential(base, warm_paths)
            load_before = os.getloadavg()
            if client == "wrk":
                load = _run_wrk(base, paths, args.clients, args.seconds)
            else:
                load = asyncio.run(_run_httpx(base, paths, args.clients, args.seconds))
        finally:
            server.terminate()
            server.wait(timeout=10)
    if args.queries == "fresh" and load["requests"] > len(paths):
        raise SystemExit(f"only {len(paths)} fresh queries for {load['requests']} requests: "
                         f"some repeated; run shorter")
    figures = {"endpoint": args.endpoint, "pages": 883, "questions": len(questions),
               "workers": args.workers,
               "queries": args.queries,
               "client": client, "clients": args.clients, "embed_s": embed_s,
               "single_client": single, "load": load,
               "load_average_before": [round(x, 2) for x in load_before],
               "cpus": os.cpu_count(), "target_median_ms": TARGET_MEDIAN_MS}
    ok = load["errors"] == 0 and load["median_ms"] < TARGET_MEDIAN_MS
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print(figures)
    return 0 if ok else 1


def _fresh_queries() -> list[str]:
    """Distinct queries from the vault's section headings, in a fixed shuffled order."""
    import random

    sys.path.insert(0, str(ROOT))
    from mindgraph.page.vault import load_vault

    pages = load_vault(VAULT).pages
    queries = sorted({f"{s.heading} {p.title}" for p in pages.values() for s in p.sections
                      if s.heading and s.heading != p.title})
    random.Random(0).shuffle(queries)
    return queries


def _embed(workspace: Path) -> float | None:
    """Embed the vault unless the state already has its vectors; seconds taken, or None."""
    plan = subprocess.run([sys.executable, "-m", "mindgraph", "embed", "-C", str(workspace),
                           "--dry-run", "--json"], capture_output=True, text=True, check=True)
    if json.loads(plan.stdout)["embedded"] == 0:
        return None
    print("embedding the vault with the local model (once per state dir)...", file=sys.stderr)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mindgraph", "embed", "-C", str(workspace), "--json"],
                   stdout=subprocess.DEVNULL, check=True)
    return round(time.perf_counter() - started, 1)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(python: str, workspace: Path, timeout: float) -> Iterator[tuple[str, Any, float]]:
    """``python -m mindgraph serve`` on a free loopback port, ready (its /health answers):
    yields (base URL, the process, its ``time.perf_counter()`` at start)."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen([python, "-m", "mindgraph", "serve", "-C", str(workspace),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        _wait_ready(base, server, timeout=timeout)
        yield base, server, started
    finally:
        server.terminate()
        server.wait(timeout=60)


def resident_mb(pid: int) -> dict[str, int]:
    """A running process's resident memory now (``rss_mb``), at its peak (``peak_rss_mb``),
    and the part of it now that is its own (``anon_mb``) or pages of files it maps
    (``file_mb``: shared with the page cache, which the kernel may take back)."""
    status = Path(f"/proc/{pid}/status").read_text()
    memory = {line.split(":")[0]: int(line.split()[1]) // 1024 for line in status.splitlines()
              if line.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile"))}
    return {"rss_mb": memory["VmRSS"], "peak_rss_mb": memory["VmHWM"],
            "anon_mb": memory.get("RssAnon", 0), "file_mb": memory.get("RssFile", 0)}


def _wait_ready(base: str, server: subprocess.Popen, timeout: float = 60.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"server exited: {server.stderr.read().decode()}")
        try:
            if httpx.get(f"{base}/health", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"server not ready within {timeout:g} s")


def _sequential(base: str, paths: list[str]) -> dict[str, Any]:
    """One client, one request at a time: the first request of all (model and indexes load),
    every question once (new queries: the model embeds each), then again (cached query
    vectors, as in the load run)."""
    import httpx

    def timed(http: httpx.Client, path: str) -> float:
        started = time.perf_counter()
        http.get(path).raise_for_status()
        return (time.perf_counter() - started) * 1e3

    with httpx.Client(base_url=base, timeout=60) as http:
        first_ms = timed(http, "/smart_search?q=warm+up")
        new = [timed(http, path) for path in paths]
        again = [timed(http, path) for path in paths]
    return {"first_ms": round(first_ms, 1),
            "new_query_median_ms": round(statistics.median(new), 2),
            "new_query_p95_ms": round(_percentile(new, 95), 2),
            "median_ms": round(statistics.median(again), 2),
            "p95_ms": round(_percentile(again, 95), 2)}


def _run_wrk(base: str, paths: list[str], clients: int, seconds: float) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT % ", ".join(json.dumps(p) for p in paths))
    try:
        out = subprocess.run(["wrk", "-t", "1", "-c", str(clients), "-d", f"{seconds:g}s",
                              "--timeout", "30s", "-s", script.name, base],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(script.name)
    line = next(x for x in out.splitlines() if x.startswith("WRK_JSON "))
    data = json.loads(line.removeprefix("WRK_JSON "))
    data["rps"] = round(data["requests"] / data["seconds"], 1)
    return {k: round(v, 2) if isinstance(v, float) else v for k, v in data.items()}


async def _run_httpx(base: str, paths: list[str], clients: int,
                     seconds: float) -> dict[str, Any]:
    import httpx

    times: list[float] = []
    errors = 0
    counter = iter(range(10**12))
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=30, limits=limits) as http:
        deadline = time.perf_counter() + seconds

        async def one_client() -> None:
            nonlocal errors
            while time.perf_counter() < deadline:
                path = paths[next(counter) % len(paths)]
                started = time.perf_counter()
                try:
                    ok = (await http.get(path)).status_code == 200
                except httpx.HTTPError:
                    ok = False
                times.append((time.perf_counter() - started) * 1e3)
                errors += not ok

        started = time.perf_counter()
        await asyncio.gather(*(one_client() for _ in range(clients)))
        elapsed = time.perf_counter() - started
    return {"requests": len(times), "seconds": round(elapsed, 2), "errors": errors,
            "median_ms": round(statistics.median(times), 2),
            "p95_ms": round(_percentile(times, 95), 2),
            "p99_ms": round(_percentile(times, 99), 2), "max_ms": round(max(times), 2),
            "rps": round(len(times) / elapsed, 1)}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _print(f: dict[str, Any]) -> None:
    load, single = f["load"], f["single_client"]
    what = (f"{f['questions']} dev questions in a fixed rotation" if f["queries"] == "dev"
            else f"never-seen queries (section headings, {f['questions']} available)")
    print(f"REST {f['endpoint']} over the Obsidian Help vault ({f['pages']} pages), {what}")
    if f["embed_s"] is not None:
        print(f"embedded the vault first in {f['embed_s']} s")
    print(f"one client, sequential: first request {single['first_ms']} ms; new questions "
          f"median {single['new_query_median_ms']} ms (p95 {single['new_query_p95_ms']}); "
          f"asked again median {single['median_ms']} ms (p95 {single['p95_ms']})")
    print(f"{f['clients']} clients ({f['client']}), {f['workers']} server process(es), "
          f"{load['seconds']} s: {load['requests']} "
          f"requests, {load['errors']} errors, {load['rps']} req/s, median {load['median_ms']} ms,"
          f" p95 {load['p95_ms']} ms, p99 {load['p99_ms']} ms, max {load['max_ms']} ms")
    verdict = "met" if load["median_ms"] < f["target_median_ms"] else "MISSED"
    print(f"target: median < {f['target_median_ms']:g} ms at {f['clients']} clients: {verdict}; "
          f"load average before the run {f['load_average_before']} on {f['cpus']} CPUs")


if __name__ == "__main__":
    sys.exit(main())
