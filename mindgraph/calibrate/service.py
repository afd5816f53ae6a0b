"""Calibrate the recency decay of a workspace from its usage log (and benchmark questions)."""

from __future__ import annotations

from typing import Any, Iterable

from ..retrieval.datasets import Question
from ..retrieval.hybrid import HybridRetriever
from ..retrieval.recency import asks_for_recent
from ..retrieval.results import SearchOptions
from .recency_fit import Fit, examples_from, fit_lambda
from .usage_signals import used_queries

POOL = 30     # candidates kept per query (the decay reorders these)


def calibrate_recency(retriever: HybridRetriever, usage_lines: Iterable[dict[str, Any]],
                      questions: Iterable[Question] = (), current: float = 0.003) -> Fit:
    """Fit λ on the used pages of the logged queries and on ``questions``' relevant pages.
    Queries that ask for what is new are left out: the decay does not apply to them."""
    recency = retriever.recency
    queries = [(q.query, frozenset(q.used), "usage") for q in used_queries(usage_lines)]
    queries += [(q.query, frozenset(q.relevant), "questions") for q in questions]
    skipped = [q for q, _, _ in queries if asks_for_recent(q)]
    queries = [item for item in queries if not asks_for_recent(item[0])]
    options = SearchOptions(top_k=POOL, expansion=False, rerank=False)

    ages = {path: recency.age_days(path) for path in retriever.pages}

    def search(query: str) -> list[tuple[str, float]]:
        # the decay the fit replays is divided out; a page whose kind has its own λ
        # (retrieval.recency_lambdas) keeps its factor: the fit does not move it
        response = retriever.search(query, options, use_cache=False)
        return [(r.page, r.score / r.boosts.get("recency", 1.0)
                 if ages.get(r.page) is not None else r.score) for r in response.results]

    examples = examples_from(queries, search)
    fit = fit_lambda(examples, ages, current)
    notes = []
    if skipped:
        notes.append(f"{len(skipped)} quer{'y' if len(skipped) == 1 else 'ies'} asking for what "
                     f"is new left out (the decay does not apply to them).")
    if not recency.decays:
        notes.append("The decay is off for this wiki (retrieval.recency is 'off', or 'auto' "
                     "and fewer than half the pages are dated): λ changes nothing until it is "
                     "'on'.")
    if not examples:
        notes.append("No query in the usage log was followed by reading a page, and no "
                     "questions were given: nothing to calibrate on.")
    return Fit(fit.current, fit.proposed, fit.curve, fit.examples, fit.evergreen,
               fit.evergreen_mrr, tuple(notes))
