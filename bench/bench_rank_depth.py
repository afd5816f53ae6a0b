"""A search for few results, ranked at its own depth (before session 18) or as one for 10 and
cut (``retrieval.hybrid.RANK_DEPTH``): hit@1 and recall@k for k = 1, 3, 5 side by side.

    python bench/bench_rank_depth.py -C bench-out/oh [--corpora DIR]

Agents ask for few results: `context` searches for 5, MCP clients often pass limit 3 or 5.
Before, the candidate pools (3 × k pages from each retriever, at least 15) and the places the
language preference and the reservations consider all shrank with k, so the first page of a
search for 3 could differ from the first of a search for 10, the depth every README figure is
measured at. WS: an embedded workspace over the Obsidian Help vault (as for
bench/bench_retrieval_levers.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import mean

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import shared_corpora  # noqa: E402
from mindgraph.bench.corpora import wiki_retriever  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval import hybrid  # noqa: E402
from mindgraph.retrieval.datasets import load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import SearchOptions  # noqa: E402
from mindgraph.retrieval.metrics import hit_at, recall_at  # noqa: E402

HELD_OUT = ROOT / "bench" / "questions" / "obsidian-help-heldout.jsonl"
CORPORA = shared_corpora.corpora()


def figures(retriever, questions, k: int) -> dict[str, float]:
    """hit@1 and recall@k of searches for k results, and how many first pages equal the
    first page of a search for 10."""
    hits, recalls, same = [], [], []
    for q in questions:
        if retriever.vector is not None:
            retriever.vector.forget_queries()
        pages = [r.page for r in retriever.search(q.query, SearchOptions(top_k=k),
                                                  use_cache=False).results]
        ten = [r.page for r in retriever.search(q.query, SearchOptions(top_k=10),
                                                use_cache=False).results]
        hits.append(hit_at(pages, q.relevant, 1))
        recalls.append(recall_at(pages, q.relevant, k))
        same.append(float(pages == ten[:k]))
    return {"hit1": mean(hits), f"recall@{k}": mean(recalls), "prefix_of_10": mean(same)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    args = parser.parse_args()
    sets = {"dev": load_questions(CORPORA / "obsidian-help-queries.dev.jsonl"),
            "held-out": load_questions(HELD_OUT)}
    retriever = wiki_retriever(Mindgraph(load_settings(args.workspace)))
    print("set       k  depth   hit@1  recall@k  first k = first k of 10")
    for name, questions in sets.items():
        for k in (1, 3, 5):
            for label, depth in (("own", 0), ("10", 10)):
                hybrid.RANK_DEPTH = depth
                f = figures(retriever, questions, k)
                print(f"{name:9} {k}  {label:5}  {f['hit1']:.3f}   {f[f'recall@{k}']:.3f}     "
                      f"{f['prefix_of_10']:.3f}")
    hybrid.RANK_DEPTH = 10


if __name__ == "__main__":
    main()
