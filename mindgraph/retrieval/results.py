"""What a hybrid search returns: per-call options, one result, the whole response.

Kept apart from the retriever (hybrid.py) so that servers, the CLI and the benchmark can name
these types without the machinery that makes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .router import Intent


@dataclass(frozen=True)
class SearchOptions:
    """Per-call switches (the benchmark compares methods with them)."""

    top_k: int = 10
    use_keyword: bool = True
    use_vector: bool = True
    graph_boost: bool = True
    expansion: bool = True
    reserve: bool = True             # keep each retriever's top pages near the top
    rerank: bool = True              # LLM reranking, when retrieval.rerank is "llm"
    use_native: bool = True          # a note app's own search, when an adapter has one
    fusion: str | None = None        # None: retrieval.fusion


@dataclass(frozen=True)
class HybridResult:
    """One page of the answer, with where it came from."""

    page: str
    title: str
    section_id: str | None
    heading: str
    snippet: str
    score: float
    # retriever → {"rank": int, "score": float} (its own rank and score for the page);
    # "graph" → {"linked": n}: linked to n other candidates (it ranks nothing)
    sources: dict[str, dict[str, int | float]]
    boosts: dict[str, float] = field(default_factory=dict)
    found_by: tuple[str, ...] = ()            # the query (or expansion) that found it
    url: str | None = None                    # the deep link into the app it came from

    def to_dict(self, rank: int | None = None) -> dict[str, Any]:
        """JSON-ready form: the fields every search result has (rank, page, title, section_id,
        heading, snippet, score; see the README's result table), then the fusion's."""
        # by hand: dataclasses.asdict deep-copies field by field (12% of a warm search)
        head = {} if rank is None else {"rank": rank}
        return {**head, "page": self.page, "title": self.title, "section_id": self.section_id,
                "heading": self.heading, "snippet": self.snippet,
                "score": round(self.score, 4),
                "sources": {name: dict(value) for name, value in self.sources.items()},
                "boosts": dict(self.boosts), "found_by": list(self.found_by),
                "retrievers": sorted(self.sources), "url": self.url}


@dataclass(frozen=True)
class HybridResponse:
    """Everything an agent needs to use and trust the answer."""

    query: str
    language: str
    intent: Intent
    results: tuple[HybridResult, ...]
    expanded_queries: tuple[str, ...]
    interpretation: str
    follow_ups: tuple[str, ...]
    degradation: tuple[str, ...]
    timings_ms: dict[str, float]
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"query": self.query, "language": self.language, "cached": self.cached,
                "intent": self.intent.to_dict(),
                "results": [r.to_dict(rank) for rank, r in enumerate(self.results, 1)],
                "expanded_queries": list(self.expanded_queries),
                "interpretation": self.interpretation, "follow_ups": list(self.follow_ups),
                "degradation": list(self.degradation),
                "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()}}


@dataclass
class Candidate:
    """A page being ranked: its fused score so far and the evidence behind it."""

    score: float = 0.0
    sources: dict[str, dict[str, int | float]] = field(default_factory=dict)
    section_id: str | None = None
    boosts: dict[str, float] = field(default_factory=dict)
    found_by: list[str] = field(default_factory=list)
    tier: int = 0           # breaks ties around reserved pages (HybridRetriever._reserve)
