"""Keyword hits the vector side does not back (``retrieval.keyword_only_penalty``, 0.1).

A page BM25 found that the vector side did not rank among its first pages (the ``fetch`` it
was asked for) although the page has vectors loses ``keyword_only_penalty`` (0: off) of its
fused score after the reserved places are given, so it may lose one: its meaning is far from
the query's. In the Obsidian Help vault these are mostly release notes (v0.8.5, v0.15.5, …)
naming a paraphrase's words in passing. A page without vectors (not embedded yet), or one
whose vector score could not be read, is left alone, and so is every page when the model
serving the query does not know its language (MiniLM's vectors of a Japanese question back
nothing; HybridRetriever._vector_factor < 1) or when the fusion filled in the missing scores
(a compressed-cosine model's: the page's own cosine is already weighed). Measured in
bench/bench_retrieval_levers.py (``kwonly`` / ``weakkw…`` rows, README).
"""

from __future__ import annotations

from typing import Callable, Collection, Mapping

from .results import Candidate


def unbacked_keyword_hits(candidates: Mapping[str, Candidate]) -> list[str]:
    """The pages the keyword side found and the vector side did not rank, when it ranked any."""
    if not any("vector" in c.sources for c in candidates.values()):
        return []
    return [p for p, c in candidates.items() if "keyword" in c.sources
            and "vector" not in c.sources]


def penalise_unbacked(candidates: Mapping[str, Candidate], penalty: float,
                      vector_scores: Callable[[Collection[str]], Mapping[str, float]]) -> None:
    """Lower, in place, the unbacked keyword hits that have vectors (``vector_scores`` of
    them above 0: ``VectorRetriever.page_scores`` gives 0 to a page without any)."""
    missing = unbacked_keyword_hits(candidates) if penalty > 0 else []
    if not missing:
        return
    try:
        scores = vector_scores(missing)
    except Exception:    # a refinement: never fail the search (the fill reports the store)
        return
    for path in missing:
        if scores.get(path, 0.0) > 0:
            candidates[path].score *= 1 - penalty
