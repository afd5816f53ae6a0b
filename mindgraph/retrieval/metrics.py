"""Ranking metrics over page (or document) ids: hit@k, recall@k, MRR@k, nDCG@k.

``ranked`` is a ranked list of ids (best first); ``relevant`` is the set of relevant ids, or a
mapping id → graded relevance for nDCG. Every function returns a value in [0, 1].
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping, Sequence


def hit_at(ranked: Sequence[str], relevant: Iterable[str], k: int = 1) -> float:
    """1.0 when a relevant id is among the first ``k``, else 0.0."""
    wanted = set(relevant)
    return 1.0 if any(r in wanted for r in ranked[:k]) else 0.0


def recall_at(ranked: Sequence[str], relevant: Iterable[str], k: int = 5) -> float:
    """Share of the relevant ids found among the first ``k``."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def mrr_at(ranked: Sequence[str], relevant: Iterable[str], k: int = 10) -> float:
    """Reciprocal rank of the first relevant id within the first ``k`` (0 if none)."""
    wanted = set(relevant)
    for rank, item in enumerate(ranked[:k], 1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], relevance: Mapping[str, float] | Iterable[str],
            k: int = 10) -> float:
    """Normalised discounted cumulative gain at ``k`` (gain = relevance grade, as in BEIR)."""
    grades = dict(relevance) if isinstance(relevance, Mapping) else dict.fromkeys(relevance, 1.0)
    dcg = sum(grades.get(item, 0.0) / math.log2(rank + 1)
              for rank, item in enumerate(ranked[:k], 1))
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean (0.0 for no values)."""
    values = list(values)
    return sum(values) / len(values) if values else 0.0
