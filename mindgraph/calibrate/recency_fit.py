"""Which decay λ ranks the pages people used highest.

Each query is searched once; its candidates' scores are taken before the decay (a result's
``recency`` boost is divided back out), and for every λ of the grid each dated,
non-evergreen candidate's score is multiplied by exp(−λ × its age in days), as retrieval does
(mindgraph/retrieval/recency.py). The measure is MRR@10 of the used pages. Among the λ whose
MRR is within TIE of the best, the one closest to the current setting wins: a change needs
evidence. Evergreen candidates are old pages that were used for MIN_EVERGREEN_USES queries or
more and that the best λ still ranks lower than no decay would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

GRID = (0.0, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05)
TIE = 0.005
MIN_EVERGREEN_USES = 2


@dataclass(frozen=True)
class Example:
    """One query with the pages that answered it, and its candidates before the decay."""

    query: str
    relevant: frozenset[str]
    candidates: tuple[tuple[str, float], ...]     # (page, score without decay)
    source: str = "usage"                          # "usage" or "questions"


@dataclass(frozen=True)
class Fit:
    """The grid, the current λ's score, the proposal, and the evergreen candidates."""

    current: float
    proposed: float
    curve: tuple[tuple[float, float], ...]       # (λ, MRR@10), in grid order
    examples: int
    evergreen: tuple[str, ...] = ()
    evergreen_mrr: float | None = None            # MRR at the proposed λ with them evergreen
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict:
        """The JSON shape of `calibrate --json`, GET /calibrate and the MCP tool."""
        return {"current": self.current, "proposed": self.proposed, "examples": self.examples,
                "curve": [{"lambda": d, "mrr": round(m, 4)} for d, m in self.curve],
                "evergreen": list(self.evergreen),
                "evergreen_mrr": None if self.evergreen_mrr is None
                else round(self.evergreen_mrr, 4), "notes": list(self.notes)}

    def mrr(self, decay: float) -> float:
        """MRR@10 at ``decay`` (one of the grid's, or the current)."""
        return dict(self.curve)[decay]


def fit_lambda(examples: list[Example], ages: Mapping[str, int | None], current: float,
               grid: Iterable[float] = GRID) -> Fit:
    """The λ that ranks the used pages highest (see the module's rules)."""
    values = sorted(set(grid) | {current})
    curve = tuple((decay, mrr(examples, ages, decay)) for decay in values)
    best = max(score for _, score in curve)
    near = [decay for decay, score in curve if score >= best - TIE]
    proposed = min(near, key=lambda d: (abs(d - current), d))
    evergreen = _evergreen_candidates(examples, ages, proposed)
    with_them = None
    if evergreen:
        kept = {p: (None if p in evergreen else a) for p, a in ages.items()}
        with_them = mrr(examples, kept, proposed)
    return Fit(current, proposed, curve, len(examples), tuple(evergreen), with_them)


def mrr(examples: list[Example], ages: Mapping[str, int | None], decay: float,
        k: int = 10) -> float:
    """Mean reciprocal rank (first relevant page in the top ``k``) under ``decay``."""
    if not examples:
        return 0.0
    total = 0.0
    for example in examples:
        ranked = rerank(example.candidates, ages, decay)[:k]
        total += next((1 / rank for rank, page in enumerate(ranked, 1)
                       if page in example.relevant), 0.0)
    return total / len(examples)


def rerank(candidates: Iterable[tuple[str, float]], ages: Mapping[str, int | None],
           decay: float) -> list[str]:
    """The candidates' pages best first after decaying each dated one by its age."""
    scored = [(score * _factor(ages.get(page), decay), page) for page, score in candidates]
    return [page for _, page in sorted(scored, key=lambda s: (-s[0], s[1]))]


def _factor(age: int | None, decay: float) -> float:
    return 1.0 if age is None else math.exp(-decay * max(0, age))


def _evergreen_candidates(examples: list[Example], ages: Mapping[str, int | None],
                          decay: float) -> list[str]:
    uses: dict[str, int] = {}
    hurt: set[str] = set()
    for example in examples:
        with_decay = rerank(example.candidates, ages, decay)
        without = rerank(example.candidates, ages, 0.0)
        for page in example.relevant:
            uses[page] = uses.get(page, 0) + 1
            if page in with_decay and with_decay.index(page) > without.index(page):
                hurt.add(page)
    dated = sorted(a for a in ages.values() if a is not None)
    median = dated[len(dated) // 2] if dated else 0
    return sorted(p for p in hurt if uses[p] >= MIN_EVERGREEN_USES
                  and (ages.get(p) or 0) > median)


def examples_from(queries: Iterable[tuple[str, frozenset[str], str]],
                  search: Callable[[str], list[tuple[str, float]]]) -> list[Example]:
    """Search each (query, relevant pages, source) once and keep its undecayed candidates."""
    return [Example(query, relevant, tuple(search(query)), source)
            for query, relevant, source in queries]
