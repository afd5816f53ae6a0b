"""Optional LLM reranking of the first results (``retrieval.rerank: llm``; off by default).

The LLM reads the question and the first ``retrieval.rerank_top`` results (title, heading,
snippet) and names the ones that answer it, best first; those move to the front in its order,
the rest keep theirs. Scores are handed out again in the new order (the change is shown as
the ``reranked`` boost), so the order is still the order of the scores. The call is bounded
by ``retrieval.rerank_timeout_s`` (the caller's wait and the HTTP timeout); a slow or failing
LLM leaves the order as it was and says so. Answers are cached like expansions.

Its value is not measured yet: no LLM is reachable where this was built, so it is wired and
tested against a fake server only.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextvars
import json
import re
import threading
from dataclasses import replace
from typing import Any, Sequence

from ..errors import ConfigError, ProviderError
from .llm_cache import AnswerCache
from .results import HybridResult

RERANK_PROMPT = """A search engine over a personal markdown wiki found these passages for the
question below. Which of them answer it? Answer with a JSON list of their numbers, the best
answer first; leave out the ones that do not answer it.

Question: {query}

{passages}"""


class LLMReranker:
    """Reorders results with an LLM; ``provider`` may be a function that builds it."""

    def __init__(self, provider: Any, cache: AnswerCache | None = None):
        self._provider = provider
        self._built = provider if hasattr(provider, "complete") else None
        self._lock = threading.Lock()
        self._cache = cache

    def _llm(self) -> Any:
        if self._built is None:
            with self._lock:
                if self._built is None:
                    self._built = self._provider()
        return self._built

    def rerank(self, query: str, results: list[HybridResult], top: int, timeout_s: float,
               pool: cf.Executor) -> tuple[list[HybridResult], str | None]:
        """The first ``top`` results in the LLM's order (or as they were, with why, when it
        fails or takes more than ``timeout_s``)."""
        head, tail = results[:top], results[top:]
        passages = [r.title + (f" — {r.heading}" if r.heading else "") + f": {r.snippet}"
                    for r in head]
        try:
            # in this context: the caller's quota is charged for the LLM call (quotas/)
            order, note = pool.submit(contextvars.copy_context().run, self.order, query,
                                      passages).result(timeout=timeout_s)
        except cf.TimeoutError:
            return results, f"LLM reranking timed out after {timeout_s:g} s; order kept"
        scores = sorted((r.score for r in head), reverse=True)
        moved = []
        for i, score in zip(order, scores):
            r = head[i]
            boosts = r.boosts if abs(score - r.score) < 1e-9 else {
                **r.boosts, "reranked": round(score - r.score, 4)}
            moved.append(replace(r, score=score, boosts=boosts))
        return moved + tail, note

    def order(self, query: str, passages: Sequence[str]) -> tuple[list[int], str | None]:
        """Indexes of ``passages`` best first (all of them) and, when the LLM could not
        help, why."""
        try:
            provider = self._llm()
            listing = "\n\n".join(f"[{i}] {text}" for i, text in enumerate(passages, 1))
            key = f"rerank\n{provider.identity}\n{query}\n{listing}"
            answer = self._cache.get(key) if self._cache is not None else None
            if answer is None:
                answer = provider.complete("You judge search results.", RERANK_PROMPT.format(
                    query=query, passages=listing), max_tokens=200)
                if self._cache is not None:
                    self._cache.put(key, answer)
        except (ProviderError, ConfigError) as exc:
            return list(range(len(passages))), f"LLM reranking failed ({exc}); order kept"
        return _ranking(answer, len(passages)), None


def _ranking(answer: str, n: int) -> list[int]:
    """The numbers the LLM named (1-based, valid, once each), then the rest in order."""
    named: list[int] = []
    match = re.search(r"\[[^\[\]]*\]", answer)
    if match:
        try:
            items = json.loads(match.group(0))
        except json.JSONDecodeError:
            items = []
        for item in items if isinstance(items, list) else []:
            if isinstance(item, int) and 1 <= item <= n and item - 1 not in named:
                named.append(item - 1)
    return named + [i for i in range(n) if i not in named]

