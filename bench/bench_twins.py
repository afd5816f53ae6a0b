"""What the twin search (retrieval/twins.py) costs a Japanese question, side by side in one
process: hybrid over the Japanese dev and held-out questions with ``twin_weights`` as
configured and with ``{}``, in interleaved rounds (answer and query-vector caches cleared),
wall and CPU medians per search.

    python bench/bench_twins.py -C WS [--rounds 4]

WS: a workspace whose wiki is the Obsidian Help vault, embedded (``mindgraph embed``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.bench.corpora import wiki_retriever  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval.datasets import load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import SearchOptions  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
SETS = (CORPORA / "obsidian-help-queries.dev.jsonl",
        ROOT / "bench" / "questions" / "obsidian-help-heldout.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("-C", "--dir", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    retriever = wiki_retriever(Mindgraph(load_settings(args.dir)), False, None)
    queries = [q.query for path in SETS for q in load_questions(path) if q.lang == "ja"]
    variants = {"twins": retriever.settings,
                "no twins": replace(retriever.settings, twin_weights={})}
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in variants}
    for round_ in range(args.rounds + 1):           # round 0 warms up
        order = list(variants) if round_ % 2 else list(reversed(variants))
        for name in order:
            retriever.settings = variants[name]
            for query in queries:
                if retriever.vector is not None:
                    retriever.vector.forget_queries()
                wall, cpu = time.perf_counter(), time.process_time()
                retriever.search(query, SearchOptions(top_k=10), use_cache=False)
                if round_:
                    times[name][0].append((time.perf_counter() - wall) * 1e3)
                    times[name][1].append((time.process_time() - cpu) * 1e3)
    for name, (wall, cpu) in times.items():
        print(f"{name:9} wall median {statistics.median(wall):7.1f} ms, CPU median "
              f"{statistics.median(cpu):6.1f} ms over {len(wall)} searches")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
