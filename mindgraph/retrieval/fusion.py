"""Fusion of ranked lists: pure functions chosen by configuration (``retrieval.fusion`` and
``retrieval.normalization``).

Both fusions return scores in [0, 1] so that one minimum score and one graph boost work for
either:
- ``weighted_fusion``: each retriever's scores normalised, then a weighted sum divided by the
  total weight;
- ``rrf_fusion``: reciprocal rank fusion, sum of w / (k + rank) with k = 60, divided by what a
  page ranked first by every retriever would get.

Normalisers (``NORMALIZERS``), each a function of one retriever's ranking and its ``floor``:
- ``max``: (score − floor) / (top − floor). With floor 0 it divides by the top, which keeps the
  distances a retriever measured (cosine 0.55 under a top of 0.60 stays close to the top);
- ``calibrated``: ``max`` with the floor the vector retriever measured on this vault for its
  model (``VectorRetriever.noise_level``: what a typical query's 30th-nearest page scores).
  A model whose cosines all sit in 0.80–0.90 has them all near the top under ``max``, which
  flattens the vector side; above its own noise level they spread again, and a query whose
  best page is no closer than that noise level gets nothing from the vector side;
- ``minmax``: (score − lowest) / (top − lowest) over the list;
- ``meanmax``: distance above the list's mean as a share of the top's (a flat list gives
  little to anyone);
- ``zscore``: the standard normal CDF of each score's z-score over the list.

``spread_weights`` fits the mix to the query (``retrieval.spread_weights``): a retriever's
weight is scaled by how far its scores fall from its first to its ``SPREAD_DEPTH``-th page, as
a share of its first's height above its zero point (0 for BM25; for the vector side the
query's own background, calibration.py, so a model whose cosines sit in a narrow band is
measured in its own units). A retriever that cannot tell its pages apart for this query (a
flat list) says little about their order.
"""

from __future__ import annotations

import math
import statistics
from typing import Callable, Mapping, Sequence

Ranking = Sequence[tuple[str, float]]   # (key, score), best first
Normalizer = Callable[[Ranking, float], dict[str, float]]


def minmax(ranking: Ranking, floor: float = 0.0) -> dict[str, float]:
    """Scores scaled to [0, 1] over the list; a single candidate (or all equal) gets 1."""
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    low, high = min(scores), max(scores)
    if high - low <= 1e-12:
        return {key: 1.0 for key, _ in ranking}
    return {key: (score - low) / (high - low) for key, score in ranking}


def maxnorm(ranking: Ranking, floor: float = 0.0) -> dict[str, float]:
    """(score − floor) / (top − floor), at least 0; all 0 when the top is not above the floor."""
    if not ranking:
        return {}
    top = max(score for _, score in ranking)
    if top - floor <= 1e-12:
        return {key: 0.0 for key, _ in ranking}
    return {key: max(0.0, score - floor) / (top - floor) for key, score in ranking}


def meanmax(ranking: Ranking, floor: float = 0.0) -> dict[str, float]:
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


def zscore(ranking: Ranking, floor: float = 0.0) -> dict[str, float]:
    """Φ((score − mean) / stdev) over the list; a single candidate (or all equal) gets 1."""
    if not ranking:
        return {}
    scores = [score for _, score in ranking]
    spread = statistics.pstdev(scores)
    if spread <= 1e-12:
        return {key: 1.0 for key, _ in ranking}
    mean = statistics.fmean(scores)
    return {key: 0.5 * (1.0 + math.erf((score - mean) / spread / math.sqrt(2)))
            for key, score in ranking}


SPREAD_DEPTH = 10


def spread(ranking: Ranking, zero: float = 0.0, depth: int = SPREAD_DEPTH) -> float | None:
    """(first − ``depth``-th score) / (first − ``zero``), in [0, 1]; None for a list shorter
    than ``depth`` (a rare word's few pages, a small wiki: no tenth page to fall to) or a
    first score not above ``zero``."""
    scores = [score for _, score in ranking]
    if len(scores) < max(depth, 2) or scores[0] - zero <= 1e-12:
        return None
    fall = (scores[0] - scores[depth - 1]) / (scores[0] - zero)
    return min(1.0, max(0.0, fall))


def spread_weights(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
                   zeros: Mapping[str, float] | None = None,
                   names: tuple[str, ...] = ("keyword", "vector")) -> dict[str, float]:
    """``weights`` with those of ``names`` scaled by each one's ``spread`` and rescaled to
    their old total (so another retriever's share, a note app's, is kept). Unchanged unless
    at least two of ``names`` are ranked, each with a spread, and not all spreads are 0."""
    found = {name: spread(rankings[name], (zeros or {}).get(name, 0.0))
             for name in names if name in rankings}
    if len(found) < 2 or any(value is None for value in found.values()):
        return dict(weights)
    scaled = {name: weights.get(name, 0.0) * value for name, value in found.items()}
    total, new_total = sum(weights.get(name, 0.0) for name in found), sum(scaled.values())
    if new_total <= 1e-12:
        return dict(weights)
    return {**weights, **{name: total * value / new_total for name, value in scaled.items()}}


def reserve_shares(weights: Mapping[str, float], base: str = "keyword") -> dict[str, float]:
    """How much each retriever counts for keeping its top pages near the top: its weight
    against ``base``'s (BM25, which every hybrid query runs), w / (w + w_base); ``base``'s own
    against the heaviest other's. Not a share of the total: that total grows when a third
    retriever is trusted more (a multilingual model's full vector weight on a Japanese
    question), which took the reservation from the twin ranking (0.18 of 1.18) though
    nothing about the twin had changed (README, "Routed by default"). Without
    ``base``, each weight as a share of the total."""
    if base not in weights:
        total = sum(weights.values()) or 1.0
        return {name: w / total for name, w in weights.items()}
    mine = weights[base]
    others = [w for name, w in weights.items() if name != base]
    out = {base: mine / (mine + max(others)) if others and mine + max(others) > 0 else 1.0}
    for name, w in weights.items():
        if name != base:
            out[name] = w / (w + mine) if w + mine > 0 else 0.0
    return out


NORMALIZERS: dict[str, Normalizer] = {"max": maxnorm, "calibrated": maxnorm,
                                      "minmax": minmax, "meanmax": meanmax, "zscore": zscore}


def weighted_fusion(rankings: Mapping[str, Ranking], weights: Mapping[str, float],
                    normalize: Normalizer = maxnorm,
                    floors: Mapping[str, float] | None = None) -> dict[str, float]:
    """Weighted sum of every retriever's normalised scores, divided by the total weight
    (``floors``: each retriever's floor for the normaliser, 0 when not given)."""
    total = sum(weights.get(name, 0.0) for name in rankings) or 1.0
    fused: dict[str, float] = {}
    for name, ranking in rankings.items():
        weight = weights.get(name, 0.0)
        for key, score in normalize(ranking, (floors or {}).get(name, 0.0)).items():
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
