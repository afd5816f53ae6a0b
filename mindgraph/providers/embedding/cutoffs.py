"""Cosine cut-offs per model: every model has its own cosine scale.

multilingual-e5-small's cosines sit in a narrow high band (English text against the vault's
Japanese and Chinese sections: median 0.83 for unrelated pages, 0.86 for related ones),
use-multilingual-v3's and MiniLM's lower and wider (0.32 / 0.49–0.54), so a feature that
keeps what is "similar enough" (enrich's links, coverage --semantic, triage's bands) needs a
cut-off per model. Under ``embedding.languages`` (routed.py) one provider holds several
models, and a vector belongs to exactly one of them (its block): the cut-off a hit needs is
that of the model that made the query vector, which ``route_of_vector`` tells.

A table maps a *name part* of a model_version ("e5", "use-multilingual") to its value; the
longest part found in a model's name wins, and a model no part names gets the caller's
default (MiniLM's, the figure each feature was first measured with).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence, TypeVar

import numpy as np

V = TypeVar("V")

# All measured on the Obsidian Help vault by bench/bench_link_threshold.py.
# enrich links: the lowest cosine that at most 1% of the unlinked page pairs of the model's
# languages (ja and zh: the routed default's) reach. MiniLM's, 0.71 on en/, is
# enrich.link_threshold (0.7: 1.05% of unlinked pairs).
LINK_CUTOFFS: dict[str, float] = {"e5": 0.94, "use-multilingual": 0.69}
# coverage --semantic: English text (as a query) against the model's sections, which are in
# other languages under the routing; the same 1% point (MiniLM's there: 0.68, against the 0.7
# measured on this repository's notes, coverage/semantic.py).
SEMANTIC_CUTOFFS: dict[str, float] = {"e5": 0.88, "use-multilingual": 0.61}
# triage's bands (score 1, 2, 3 at or above each): MiniLM's (0.25, 0.4, 0.55) mapped by rank,
# the cosine at the same quantile of all the coverage measurement's pairs.
TRIAGE_BANDS: dict[str, tuple[float, ...]] = {"e5": (0.82, 0.84, 0.86),
                                              "use-multilingual": (0.27, 0.37, 0.49)}


def lookup(model_version: str, table: Mapping[str, V], default: V) -> V:
    """The value of the longest name part of ``table`` found in ``model_version``."""
    name = model_version.lower()
    for part, value in sorted(table.items(), key=lambda kv: (-len(kv[0]), kv[0])):
        if part and str(part).lower() in name:
            return value
    return default


def members(provider: Any) -> tuple[str, ...]:
    """The model_version of each model of ``provider``, in route order (one for a provider
    that does not route languages)."""
    routed = getattr(provider, "members", None)
    if routed is None:
        return (provider.model_version,)
    return tuple(m.model_version for m in routed)


def per_member(provider: Any, table: Mapping[str, V], default: V,
               overrides: Mapping[str, V] | None = None) -> dict[str, V]:
    """Each model of ``provider`` → its value: ``overrides`` (name part → value, a user's)
    first, then ``table``, then ``default``."""
    return {name: lookup(name, overrides or {}, lookup(name, table, default))
            for name in members(provider)}


def route_of_vector(provider: Any, vector: np.ndarray) -> int:
    """The route (model) whose block ``vector`` fills; 0 for a provider that does not route."""
    blocks: Sequence[tuple[int, int]] | None = getattr(provider, "blocks", None)
    if not blocks:
        return 0
    row = np.asarray(vector).reshape(-1)
    filled = [i for i, (a, b) in enumerate(blocks) if np.any(row[a:b])]
    return filled[0] if filled else 0


def cutoff_of_vector(provider: Any, vector: np.ndarray, cutoffs: Mapping[str, V]) -> V:
    """The cut-off (of ``per_member``'s map) for a hit of ``vector``'s model."""
    return cutoffs[members(provider)[route_of_vector(provider, vector)]]


__all__ = ["LINK_CUTOFFS", "SEMANTIC_CUTOFFS", "TRIAGE_BANDS", "cutoff_of_vector", "lookup", "members",
           "per_member", "route_of_vector"]
