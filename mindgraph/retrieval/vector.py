"""The vector retriever: embed the query, ask the store for chunks, keep each page's best one.

Query embeddings are cached (agents repeat themselves, and query expansion re-asks parts of a
query), and the store is over-asked for chunks so that enough distinct pages come back.

When the embedding provider fails (a remote API down or timing out), queries for the next
``PAUSE_AFTER_FAILURE_S`` seconds fail at once instead of each waiting out the provider's own
timeouts and retries: the hybrid search answers from keywords meanwhile and says why.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Collection

import numpy as np

from ..errors import ProviderError
from ..providers.embedding.base import EmbeddingProvider
from ..stores.base import VectorStore

CHUNKS_PER_PAGE = 8
CACHE_SIZE = 512
PAUSE_AFTER_FAILURE_S = 10.0


@dataclass(frozen=True)
class VectorPageHit:
    """A page found by meaning: its best chunk and that chunk's cosine similarity."""

    path: str
    score: float
    section_id: str
    chunk_id: str


class VectorRetriever:
    """Page ranking from section vectors of one embedding model."""

    def __init__(self, provider: EmbeddingProvider, store: VectorStore):
        self.provider = provider
        self.store = store
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._failed: tuple[float, str] | None = None    # (when, why) of the last failure

    @property
    def model_version(self) -> str:
        """The model whose vectors this retriever compares (never mixed with another)."""
        return self.provider.model_version

    def embed_query(self, query: str) -> np.ndarray:
        """The query's vector, from the cache when it was asked before."""
        with self._lock:
            cached = self._cache.get(query)
            if cached is not None:
                self._cache.move_to_end(query)
                return cached
        failed = self._failed
        if failed is not None and time.monotonic() - failed[0] < PAUSE_AFTER_FAILURE_S:
            raise ProviderError(f"the embedding provider failed "
                                f"{time.monotonic() - failed[0]:.0f} s ago ({failed[1]}); "
                                f"it is asked again after {PAUSE_AFTER_FAILURE_S:g} s")
        try:
            vector = np.array(self.provider.embed_queries([query])[0], dtype=np.float32)
        except (ProviderError, OSError) as exc:     # the provider, not this query, failed
            self._failed = (time.monotonic(), f"{type(exc).__name__}: {exc}")
            raise
        self._failed = None
        vector[np.abs(vector) < np.finfo(np.float32).tiny] = 0.0   # subnormals slow BLAS
        with self._lock:
            self._cache[query] = vector
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return vector

    @property
    def waits_on_io(self) -> bool:
        """True when a search waits on a server (remote model or database), not on our CPU."""
        return bool(getattr(self.provider, "remote", False)
                    or getattr(self.store, "remote", False))

    def page_scores(self, query: str, paths: Collection[str]) -> dict[str, float]:
        """Each page's best chunk similarity to the query (0 for a page without vectors),
        for pages ``search`` did not return."""
        if not paths:
            return {}
        hits = self.store.query(self.embed_query(query), 100_000, self.model_version,
                                pages=paths)
        best: dict[str, float] = {}
        for hit in hits:
            best[hit.page] = max(best.get(hit.page, -1.0), float(hit.score))
        return {path: best.get(path, 0.0) for path in paths}

    def forget_queries(self) -> None:
        """Empty the query-vector cache (benchmarks: every query is new) and forget a recent
        provider failure."""
        with self._lock:
            self._cache.clear()
            self._failed = None

    def is_cached(self, query: str) -> bool:
        """True when the query's vector is at hand (no model call needed)."""
        return query in self._cache

    def search(self, query: str, limit: int) -> list[VectorPageHit]:
        """The ``limit`` pages whose best chunk is most similar to the query."""
        vector = self.embed_query(query)
        hits = self.store.query(vector, max(limit * CHUNKS_PER_PAGE, 50), self.model_version)
        best: dict[str, VectorPageHit] = {}
        for hit in hits:
            if hit.page not in best or hit.score > best[hit.page].score:
                best[hit.page] = VectorPageHit(hit.page, float(hit.score), hit.section_id,
                                               hit.chunk_id)
        ranked = sorted(best.values(), key=lambda h: (-h.score, h.path))
        return ranked[:limit]
