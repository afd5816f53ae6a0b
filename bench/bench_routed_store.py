"""Routed store layout (issue 13): do two workspaces answer the same, and at what query CPU?

    python bench/bench_routed_store.py dump WS out.json [--queries 120]
    python bench/bench_routed_store.py compare a.json b.json

``dump`` runs, in one warm process over WS, the dev questions of the shared corpora (when
found: ``--corpora DIR``) and
``--queries`` "<heading> <title>" queries of WS's own sections (en, ja, zh; a fixed seed),
each as a hybrid search (``smart_search``, top 10) and a vector-only search (top 10), and
writes every ranked page with its score, plus the median CPU ms of the hybrid searches
(after 20 warm-up queries). Run it on the wide layout with the older code
(PYTHONPATH=<main>) and on the split layout with this code, then ``compare``: the share of
queries whose ranked pages are identical and the largest score difference.
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

import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

DEV = shared_corpora.corpora() / "obsidian-help-queries.dev.jsonl"


def dump(workspace: Path, out: Path, count: int) -> None:
    from mindgraph.core import Mindgraph

    mg = Mindgraph.open(workspace)
    every = sorted({f"{s.heading} {p.title}".strip() for p in mg.vault().pages.values()
                    for s in p.sections if s.heading})
    random.Random(11).shuffle(every)
    dev = [json.loads(line)["query"] for line in DEV.read_text().splitlines() if line.strip()] \
        if DEV.is_file() else []
    for q in every[-20:]:
        mg.smart_search(q, 10)
    vector = mg.hybrid_retriever().vector
    results, cpu = {}, []
    for q in dev + every[:count]:
        started = time.process_time()
        hybrid = mg.smart_search(q, 10)
        cpu.append((time.process_time() - started) * 1e3)
        results[q] = {"hybrid": [[r.page, round(r.score, 4)] for r in hybrid.results],
                      "vector": [[h.path, round(h.score, 5)] for h in vector.search(q, 10)]}
    out.write_text(json.dumps({"code": str(ROOT), "cpu_median_ms": round(statistics.median(cpu), 2),
                               "load_average": round(os.getloadavg()[0], 1),
                               "results": results}, ensure_ascii=False, indent=0))
    print(json.dumps({"queries": len(results), "cpu_median_ms": round(statistics.median(cpu), 2),
                      "load_average": round(os.getloadavg()[0], 1)}))
    mg.close()


def compare(a: Path, b: Path) -> None:
    left, right = (json.loads(p.read_text())["results"] for p in (a, b))
    out = {}
    for kind in ("hybrid", "vector"):
        same, diff = 0, 0.0
        for q, got in left.items():
            other = right[q][kind]
            same += [p for p, _ in got[kind]] == [p for p, _ in other]
            diff = max([diff] + [abs(x[1] - y[1]) for x, y in zip(got[kind], other)])
        out[kind] = {"queries": len(left), "same_pages_in_order": same,
                     "max_score_difference": diff}
    print(json.dumps(out))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("workspace", type=Path)
    d.add_argument("out", type=Path)
    d.add_argument("--queries", type=int, default=120)
    shared_corpora.add_option(d)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.workspace, args.out, args.queries)
    else:
        compare(args.a, args.b)
    return 0


if __name__ == "__main__":
    sys.exit(main())
