"""Stage 1 in parallel threads or in turn: which is faster for the local model?

    python bench/bench_stage1.py [-C /tmp/oh] [--queries 600]

Runs never-seen queries (the vault's section headings, as bench_rest.py --queries fresh) through
the hybrid retriever in-process, without the answer cache, alternating blocks of 60 between
three ways of running keyword and vector retrieval: both on pool threads, both in the calling
thread in turn, and keyword in the calling thread with vector on a pool thread. Reports the
median and p95 per way. The workspace (-C) must have vectors (`mindgraph embed`).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_rest import _fresh_queries  # noqa: E402

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval import hybrid  # noqa: E402


def main() -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-C", "--dir", default="/tmp/oh", help="workspace with vectors")
    parser.add_argument("--queries", type=int, default=900)
    args = parser.parse_args()
    mg = Mindgraph.open(args.dir)
    mg.smart_search("warm up")
    retriever = mg.hybrid_retriever()
    run_all = hybrid._run_all

    def vector_on_pool(calls, parallel):
        if len(calls) < 2:
            return run_all(calls, False)
        job = hybrid._POOL.submit(hybrid._timed_outcome, calls["vector"])
        out = {n: hybrid._timed_outcome(c) for n, c in calls.items() if n != "vector"}
        out["vector"] = job.result()
        return out

    ways = {"both on pool threads": lambda calls, _: run_all(calls, True),
            "in turn": lambda calls, _: run_all(calls, False),
            "vector on a pool thread": vector_on_pool}
    times: dict[str, list[float]] = {name: [] for name in ways}
    queries = _fresh_queries()[:args.queries]
    block = 60
    try:
        for start in range(0, len(queries), block * len(ways)):
            for i, (name, way) in enumerate(ways.items()):
                hybrid._run_all = way
                for q in queries[start + i * block:start + (i + 1) * block]:
                    began = time.perf_counter()
                    retriever.search(q, use_cache=False)
                    times[name].append((time.perf_counter() - began) * 1e3)
    finally:
        hybrid._run_all = run_all
    print(f"{len(queries)} never-seen queries, hybrid in-process, local model + embedded store")
    for name, values in times.items():
        ordered = sorted(values)
        print(f"  {name:24s} median {statistics.median(values):6.2f} ms   "
              f"p95 {ordered[int(0.95 * (len(ordered) - 1))]:6.2f} ms   n={len(values)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
