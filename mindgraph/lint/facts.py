"""Facts that disagree between pages: the same statement with different numbers.

Two statements on different pages state the same fact when they carry the same content words
(or nearly: Jaccard ≥ 0.6 over at least four shared words) and each gives a quantity of the
same unit ("30 days", "200 MB", "version 1.7") with different values, or when their words are
identical and only their numbers differ. Pages whose dates differ are an update, not a
contradiction (a release note of 2023 may well say otherwise than one of 2021), and a
statement shape repeated on many pages ("Released March 1, 2023") is a template, not a fact.
Offline this finds candidates; an LLM, when configured, judges them (lint/llm.py).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterator

from ..retrieval.analyzer import STOP_WORDS
from .statements import Statement

_QUANTITY = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)\s*(%|[A-Za-z]+|[\u3040-\u30ff\u3400-\u9fff])")
_VERSION_WORDS = re.compile(r"\b(version|v|release)\s*(\d+(?:\.\d+)+)", re.I)
MIN_SHARED = 4
MIN_JACCARD = 0.6
COMMON_WORD = 200      # a word on more statements than this does not find candidates
TEMPLATE_PAGES = 4     # the same words on more pages than this: a template


@dataclass(frozen=True)
class Conflict:
    """Two statements that seem to state one fact with different values."""

    first: Statement
    second: Statement
    values: tuple[str, str]    # what each says, e.g. ("30 days", "14 days"); "" from an LLM
    reason: str = ""           # why an LLM judge says they contradict


def conflicting_facts(statements: list[Statement],
                      dates: dict[str, dt.date | None]) -> Iterator[Conflict]:
    """Candidate contradictions between pages, offline: similar statements whose quantities
    disagree (each pair of pages once, in page order)."""
    numbered = [s for s in statements if s.numbers]
    for a, b in similar_pairs(numbered, dates):
        values = _disagreement(a, b, identical=set(a.words) == set(b.words))
        if values:
            yield Conflict(a, b, values)


def similar_pairs(statements: list[Statement], dates: dict[str, dt.date | None],
                  min_jaccard: float = MIN_JACCARD) -> Iterator[tuple[Statement, Statement]]:
    """Pairs of statements on different pages (not dated apart, not templates) that share at
    least MIN_SHARED content words and ``min_jaccard`` of them: the same subject. The first
    such pair of each pair of pages only."""
    wordy = [s for s in statements if len(set(s.words)) >= MIN_SHARED]
    templates = _templates(wordy)
    wordy = [s for s in wordy if _key(s) not in templates]
    index: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(wordy):
        for word in set(s.words):
            index[word].append(i)
    seen: set[tuple[str, str]] = set()
    for i, s in enumerate(wordy):
        words = set(s.words)
        shared: dict[int, int] = defaultdict(int)
        for word in words:
            hits = index[word]
            if len(hits) <= COMMON_WORD:
                for j in hits:
                    if j > i:
                        shared[j] += 1
        for j, count in sorted(shared.items()):
            other = wordy[j]
            pair = (s.page, other.page)
            if count < MIN_SHARED or other.page == s.page or pair in seen:
                continue
            if _dated_apart(dates, s.page, other.page):
                continue
            if count / len(words | set(other.words)) >= min_jaccard:
                seen.add(pair)
                yield s, other


def _key(s: Statement) -> tuple[str, ...]:
    return tuple(sorted(set(s.words)))


def _templates(statements: list[Statement]) -> set[tuple[str, ...]]:
    pages: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for s in statements:
        pages[_key(s)].add(s.page)
    return {key for key, on in pages.items() if len(on) > TEMPLATE_PAGES}


def _dated_apart(dates: dict[str, dt.date | None], a: str, b: str) -> bool:
    first, second = dates.get(a), dates.get(b)
    return first is not None and second is not None and first != second


def quantities(text: str) -> dict[str, set[str]]:
    """unit → the numbers ``text`` gives in it ("5 MB and 200 MB" → {"mb": {"5", "200"}})."""
    found: dict[str, set[str]] = defaultdict(set)
    for number, unit in _QUANTITY.findall(text):
        if unit.lower() not in STOP_WORDS:      # "1.0 have" is no quantity of "have"
            found[unit.lower()].add(number)
    for word, number in _VERSION_WORDS.findall(text):
        found["version"].add(number)
    return found


def _disagreement(a: Statement, b: Statement, identical: bool) -> tuple[str, str] | None:
    qa, qb = quantities(a.text), quantities(b.text)
    for unit in sorted(qa.keys() & qb.keys()):
        if qa[unit].isdisjoint(qb[unit]):
            return (" / ".join(f"{n} {unit}" for n in sorted(qa[unit])),
                    " / ".join(f"{n} {unit}" for n in sorted(qb[unit])))
    if identical and sorted(a.numbers) != sorted(b.numbers):
        return ", ".join(a.numbers), ", ".join(b.numbers)
    return None
