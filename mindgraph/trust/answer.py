"""Trust when answering: each result's level, status and freshness, and the filters
``--min-trust L0..L3`` and ``--fresh`` (search, hybrid search, context; CLI, REST, MCP).

A filter never silently empties an answer: what it removed is said in ``degradation``
("--min-trust L2 left out 3 of 5 results: 2 below L2, 1 stale").
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from ..errors import InputError
from ..page.model import Page
from .evidence_drift import EvidenceFiles
from .freshness import freshness_of_body
from .record import read_record

# How many more results a filtered search fetches, so a filter has some to choose from.
OVERFETCH = 4


@dataclass(frozen=True)
class TrustCriteria:
    """The least level a result needs, and whether it must be fresh."""

    min_level: int = 0
    fresh: bool = False

    @classmethod
    def parse(cls, min_trust: str | None, fresh: bool = False) -> "TrustCriteria":
        """From ``--min-trust L2`` (or 2) and ``--fresh``; InputError naming the fix."""
        if min_trust is None or str(min_trust).strip() == "":
            return cls(0, bool(fresh))
        text = str(min_trust).strip().upper().removeprefix("L")
        if text not in ("0", "1", "2", "3"):
            raise InputError(f"--min-trust {min_trust!r}: give a level L0, L1, L2 or L3 "
                             f"(L2 = claims checked against the evidence).")
        return cls(int(text), bool(fresh))

    @property
    def active(self) -> bool:
        """True when the criteria can remove a result."""
        return self.min_level > 0 or self.fresh

    def fetch(self, limit: int) -> int:
        """How many results to ask the retriever for."""
        return limit * OVERFETCH if self.active else limit

    def label(self) -> str:
        """The options as typed."""
        parts = [f"--min-trust L{self.min_level}"] if self.min_level else []
        return " ".join(parts + (["--fresh"] if self.fresh else []))


def page_trust(page: Page, today: dt.date, files: EvidenceFiles | None = None
               ) -> dict[str, Any]:
    """What a result shows: level, status, freshness (fresh | stale | unverified), triggers;
    ``files`` re-reads the local files the record was checked against."""
    record = read_record(page.frontmatter)
    state = freshness_of_body(record.verification, page.body, record.provenance, today,
                              files is not None and files.changed(page.path, record))
    return {"level": record.verification.level, "status": record.verification.status,
            "freshness": state.state, "stale": list(state.triggers)}


def screen(results: Iterable[Any], trust: Mapping[str, dict[str, Any]],
           criteria: TrustCriteria, limit: int, path_of=lambda r: r.path
           ) -> tuple[list[Any], list[str]]:
    """The results that meet ``criteria`` (at most ``limit``) and what was left out."""
    kept, low, stale = [], 0, 0
    results = list(results)
    for result in results:
        info = trust.get(path_of(result), {"level": 0, "status": "unverified",
                                           "freshness": "unverified"})
        if info["level"] < criteria.min_level or info["status"] == "disputed" \
                and criteria.min_level > 0:
            low += 1
        elif criteria.fresh and info["freshness"] != "fresh":
            stale += 1
        else:
            kept.append(result)
    notes = []
    if low or stale:
        why = ([f"{low} below L{criteria.min_level} or disputed"] if low else []) + \
              ([f"{stale} not fresh"] if stale else [])
        notes.append(f"{criteria.label()} left out {low + stale} of {len(results)} "
                     f"result(s): {', '.join(why)}"
                     + ("; none left: `mindgraph verify` raises pages' levels" if not kept
                        else ""))
    return kept[:limit], notes


def keyword_answer(mg: Any, query: str, limit: int, criteria: TrustCriteria, why: bool = True,
                   localized: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """Keyword results as dicts with their trust, filtered by ``criteria``, and what was left
    out (``mg`` is the core: its ``search`` and ``trust_of``; ``why=False``: without which
    words matched where; ``localized``: ``why.summary`` in the query's language, for the
    CLI's text: the JSON's stays English)."""
    found = mg.search(query, criteria.fetch(limit), why=why, localized=localized)
    kept, notes = screen(found, mg.trust_of(r.path for r in found), criteria, limit)
    trust = mg.trust_of(r.path for r in kept)
    return [{**r.to_dict(), "rank": rank, "trust": trust.get(r.path)}
            for rank, r in enumerate(kept, 1)], notes


def trusted_hybrid(mg: Any, query: str, limit: int, criteria: TrustCriteria) -> Any:
    """``mg.smart_search`` with only the pages that meet ``criteria`` (more fetched first),
    saying in ``degradation`` what was left out."""
    if not criteria.active:
        return mg.smart_search(query, limit)
    response = mg.smart_search(query, criteria.fetch(limit))
    return screen_response(response, mg.trust_of(r.page for r in response.results), criteria,
                           limit)


def hybrid_answer(mg: Any, query: str, limit: int, criteria: TrustCriteria) -> dict[str, Any]:
    """A hybrid answer as a dict, each result with its trust, filtered by ``criteria``."""
    response = trusted_hybrid(mg, query, limit, criteria)
    answer = response.to_dict()
    trust = mg.trust_of(r.page for r in response.results)
    return {**answer, "results": with_trust(answer["results"], trust)}


def trusted_context(mg: Any, situation: str, limit: int, criteria: TrustCriteria,
                    timeout_s: float | None = None,
                    excluded: Callable[[], float] | None = None) -> Any:
    """``mg.context`` over the pages that meet ``criteria`` (the same time limit, less
    ``excluded``'s seconds, and similarity floor); never raises."""
    if not criteria.active:
        return mg.context(situation, limit=limit, timeout_s=timeout_s, excluded=excluded)
    from ..retrieval.context import context_within, keyword_results

    def keywords(query: str) -> list[Any]:
        found = mg.search(query, criteria.fetch(limit), why=False)
        return keyword_results(screen(found, mg.trust_of(r.path for r in found), criteria,
                                      limit)[0])

    serve = mg.settings.serve
    return context_within(situation,
                          lambda q: trusted_hybrid(mg, q, max(limit, 5), criteria),
                          serve.context_timeout_s if timeout_s is None else timeout_s, limit,
                          serve.context_min_similarity, keywords=keywords,
                          excluded=excluded)


def context_answer(mg: Any, situation: str, limit: int, criteria: TrustCriteria
                   ) -> dict[str, Any]:
    """A context block as a dict with each source page's trust."""
    block = trusted_context(mg, situation, limit, criteria)
    return {**block.to_dict(), "trust": mg.trust_of(block.sources) if block.sources else {}}


def screen_response(response: Any, trust: Mapping[str, dict[str, Any]],
                    criteria: TrustCriteria, limit: int) -> Any:
    """A hybrid response with only the results that meet ``criteria``, saying what went."""
    kept, notes = screen(response.results, trust, criteria, limit, lambda r: r.page)
    return dataclasses.replace(response, results=tuple(kept),
                               degradation=tuple(response.degradation) + tuple(notes))


def with_trust(items: list[dict[str, Any]], trust: Mapping[str, dict[str, Any]],
               key: str = "page") -> list[dict[str, Any]]:
    """Result dicts with a ``trust`` entry each."""
    return [{**item, "trust": trust.get(item[key])} for item in items]


def trust_line(info: Mapping[str, Any] | None) -> str:
    """``L2 verified, fresh`` for text output."""
    if not info:
        return "L0 unverified"
    stale = f" ({', '.join(info['stale'])})" if info.get("stale") else ""
    return f"L{info['level']} {info['status']}, {info['freshness']}{stale}"


__all__ = ["TrustCriteria", "context_answer", "hybrid_answer", "keyword_answer",
           "trusted_context", "trusted_hybrid", "page_trust", "screen", "screen_response",
           "trust_line", "with_trust"]
