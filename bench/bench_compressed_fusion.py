"""What fitting the fusion to a model with compressed cosines costs per query.

    python bench/bench_compressed_fusion.py -C WS [--questions FILE] [--rounds 3]

WS is a workspace embedded with multilingual-e5-small for some language (for example
``embedding: {languages: {ja: multilingual-e5-small, zh: multilingual-e5-small}}``). Its
Japanese and Chinese questions go through two hybrid retrievers over the same vault and
vectors, one with ``retrieval.compressed_cosine_fusion`` on (the default) and one with it off,
interleaved question by question, each question's vector already cached (so the figure is the
fusion side: the filled scores' store lookups). Prints the median wall and CPU milliseconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.bench.runner import METHODS  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval.datasets import load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import SearchOptions  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-C", "--workspace", type=Path, required=True)
    parser.add_argument("--questions", type=Path,
                        default=ROOT / "bench" / "questions" / "obsidian-help-heldout.jsonl")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    settings = load_settings(args.workspace)
    off = dataclasses.replace(settings, retrieval=dataclasses.replace(
        settings.retrieval, compressed_cosine_fusion=False))
    retrievers = {"fitted": Mindgraph(settings).hybrid_retriever(),
                  "before": Mindgraph(off).hybrid_retriever()}
    questions = [q for q in load_questions(args.questions) if q.lang in ("ja", "zh")]
    options = SearchOptions(**{**METHODS["hybrid"].__dict__, "top_k": 10})
    wall: dict[str, list[float]] = {name: [] for name in retrievers}
    cpu: dict[str, list[float]] = {name: [] for name in retrievers}
    for _ in range(args.rounds):
        for question in questions:
            for name, retriever in retrievers.items():
                retriever.search(question.query, options, use_cache=False)  # vector cached
                started, used = time.perf_counter(), time.process_time()
                retriever.search(question.query, options, use_cache=False)
                wall[name].append((time.perf_counter() - started) * 1e3)
                cpu[name].append((time.process_time() - used) * 1e3)
    for name in retrievers:
        print(f"{name}: median {statistics.median(wall[name]):.1f} ms wall, "
              f"{statistics.median(cpu[name]):.2f} ms CPU ({len(wall[name])} searches)")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
