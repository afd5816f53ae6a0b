"""Fusion of ranked lists: pure functions chosen by configuration (``retrieval.fusion``).

Both return scores in [0, 1] so that one minimum score and one graph boost work for either:
- ``weighted_fusion``: each retriever's scores divided by its top score, then a weighted sum
  divided by the total weight. Dividing by the top (rather than min-max) keeps the relative
  distances a retriever measured: cosine 0.55 against a top of 0.60 stays close to the top
  instead of being stretched towards 0. On the development questions this scored MRR@10 0.842
  against 0.778 for min-max with the same weights (`mindgraph bench`, see README);
- ``rrf_fusion``: reciprocal rank fusion, sum of w / (k + rank) with k = 60, divided by what a
  page ranked first by every retriever would get.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

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


def maxnorm(ranking: Ranking) -> dict[str, float]:
    """Scores divided by the top score (negative scores count as 0)."""
    if not ranking:
        return {}
    top = max(score for _, score in ranking)
    if top <= 0:
        return {key: 0.0 for key, _ in ranking}
    return {key: max(0.0, score) / top for key, score in ranking}


def meanmax(ranking: Ranking) -> dict[str, float]:
    """How far above the list's mean each score is, as a share of the top's distance (the
    mean and below count as 0): a flat list, where the retriever cannot tell pages apart,
    gives little to anyone instead of nearly 1 to everyone."""
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    mean, top = sum(scores) / len(scores), max(scores)
    if top - mean <= 1e-12:
        return {key: 1.0 for key, _ in ranking}
    return {key: max(0.0, score - mean) / (top - mean) for key, score in ranking}


NORMALIZERS = {"max": maxnorm, "minmax": minmax, "meanmax": meanmax}


def weighted_fusion(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
                    normalize: Callable[[Ranking], dict[str, float]] = maxnorm
                    ) -> dict[str, float]:
    """Weighted sum of every retriever's normalised scores, divided by the total weight."""
    total = sum(weights.get(name, 0.0) for name in rankings) or 1.0
    fused: dict[str, float] = {}
    for name, ranking in rankings.items():
        weight = weights.get(name, 0.0)
        for key, score in normalize(ranking).items():
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
