"""Proactive context: the top knowledge for an agent's current situation, as a compact
markdown block with sources, produced within a hard time limit.

It must never break the agent that calls it: on a timeout or any error the block is empty.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Callable

from .hybrid import HybridResponse

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
    # without < and > the situation cannot close the HTML comment and write into the prompt
    header = re.sub(r"[<>]", "", _one_line(situation)[:120])
    lines = [f"<!-- mindgraph context for: {header} -->",
             "### Relevant notes"]
    for r in results:
        where = f"{r.title} › {r.heading}" if r.heading else r.title
        address = f"{r.page}#{r.section_id}" if r.section_id and r.section_id != "lead" \
            else r.page
        text = _one_line(r.snippet.replace("**", ""))
        if len(text) > MAX_SNIPPET:
            text = text[:MAX_SNIPPET].rstrip() + "…"
        lines.append(f"- **{where}** ({address}): {text}")
    return ContextBlock("\n".join(lines) + "\n", tuple(r.page for r in results), "ok",
                        timings_ms=dict(response.timings_ms))


def context_within(situation: str, answer: Callable[[str], HybridResponse],
                   timeout_s: float, limit: int = 3, min_similarity: float = -1.0
                   ) -> ContextBlock:
    """Run ``answer`` in a worker thread; give up after ``timeout_s`` with an empty block."""
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["block"] = render_context(situation, answer(situation), limit,
                                          min_similarity)
        except BaseException as exc:  # never let anything escape to the caller
            box["error"] = f"{type(exc).__name__}: {exc}"

    worker = threading.Thread(target=work, name="mindgraph-context", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        return ContextBlock("", (), "timeout", f"no answer within {timeout_s:g} s")
    if "error" in box:
        return ContextBlock("", (), "error", str(box["error"]))
    return box["block"]  # type: ignore[return-value]


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
