"""How often fusion drops a page only one retriever ranks well, and how often such a page is an
answer at all (session 23, the fresh questions' third finding).

    python bench/bench_one_sided_drops.py -C WS

For each question of dev, held-out, agent-cjk and fresh23 (hybrid, 60 results): whether its
first relevant page is in one side's first 5 and not in the other's first 20, and then whether
hybrid still has it in its first 5; and, over every result, how many pages are at a side's rank
3-5 with the other side not in its first 20 (what a deeper reserve would lift) and how many of
them are relevant. WS: a workspace whose wiki is the Obsidian Help vault, embedded.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_fusion import HELD_OUT  # noqa: E402
from mindgraph.bench.corpora import wiki_retriever  # noqa: E402
from mindgraph.config import load_settings  # noqa: E402
from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.retrieval.datasets import load_questions  # noqa: E402
from mindgraph.retrieval.hybrid import SearchOptions  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

QUESTIONS = ROOT / "bench" / "questions"
WIDE = 60


def side_ranks(result) -> tuple[int, int]:
    """(keyword rank, vector rank) of a result, 0 where that side did not rank it."""
    ranks = {k: v.get("rank") or 0 for k, v in result.sources.items() if isinstance(v, dict)}
    return ranks.get("keyword", 0), ranks.get("vector", 0)


def one_sided(kw: int, vec: int, best: int) -> bool:
    """Ranked within ``best`` by one side and not within 20 by the other."""
    return (0 < kw <= best and not 0 < vec <= 20) or (0 < vec <= best and not 0 < kw <= 20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("-C", dest="workspace", default=".")
    args = parser.parse_args()
    corpora = shared_corpora.require(shared_corpora.corpora(), "obsidian-help-queries.dev.jsonl")
    wiki = wiki_retriever(Mindgraph(load_settings(args.workspace)))
    sets = {"dev": corpora / "obsidian-help-queries.dev.jsonl", "held-out": HELD_OUT,
            "agent-cjk": QUESTIONS / "obsidian-help-agent-cjk.jsonl",
            "fresh23": QUESTIONS / "obsidian-help-fresh23.jsonl"}
    for key, path in sets.items():
        questions = load_questions(path)
        strong, dropped, lifted, answers = 0, [], 0, 0
        for q in questions:
            results = wiki.search(q.query, SearchOptions(top_k=WIDE), use_cache=False).results
            for place, r in enumerate(results, 1):
                kw, vec = side_ranks(r)
                if one_sided(kw, vec, 5) and not one_sided(kw, vec, 2):
                    lifted += 1
                    answers += r.page in q.relevant
                if r.page == q.relevant[0] and one_sided(kw, vec, 5):
                    strong += 1
                    if place > 5:
                        dropped.append(f"{q.id} (keyword {kw}, vector {vec}, hybrid {place})")
        print(f"{key}: {len(questions)} questions; answer in one side's first 5 and not in the "
              f"other's first 20: {strong}, out of hybrid's first 5: {len(dropped)}"
              + "".join(f"\n  {d}" for d in dropped)
              + f"\n  pages at a side's rank 3-5, the other side not in its first 20: {lifted},"
                f" relevant {answers}")


if __name__ == "__main__":
    main()
