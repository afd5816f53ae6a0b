"""Fusion of ranked lists: pure functions chosen by configuration (``retrieval.fusion``).

Both return scores in [0, 1] so that one minimum score and one graph boost work for either:
- ``weighted_fusion``: each retriever's scores min-max normalised over its candidates, then a
  weighted sum divided by the total weight (reference weights keyword 0.4 / vector 0.6);
- ``rrf_fusion``: reciprocal rank fusion, sum of w / (k + rank) with k = 60, divided by what a
  page ranked first by every retriever would get.
"""

from __future__ import annotations

from typing import Mapping, Sequence

Ranking = Sequence[tuple[str, float]]   # (key, score), best first


def minmax(ranking: Ranking) -> dict[str, float]:
    """Scores scaled to [0, 1] over the list; a single candidate (or all equal) gets 1."""
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    low, high = min(scores), max(scores)
    if high - low <= 1e-12:
        return {key: 1.0 for key, _ in ranking}
    return {key: (score - low) / (high - low) for key, score in ranking}


def weighted_fusion(rankings: Mapping[str, Ranking], weights: Mapping[str, float]
                    ) -> dict[str, float]:
    """Normalised weighted sum of every retriever's min-max scores."""
    total = sum(weights.get(name, 0.0) for name in rankings) or 1.0
    fused: dict[str, float] = {}
    for name, ranking in rankings.items():
        weight = weights.get(name, 0.0)
        for key, score in minmax(ranking).items():
            fused[key] = fused.get(key, 0.0) + weight * score / total
    return fused


def rrf_fusion(rankings: Mapping[str, Ranking], weights: Mapping[str, float], k: int = 60
               ) -> dict[str, float]:
    """Weighted reciprocal rank fusion, scaled so that rank 1 everywhere scores 1."""
    best = sum(weights.get(name, 0.0) / (k + 1) for name in rankings) or 1.0
    fused: dict[str, float] = {}
    for name, ranking in rankings.items():
        weight = weights.get(name, 0.0)
        for rank, (key, _) in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank) / best
    return fused


FUSIONS = {"weighted": weighted_fusion, "rrf": rrf_fusion}
