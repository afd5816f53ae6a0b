"""REST routes that search: GET /search (keyword, BM25), GET /smart_search (hybrid: intent,
keyword + vector fusion, graph boost, explained; its query is embedded first on the per-CPU
lane) and GET /context (the top knowledge for a situation as markdown). Each logs its query
with its results and latency to the usage log, and takes the trust filters."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from fastapi import Query

from ..core import Mindgraph
from ..errors import note_details
from ..trust.answer import TrustCriteria, context_answer, hybrid_answer, keyword_answer
from . import schemas as s
from .mcp_results import hybrid_no_pages, no_pages_notes
from .rest_params import FRESH, MAX_LIMIT, MIN_TRUST
from .rest_routing import Caller

_LOG = logging.getLogger("mindgraph.serve")


def add_search_routes(route: Callable[..., Callable], mg: Mindgraph, fresh: Callable[[], None],
                      record: Callable[..., None]) -> None:
    """Register the routes with rest.py's ``route`` helper; ``record`` logs a query."""

    @route("get", "/search", s.KeywordSearchOut, "Keyword (BM25) search")
    def search(who: Caller,
               q: str = Query(..., min_length=1, max_length=1000, description="The query"),
               limit: int = Query(10, ge=1, le=MAX_LIMIT), min_trust: str | None = MIN_TRUST,
               fresh_only: bool = FRESH) -> dict[str, Any]:
        started = time.perf_counter()
        fresh()
        core = mg.as_identity(who)
        results, notes = keyword_answer(core, q, limit,
                                        TrustCriteria.parse(min_trust, fresh_only))
        notes = [*notes, *no_pages_notes(core, results)]
        latency = (time.perf_counter() - started) * 1e3
        record(who, q, intent="keyword", results=[r["page"] for r in results],
               result_count=len(results), latency_ms=latency)
        return {"query": q, "retriever": "keyword", "count": len(results), "results": results,
                "degradation": notes, "latency_ms": round(latency, 2)}

    @route("get", "/smart_search", s.SmartSearchOut,
           "Hybrid search: intent, keyword + vector fusion, graph boost, explained",
           prepare=lambda q, who, **_: mg.as_identity(who).prepare_query(q))
    def smart_search(who: Caller, q: str = Query(..., min_length=1, max_length=1000),
                     limit: int = Query(10, ge=1, le=MAX_LIMIT),
                     min_trust: str | None = MIN_TRUST,
                     fresh_only: bool = FRESH) -> dict[str, Any]:
        started = time.perf_counter()
        fresh()
        core = mg.as_identity(who)
        answer = hybrid_no_pages(core, hybrid_answer(core, q, limit,
                                                     TrustCriteria.parse(min_trust, fresh_only)))
        record(who, q, intent=answer["intent"]["name"],
               results=[r["page"] for r in answer["results"]],
               result_count=len(answer["results"]),
               latency_ms=(time.perf_counter() - started) * 1e3)
        for detail in note_details(answer["degradation"]):   # said to agents in general terms
            _LOG.warning("smart_search: %s", detail)
        return answer

    @route("get", "/context", s.ContextOut,
           "Top knowledge for a situation as markdown (empty on error; on timeout the "
           "keyword matches alone, or empty)")
    def context(who: Caller, situation: str = Query(..., min_length=1, max_length=4000),
                limit: int = Query(3, ge=1, le=20), min_trust: str | None = MIN_TRUST,
                fresh_only: bool = FRESH) -> dict[str, Any]:
        started = time.perf_counter()
        fresh()
        block = context_answer(mg.as_identity(who), situation, limit,
                               TrustCriteria.parse(min_trust, fresh_only))
        record(who, situation, intent="context", results=block["sources"],
               result_count=len(block["sources"]),
               latency_ms=(time.perf_counter() - started) * 1e3, status=block["status"])
        return block


__all__ = ["add_search_routes"]
