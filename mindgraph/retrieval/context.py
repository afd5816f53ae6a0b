"""Proactive context: the top knowledge for an agent's current situation, as a compact
markdown block with sources, produced within a hard time limit.

It must never break the agent that calls it: on any error the block is empty. On a timeout
the block holds the keyword matches, when the caller gave a keyword search and it answered in
time (the vector side is what runs late: a cold model, a loaded machine), and says so; else
it is empty.
"""

from __future__ import annotations

import contextvars
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..errors import QuotaExceeded
from .explain import SearchResult
from .hybrid import HybridResponse
from .results import HybridResult

MAX_SNIPPET = 280


@dataclass(frozen=True)
class ContextBlock:
    """The markdown to inject, the pages it cites, and why it may be empty."""

    markdown: str
    sources: tuple[str, ...] = ()
    status: str = "ok"          # ok | empty | timeout | error
    detail: str = ""
    timings_ms: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"markdown": self.markdown, "sources": list(self.sources),
                "status": self.status, "detail": self.detail}


def render_context(situation: str, response: HybridResponse, limit: int = 3,
                   min_similarity: float = -1.0) -> ContextBlock:
    """The block for a hybrid response: one bullet per page, with its address. A page found
    by meaning alone (no keyword match) below ``min_similarity`` is left out: text an agent
    did not ask for costs it attention."""
    kept = [r for r in response.results
            if "keyword" in r.sources or r.sources.get("vector", {}).get("score", 1.0)
            >= min_similarity]
    results = kept[:limit]
    if not results:
        why = "; ".join(response.degradation) or "nothing in the wiki matches the situation"
        if response.results:
            why = (f"no note has the situation's words, and none is close in meaning "
                   f"(below {min_similarity:g} cosine)")
        return ContextBlock("", (), "empty", why)
    return ContextBlock(_markdown(situation, results), tuple(r.page for r in results), "ok",
                        timings_ms=dict(response.timings_ms))


def keyword_results(found: Sequence[SearchResult]) -> list[HybridResult]:
    """Keyword search results (``Mindgraph.search``) as the results a block cites."""
    return [HybridResult(r.path, r.title, r.section_id, r.heading, r.snippet, r.score,
                         {"keyword": {"rank": r.rank, "score": r.score}}) for r in found]


def _markdown(situation: str, results: Sequence[Any], note: str = "") -> str:
    # without < and > the situation cannot close the HTML comment and write into the prompt
    header = re.sub(r"[<>]", "", _one_line(situation)[:120])
    lines = [f"<!-- mindgraph context for: {header}{note} -->",
             "### Relevant notes"]
    for r in results:
        where = f"{r.title} › {r.heading}" if r.heading else r.title
        address = f"{r.page}#{r.section_id}" if r.section_id and r.section_id != "lead" \
            else r.page
        text = _one_line(r.snippet.replace("**", ""))
        if len(text) > MAX_SNIPPET:
            text = text[:MAX_SNIPPET].rstrip() + "…"
        lines.append(f"- **{where}** ({address}): {text}")
    return "\n".join(lines) + "\n"


def context_within(situation: str, answer: Callable[[str], HybridResponse],
                   timeout_s: float, limit: int = 3, min_similarity: float = -1.0,
                   keywords: Callable[[str], Sequence[HybridResult]] | None = None,
                   excluded: Callable[[], float] | None = None) -> ContextBlock:
    """Run ``answer`` in a worker thread; give up after ``timeout_s``. With ``keywords`` (a
    keyword search: no model to wait for), that runs first, on its own thread within the
    same limit (a core runs one query at a time: beside the answer it would wait for the
    answer's model), and on a timeout the block holds what it found, saying the vectors
    timed out; else the block of a timeout is empty. The one error raised is the caller's
    own used-up quota (QuotaExceeded: a 429 that names the setting, not an empty block).

    ``excluded``: a clock of seconds not counted against the limit (the CLI passes the time
    spent loading a model: a one-shot process's one-time cost; servers pass nothing, and
    their limit is the limit)."""
    budget = _Budget(timeout_s, excluded)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["block"] = render_context(situation, answer(situation), limit,
                                          min_similarity)
        except QuotaExceeded as exc:    # the caller's own limit: said to it as such
            box["quota"] = exc
        except BaseException as exc:  # never let anything escape to the caller
            box["error"] = f"{type(exc).__name__}: {exc}"

    def match() -> None:
        try:
            box["keywords"] = list(keywords(situation))[:limit]   # type: ignore[misc]
        except BaseException:  # noqa: BLE001 - the answer's own error is the one to report
            pass

    if keywords is not None and budget.wait(_run(match, "mindgraph-context-keywords")
                                            ).is_alive():
        return ContextBlock("", (), "timeout", f"no answer within {timeout_s:g} s")
    worker = budget.wait(_run(work, "mindgraph-context"))
    if worker.is_alive():
        found = box.get("keywords")
        if found:
            note = f"the vector search gave no answer within {timeout_s:g} s"
            return ContextBlock(_markdown(situation, found, f" (keyword matches only: {note})"),
                                tuple(r.page for r in found), "timeout",
                                f"{note}; the block holds the keyword matches alone")
        return ContextBlock("", (), "timeout", f"no answer within {timeout_s:g} s")
    if "quota" in box:
        raise box["quota"]
    if "error" in box:
        return ContextBlock("", (), "error", str(box["error"]))
    return box["block"]  # type: ignore[return-value]


class _Budget:
    """``timeout_s`` from now, plus whatever the ``excluded`` clock gains meanwhile."""

    def __init__(self, timeout_s: float, excluded: Callable[[], float] | None) -> None:
        self._excluded = excluded
        self._base = excluded() if excluded is not None else 0.0
        self._deadline = time.monotonic() + timeout_s

    def left(self) -> float:
        """Seconds left (0 when spent)."""
        extra = self._excluded() - self._base if self._excluded is not None else 0.0
        return max(0.0, self._deadline + extra - time.monotonic())

    def wait(self, thread: threading.Thread) -> threading.Thread:
        """``thread``, waited for while the budget lasts."""
        if self._excluded is None:
            thread.join(self.left())
            return thread
        while thread.is_alive() and (left := self.left()) > 0:
            thread.join(min(left, 0.05))     # the excluded clock may move meanwhile
        return thread


def _run(work: Callable[[], None], name: str) -> threading.Thread:
    """``work`` on a daemon thread, started."""
    # in this context: what the caller set there (its quota, quotas/) holds in the thread
    thread = threading.Thread(target=contextvars.copy_context().run, args=(work,), name=name,
                              daemon=True)
    thread.start()
    return thread


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
