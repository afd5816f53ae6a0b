"""Can one tenant time whether another searched a word? A Japanese or Chinese query's analysis
(segmentation, its terms, the words a hit's explanation reports) for a query never asked in
this process against the same query asked just before — by another tenant of the server,
whose search filled the caches every tenant shares.

    python bench/bench_query_cache.py                 # the dev questions in ja and zh
    python bench/bench_query_cache.py --runs 50 --json

For each ja/zh question of obsidian-help-queries.dev.jsonl: the median over ``--runs`` of
the query path's analysis (``analyze(query, query=True)``, ``han_query_languages``,
``explain.query_words``) with the segmentation caches emptied first ("never asked") and
right after the same analysis ("asked before"). Run it on two checkouts to compare: where
the two columns differ, a search's time tells whether the query was asked before; the
cost of making them equal is the "never asked" column paid by every search.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

import importlib  # noqa: E402

explain = importlib.import_module("mindgraph.retrieval.explain")   # not the function
from mindgraph.retrieval.analyzer import analyze, han_query_languages  # noqa: E402
from mindgraph.text import cjk  # noqa: E402


def _caches() -> list:
    """Every module-level cache a query's analysis may read (those of this checkout)."""
    found = [getattr(cjk, name) for name in ("words", "_ja_node", "_zh_node")]
    found.append(explain.query_words)
    return [f for f in found if hasattr(f, "cache_clear")]


def query_path(query: str) -> None:
    """What a keyword search does with its query before and around the index (inside
    ``one_query``, as a search runs, where the checkout has it)."""
    with getattr(cjk, "one_query", contextlib.nullcontext)():
        analyze(query, query=True)
        han_query_languages(query)
        explain.query_words(query)


def timed(query: str, runs: int, clear: bool) -> float:
    """Median µs of ``query_path``; ``clear``: with the caches emptied before each run."""
    times = []
    for _ in range(runs):
        if clear:
            for cache in _caches():
                cache.cache_clear()
        else:
            query_path(query)               # another tenant asked it just before
        started = time.perf_counter()
        query_path(query)
        times.append((time.perf_counter() - started) * 1e6)
    return statistics.median(times)


def main() -> None:
    corpora = shared_corpora.corpora()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    questions = [json.loads(line) for line in
                 (shared_corpora.require(corpora) / "obsidian-help-queries.dev.jsonl")
                 .read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [q for q in questions if q.get("lang") in ("ja", "zh")]
    query_path("準備")              # the dictionaries loaded, not timed
    query_path("准备")
    rows = [{"lang": q["lang"], "query": q["query"],
             "never_asked_us": round(timed(q["query"], args.runs, True), 1),
             "asked_before_us": round(timed(q["query"], args.runs, False), 1)}
            for q in questions]
    never = statistics.median(r["never_asked_us"] for r in rows)
    before = statistics.median(r["asked_before_us"] for r in rows)
    if args.json:
        print(json.dumps({"rows": rows, "never_asked_us": never, "asked_before_us": before},
                         ensure_ascii=False, indent=2))
        return
    print(f"{'lang':4} {'never asked':>12} {'asked before':>13}  query")
    for r in rows:
        print(f"{r['lang']:4} {r['never_asked_us']:>9.1f} µs {r['asked_before_us']:>10.1f} µs"
              f"  {r['query']}")
    print(f"median of {len(rows)} questions: never asked {never:.1f} µs, asked before "
          f"{before:.1f} µs (ratio {never / before:.2f})")


if __name__ == "__main__":
    main()
