"""How mindgraph's figures grow from 10,000 to 30,000 to 100,000 notes (issue 20's table).

    python bench/bench_scale.py                       # 10k, 30k, 100k
    python bench/bench_scale.py --sizes 10000 30000   # what the machine has time for
    python bench/bench_scale.py --json --baseline /work/main/.venv/bin/python
    python bench/bench_scale.py --sizes 100000 --wiki-only --workdir /tmp/scale

Each size is a vault written by bench/gen_corpus.py (seed 1) into a temporary workspace; every
figure is the wall time of a fresh `mindgraph` process, as a person waits for it: ingest from
scratch (offline), a no-op re-run, `graph communities` (builds the graph, then Louvain),
`check`, `stats`, the first keyword `search` (parses the wiki into the page cache and builds
the keyword index), a second one (both loaded from their state files) and `graph hubs`. The machine's load average is printed with
each row. With --baseline PYTHON the same commands also run under that interpreter (another
checkout's virtualenv, e.g. main's) on a copy of the same vault, interleaved with ours, so the
ratio of the two is measured under the same load.

After the fresh-process steps come the query side: the keyword query p50 (and p95, and CPU
per query) of ``Mindgraph.search`` in one warm process over queries no run has seen
("<heading> <title>" of random sections), then `mindgraph serve` from the warm state files:
seconds from start to the first /search answer, its resident memory (VmRSS, VmHWM), and 20
concurrent clients sending never-seen queries to /search (requests/s, median, p95, errors).
``serve hybrid`` does the same on /smart_search (keyword + vector fusion: the query embedded,
the section vectors and their HNSW graph loaded), for a workspace whose sections are embedded;
its first answer must come from the vector retriever too, else the step fails (a store
without vectors degrades to keyword silently and would measure the wrong thing).
CPU seconds (user + sys) and peak RSS of every fresh process are printed beside its wall time.

``--wiki-only`` writes the generated notes straight into wiki/ (no ingest): the query side at
a size whose offline compile does not fit the time at hand (say so when quoting it).
``--workdir`` keeps the workspaces (a later run reuses a size's vault and state files).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import gen_corpus  # noqa: E402
from bench_rest import _percentile, _run_httpx, resident_mb, serving  # noqa: E402

STEPS = (
    ("ingest", ["ingest"]),
    ("no-op ingest", ["ingest"]),
    ("graph communities", ["graph", "communities", "--min-size", "5"]),
    ("check", ["check"]),
    ("stats", ["stats"]),
    ("first search", ["search", "how do I sync my vault", "-n", "5"]),
    ("search", ["search", "move a note to another folder", "-n", "5"]),
    # builds graph.pickle where `graph communities` did not run, so serve starts warm
    ("graph hubs", ["graph", "hubs", "-n", "5"]),
)
INGEST_STEPS = ("ingest", "no-op ingest")
QUERY_STEPS = ("keyword p50", "serve", "serve hybrid")
TARGETS = {"keyword_p50_ms": 20.0, "serve_start_s": 30.0, "serve_rss_mb": 4096.0}


def _run(python: str, workspace: Path, args: list[str]) -> dict:
    """Wall seconds, CPU seconds (user + sys) and peak RSS of one fresh process."""
    started = time.perf_counter()
    child = subprocess.Popen([python, "-m", "mindgraph", *args, "-C", str(workspace)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=workspace)
    stderr = child.stderr.read() if child.stderr else b""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if child.returncode not in (0, 1):       # 1: findings (check) or failed notes
        raise SystemExit(f"{' '.join(args)} failed ({child.returncode}):\n"
                         f"{stderr.decode(errors='replace')[-2000:]}")
    return {"s": round(seconds, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "rss_mb": usage.ru_maxrss // 1024}


def load() -> float:
    """The 1-minute load average (the machine is shared)."""
    return round(os.getloadavg()[0], 1)


def fresh_queries(workspace: Path, n: int, seed: int) -> list[str]:
    """``n`` distinct queries "<heading> <title>" of random sections, none asked before."""
    from bench_scale_query import fresh_queries as shuffled_section_queries

    return shuffled_section_queries(workspace, n, seed)


def keyword_latency(python: str, workspace: Path, queries: list[str]) -> dict:
    """``Mindgraph.search`` (BM25, snippets, explanations) per query in one warm process of
    ``python`` (so a baseline interpreter measures its own code)."""
    done = subprocess.run([python, __file__, "--latency-of", str(workspace)],
                          input=json.dumps(queries), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def _keyword_latency_here(workspace: Path, queries: list[str]) -> dict:
    from mindgraph.core import Mindgraph

    mg = Mindgraph.open(workspace)
    try:
        mg.search("warm up", 10)
        wall, cpu = [], []
        for query in queries:
            started, cpu_started = time.perf_counter(), time.process_time()
            mg.search(query, 10)
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu_started) * 1000)
    finally:
        mg.close()
    return {"median_ms": round(statistics.median(wall), 2),
            "p95_ms": round(_percentile(wall, 95), 2),
            "cpu_median_ms": round(statistics.median(cpu), 2), "queries": len(queries),
            "load": load()}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_figures(python: str, workspace: Path, queries: list[str], clients: int,
                  seconds: float, route: str = "/search") -> dict:
    """`mindgraph serve` from warm state files: start to first ``route`` answer (/search or
    /smart_search), resident memory, and ``clients`` concurrent clients of never-seen queries
    on it."""
    import httpx

    with serving(python, workspace, timeout=1800) as (base, server, started):
        first = httpx.get(f"{base}{route}", params={"q": queries[0]}, timeout=1800)
        first.raise_for_status()
        first_s = time.perf_counter() - started
        first_cpu = _cpu_seconds(server.pid)
        if route == "/smart_search":
            _require_vectors(first.json())
        paths = [f"{route}?" + urllib.parse.urlencode({"q": q, "limit": 10})
                 for q in queries[1:]]
        load_before = load()
        run = asyncio.run(_run_httpx(base, paths, clients, seconds))
        run["cpu_ms_per_request"] = round(
            (_cpu_seconds(server.pid) - first_cpu) * 1000 / max(run["requests"], 1), 1)
        if run["requests"] > len(paths):
            raise SystemExit("too few fresh queries for this run: some were asked twice")
        return {"start_to_first_answer_s": round(first_s, 1),
                "start_cpu_s": round(first_cpu, 1), **resident_mb(server.pid),
                "clients": clients, **run, "load": load_before}


def _require_vectors(answer: dict) -> None:
    """Stop when a hybrid answer did not use the vector retriever (nothing embedded, or the
    store unusable): its figures would be keyword figures."""
    if not any(stage.split(":")[0] == "vector" for stage in answer["timings_ms"]):
        raise SystemExit(f"/smart_search answered without the vector retriever (timings "
                         f"{answer['timings_ms']}, degradation {answer['degradation']}): embed "
                         f"the workspace (`mindgraph embed`) before the `serve hybrid` step")


def _workspace(base: Path, size: int, wiki_only: bool, source: gen_corpus.Source) -> None:
    """The generated vault at ``base`` (kept when a previous run made it)."""
    folder = base / ("wiki" if wiki_only else "raw")
    if folder.is_dir():
        return
    gen_corpus.generate(folder, size, 1, source)
    gen_corpus.write_workspace_config(base, size)
    if wiki_only:
        (base / "raw").mkdir(exist_ok=True)


def measure(size: int, pythons: dict[str, str], parent: Path, source: gen_corpus.Source,
            args: argparse.Namespace) -> dict:
    """Every step at one size, for each interpreter in turn (interleaved step by step)."""
    spaces = {}
    for name in pythons:
        spaces[name] = parent / f"{name}-{size}{'-wiki' if args.wiki_only else ''}"
        _workspace(spaces[name], size, args.wiki_only, source)
    row: dict = {"notes": size, "wiki_only": args.wiki_only, "load": {},
                 "s": {name: {} for name in pythons}}
    for step, step_args in STEPS:
        if step not in args.steps or (args.wiki_only and step in INGEST_STEPS):
            continue
        row["load"][step] = load()
        for name, python in pythons.items():
            row["s"][name][step] = figure = _run(python, spaces[name], step_args)
            print(f"  {size:>7} {name:8} {step:18} {figure['s']:8.2f} s, CPU {figure['cpu_s']} s"
                  f", {figure['rss_mb']} MB (load {row['load'][step]})", file=sys.stderr,
                  flush=True)
    if not set(QUERY_STEPS) & set(args.steps):
        return row
    queries = fresh_queries(spaces["ours"], args.queries + 20 * 400 * int(args.seconds), 7)
    for name, python in pythons.items():
        if "keyword p50" in args.steps:
            row["s"][name]["keyword p50"] = figure = keyword_latency(
                python, spaces[name], queries[:args.queries])
            print(f"  {size:>7} {name:8} keyword p50 {figure}", file=sys.stderr, flush=True)
        for step, route in (("serve", "/search"), ("serve hybrid", "/smart_search")):
            if step in args.steps:
                row["s"][name][step] = figure = serve_figures(
                    python, spaces[name], queries[args.queries:], args.clients, args.seconds,
                    route)
                print(f"  {size:>7} {name:8} {step} {figure}", file=sys.stderr, flush=True)
    return row


def _cell(row: dict, who: str, step: str) -> str:
    figure = row["s"][who].get(step)
    if figure is None:
        return "not run"
    if step == "keyword p50":
        return (f"{figure['median_ms']:.1f} ms (p95 {figure['p95_ms']:.1f}, CPU "
                f"{figure['cpu_median_ms']:.1f} ms), load {figure['load']}")
    if step in ("serve", "serve hybrid"):
        return (f"first answer {figure['start_to_first_answer_s']} s (CPU "
                f"{figure.get('start_cpu_s', '?')} s), RSS {figure['rss_mb']:,} MB"
                f" (peak {figure['peak_rss_mb']:,}); {figure['clients']} clients: "
                f"{figure['rps']} req/s, median {figure['median_ms']:.0f} ms, p95 "
                f"{figure['p95_ms']:.0f} ms, CPU {figure.get('cpu_ms_per_request', '?')} ms a "
                f"request, {figure['errors']} errors of {figure['requests']}, "
                f"load {figure['load']}")
    cell = f"{figure['s']:.1f} s (CPU {figure['cpu_s']:.1f} s, {figure['rss_mb']:,} MB)"
    if step == "ingest":
        cell += f", {row['notes'] / figure['s']:.0f} notes/s"
    return f"{cell}, load {row['load'][step]}"


def table(rows: list[dict]) -> str:
    """The growth table in markdown: one column per size, one row per step."""
    lines = ["| step | " + " | ".join(
        f"{r['notes']:,} notes{' (wiki only)' if r['wiki_only'] else ''}" for r in rows) + " |",
        "|" + "---|" * (len(rows) + 1)]
    for step in [name for name, _ in STEPS] + list(QUERY_STEPS):
        if not any(step in r["s"]["ours"] for r in rows):
            continue
        lines.append(f"| {step} | " + " | ".join(_cell(r, "ours", step) for r in rows) + " |")
        if any("baseline" in r["s"] and step in r["s"]["baseline"] for r in rows):
            lines.append(f"| {step} (baseline) | " + " | ".join(
                _cell(r, "baseline", step) if "baseline" in r["s"] else "—" for r in rows) + " |")
    return "\n".join(lines)


def main() -> None:
    """Run the sizes and print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--baseline", help="another interpreter to run beside ours")
    parser.add_argument("--steps", nargs="+", default=[n for n, _ in STEPS] + list(QUERY_STEPS),
                        help="the steps to run (default: all)")
    parser.add_argument("--wiki-only", action="store_true",
                        help="write the notes into wiki/ directly: no ingest steps")
    parser.add_argument("--workdir", type=Path, help="keep the workspaces here (reused)")
    parser.add_argument("--queries", type=int, default=200, help="keyword p50 queries (200)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0, help="of the REST run (20)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--latency-of", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.latency_of:                     # keyword_latency's child: queries on stdin
        print(json.dumps(_keyword_latency_here(args.latency_of, json.load(sys.stdin))))
        return
    pythons = {"ours": sys.executable}
    if args.baseline:
        pythons["baseline"] = args.baseline
    source = gen_corpus.load_source()
    rows = []
    with tempfile.TemporaryDirectory(prefix="mindgraph-scale-") as tmp:
        parent = args.workdir or Path(tmp)
        for size in args.sizes:
            rows.append(measure(size, pythons, parent, source, args))
            print(table(rows), file=sys.stderr, flush=True)
    print(json.dumps(rows, indent=2) if args.json else table(rows))


if __name__ == "__main__":
    main()
