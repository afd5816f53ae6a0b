"""Summaries for pages that lack a good one, several pages to one LLM call.

A page lacks one when lint's no-summary rule finds none (frontmatter ``summary``/
``description``/``abstract``, a summary callout or a lead statement of five words,
lint/summary.py), or when its callout is only the offline compiler's fallback outline
("Sections: A, B and 3 more.", "Code only (12 lines)."): a list of headings says what a page
contains, not what it is about. A summary enrichment already wrote stays until the raw note
changes.

Pages go ``batch`` to a call; the answer must be JSON ``{"summaries": [{"page", "summary"}]}``
and is checked per page: a page missing from the answer, or given an empty, overlong or
one-word summary, fails alone and is named; an answer that is not that JSON fails its batch's
pages only, each named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterable

from ..lint.summary import has_summary
from ..providers.llm.answers import json_list
from ..page.model import Page
from .batching import batches
from .records import SUMMARY_BY_KEY, source_hash

PROMPT_VERSION = "v1"
MAX_CHARS = 400          # what a summary may be (the offline compiler writes at most 300)
PAGE_CHARS = 3000        # what of each page the model reads
_FALLBACK = re.compile(r"^\s*>\s*\[!summary\]\s*\n>\s*(Sections: |Code only \(|This note has no "
                       r"body text\.)", re.I)
SYSTEM = (
    "You write the summary of wiki pages: one or two plain sentences (at most 60 words) saying "
    "what the page is about and what a reader learns from it, in the page's own language. No "
    "markdown, no links, no 'This page'. Answer with JSON only, no prose: "
    '{"summaries": [{"page": "<the page path as given>", "summary": "<summary>"}]}')


@dataclass(frozen=True)
class SummaryOutcome:
    """What one page got: its summary, or why not."""

    page: str
    summary: str = ""
    error: str = ""


def needs_summary(page: Page, written: dict[str, Any] | None) -> bool:
    """True when ``page`` lacks a good summary and enrichment has none for its current note."""
    if written is not None and written.get("hash") == source_hash(page):
        return False
    if page.frontmatter.get(SUMMARY_BY_KEY):
        return False        # ours, from an earlier note: replaced when it is summarised again
    return not has_summary(page) or bool(_FALLBACK.match(page.body))


def prompt_for(pages: list[Page]) -> str:
    """The pages as the model reads them."""
    return "\n\n".join(f"Page: {p.path}\nTitle: {p.title}\n\n{p.indexed_body[:PAGE_CHARS]}"
                       for p in pages)


def summarise(pages: list[Page], llm: Any, batch: int,
              audience: Callable[[Page], Hashable] = lambda page: None
              ) -> Iterable[SummaryOutcome]:
    """One outcome per page, ``batch`` pages a call, a call's pages of one ``audience``."""
    for chunk in batches(pages, batch, audience):
        try:
            answer = llm.complete(SYSTEM, prompt_for(chunk), max_tokens=300 * len(chunk) + 200)
        except Exception as exc:  # noqa: BLE001 (a provider error fails this batch only)
            for page in chunk:
                yield SummaryOutcome(page.path, error=f"{type(exc).__name__}: {exc}")
            continue
        yield from parse_summaries(answer, chunk, llm.identity)


def parse_summaries(answer: str, pages: list[Page], who: str) -> list[SummaryOutcome]:
    """The answer checked page by page (see the module docstring)."""
    try:
        items = json_list(answer, "summaries")
    except ValueError as exc:
        why = f"{who} answered no summaries JSON ({exc}: {answer[:80]!r})"
        return [SummaryOutcome(p.path, error=why) for p in pages]
    given: dict[str, str] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("page"), str) \
                and isinstance(item.get("summary"), str):
            given[item["page"].strip()] = " ".join(item["summary"].split())
    out = []
    for page in pages:
        text = given.get(page.path)
        if text is None:
            out.append(SummaryOutcome(page.path, error=f"{who} gave no summary for it"))
        elif len(text.split()) < 3 and len(text) < 12:
            out.append(SummaryOutcome(page.path, error=f"{who} gave too short a summary "
                                                       f"({text!r})"))
        elif len(text) > MAX_CHARS:
            out.append(SummaryOutcome(page.path, error=f"{who} gave a summary of {len(text)} "
                                                       f"characters (at most {MAX_CHARS})"))
        else:
            out.append(SummaryOutcome(page.path, summary=text))
    return out


__all__ = ["SummaryOutcome", "needs_summary", "parse_summaries", "summarise"]
