"""Warm keyword queries over a wiki whose every file is a hard link (as `cp -al` makes).

    python bench/bench_hardlinks.py --notes 10000 [--queries 60] [--rounds 3]
        [--trees /tmp/base-clone .]     # side by side: each tree's code, rounds interleaved

A file with another name can change with no inotify event (an edit through the other name),
so a server compares such files by their stats. Comparing all of them before every query
cost 1.3 s a query at 100,000 notes (session 7); the page cache now compares the share the
time since the last query calls for (every one within page.cache.ALIAS_RECHECK_S). Each
round is a new process per tree: it opens the workspace (state files shared, built by the
first round), makes two searches (the second starts the watch) and then times ``--queries``
keyword searches back to back, then how long after an edit through the other name the first
query that shows it starts.
Prints per tree the median over rounds of the query p50, CPU per query, and the staleness.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("vault", "sync", "plugin", "graph", "canvas", "template", "protein", "cell",
         "link", "search", "theme", "backup", "mobile", "folder", "tag", "publish")


def prepare(base: Path, notes: int) -> Path:
    """A workspace at ``base`` whose wiki/ files are hard links of raw/ (made once)."""
    if not (base / "mindgraph.yml").is_file():
        subprocess.run([sys.executable, str(ROOT / "bench" / "gen_corpus.py"), "--notes",
                        str(notes), "--seed", "1", "--workspace", str(base)], check=True)
        subprocess.run(["cp", "-al", str(base / "raw"), str(base / "wiki")], check=True)
    return base


def measure(workspace: Path, queries: int) -> dict:
    """One process's figures (run with the tree under test first on sys.path)."""
    from mindgraph.config import load_settings
    from mindgraph.core import Mindgraph

    mg = Mindgraph(load_settings(workspace))
    try:
        mg.search("warm up")
        mg.search("warm up")
        assert mg._cache is not None and mg._cache.watching, "the watch did not start"
        times, cpu = [], time.process_time()
        for i in range(queries):
            started = time.perf_counter()
            mg.search(f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7 + 3) % len(WORDS)]}")
            times.append(time.perf_counter() - started)
        cpu = (time.process_time() - cpu) / queries
        # an edit through the other name (raw/ holds the other names): when does it show?
        page = sorted(mg._cache.pages)[len(mg._cache.pages) // 2]
        other = workspace / "raw" / page
        original = other.read_bytes()
        try:
            with open(other, "wb") as handle:      # in place: the same inode as wiki/
                handle.write(original + b"\n\nquixotically zymurgical\n")
            edited = time.perf_counter()
            while True:     # stale: from the edit to the start of the query that shows it
                asked = time.perf_counter()
                if mg.search("quixotically zymurgical") or asked - edited > 60:
                    break
                time.sleep(0.02)
            stale = asked - edited
        finally:
            with open(other, "wb") as handle:
                handle.write(original)
    finally:
        mg.close()
    return {"p50_ms": statistics.median(times) * 1e3, "cpu_ms": cpu * 1e3, "stale_s": stale}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None,
                        help="where the workspace is kept (default: a temporary folder)")
    parser.add_argument("--trees", nargs="+", type=Path, default=[ROOT],
                        help="source trees to compare, each run with its own code")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.queries)))
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-hardlinks-") as tmp:
        workspace = prepare(args.dir or Path(tmp) / "ws", args.notes)
        runs: dict[str, list[dict]] = {str(t): [] for t in args.trees}
        for _ in range(args.rounds):
            for tree in args.trees:
                env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
                done = subprocess.run([sys.executable, __file__, "--measure", str(workspace),
                                       "--queries", str(args.queries)], env=env,
                                      capture_output=True, text=True, check=True)
                runs[str(tree)].append(json.loads(done.stdout.strip().splitlines()[-1]))
        load = os.getloadavg()[0]
    for tree, results in runs.items():
        med = {k: statistics.median(r[k] for r in results) for k in results[0]}
        print(f"{tree}: {args.notes} hard-linked notes, keyword query p50 {med['p50_ms']:.1f} ms "
              f"(CPU {med['cpu_ms']:.1f} ms a query), an edit through the other name shows "
              f"after {med['stale_s']:.2f} s; median of {args.rounds} rounds "
              f"{[round(r['p50_ms'], 1) for r in results]}")
    print(f"load average {load:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
