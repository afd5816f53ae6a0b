"""Warm hybrid latency over a workspace with vectors (issue 13's "warm hybrid p50 <= 15 ms,
query embedding included"): never-seen queries ("<heading> <title>" of its sections,
shuffled by a fixed seed), each through `Mindgraph.smart_search` in one warm process.

    python bench/bench_hybrid_warm.py WS --round 1 --queries 40

Prints the median wall and CPU milliseconds (CPU of every thread of the process: on a loaded
machine the wall time is mostly waiting for a core) and the load average. To compare two
checkouts side by side, run both on the same workspace in turns, round after round, with
PYTHONPATH pointing at each (each round takes other queries; both take the same ones).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or
            Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT))

from mindgraph.core import Mindgraph  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--round", type=int, default=0, help="which queries (0, 1, ...)")
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    mg = Mindgraph.open(args.workspace)
    every = sorted({f"{s.heading} {p.title}".strip() for p in mg.vault().pages.values()
                    for s in p.sections if s.heading})
    random.Random(7).shuffle(every)
    mg.smart_search("warm up the vectors", 10)
    for q in every[-20:]:       # indexes, model and calibration warm; these never measured
        mg.smart_search(q, 10)
    queries = every[args.round * args.queries:(args.round + 1) * args.queries]
    wall, cpu = [], []
    for q in queries:
        started, cpu_started = time.perf_counter(), time.process_time()
        mg.smart_search(q, 10)
        wall.append((time.perf_counter() - started) * 1e3)
        cpu.append((time.process_time() - cpu_started) * 1e3)
    print(json.dumps({"code": str(ROOT), "round": args.round, "queries": len(queries),
                      "median_ms": round(statistics.median(wall), 2),
                      "cpu_median_ms": round(statistics.median(cpu), 2),
                      "load_average": round(os.getloadavg()[0], 1)}))
    mg.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
