"""Recency: newer pages first, by real dates only.

A page's date is what mindgraph.page.dates finds in it: its frontmatter (a compiled page
carries the dates of its raw note there, git history included), a date written in the note, or
its file name — the newest of created and updated. A page without one is left alone, neither
decayed nor boosted: a file's modification time says when the vault was copied, not when the
note was written.

Two effects, both off with ``retrieval.recency: off`` and neither on evergreen pages:

- decay, on every query when most pages are dated (``auto``) or always (``on``): a dated
  candidate's score × exp(−λ × days older than the vault's newest page) —
  not than today, so a vault nobody touches ranks the same tomorrow, and its undated pages do
  not rise above the dated ones as time passes. λ is ``recency_lambda`` unless the page's
  ``type`` or one of its tags names its own in ``recency_lambdas`` (a decision ages fast,
  0.005; reference knowledge slowly, 0.001);
- for queries that ask for what is new ("latest release notes", "what changed recently in
  Canvas", 「最新の変更点」, "最近更新"), instead of the decay: the newest dated pages that
  match the query's subject (keyword search without the words for "recent", at least
  RECENT_MIN_SHARE of the best match; the newest of all when nothing is left) join the
  candidates, and each dated candidate's score
  × (1 + RECENT_BOOST × exp(−days older than the newest dated candidate / RECENT_DAYS)), so
  the newest match gains most, whatever the date today.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import threading
from typing import Iterable, Mapping

from ..page.dates import note_dates
from ..page.model import Page
from .keyword import KeywordIndex
from .results import Candidate

RECENT_BOOST = 3.0
RECENT_DAYS = 120.0
RECENT_POOL = 200        # keyword hits searched for the newest matches of the subject
RECENT_ADD = 5           # the newest of them that join the candidates
RECENT_MIN_SHARE = 0.2   # of the best keyword score: a real match, not a stray word
_MEMO_SIZE = 200_000
_RECENT_RE = re.compile(
    r"(?<![A-Za-z])(?:latest|newest|most recent(?:ly)?|recent(?:ly)?|lately|"
    r"what['’]?s new|what is new|new (?:in|features?|things|releases?|versions?)|"
    r"what (?:has |have )?changed|(?:last|this) (?:week|month|year|release|update|version)|"
    r"changelog|just (?:released|added|shipped))(?![A-Za-z])"
    r"|最新[のな的]|最近[のな的]|最近(?:更新|変更|追加|改变|变化)|新機能|新しい(?:機能|バージョン)|"
    r"変更点|更新内容|新功能|新增功能|更新了什么", re.I)

_CHANGE_RE = re.compile(r"(?<![A-Za-z])(?:chang|updat|improv|fix)(?:e|es|ed|ing|ements?)?"
                        r"(?![A-Za-z])|変更|更新|改善|修正|变化|改进|修复", re.I)

_WORD_RE = re.compile(r"[^\W_]")

_memo: dict[tuple[str, str], dt.date | None] = {}
_memo_lock = threading.Lock()


def asks_for_recent(query: str) -> bool:
    """Whether the query asks for what is new or changed lately."""
    return bool(_RECENT_RE.search(query))


def subject(query: str) -> str:
    """The query without its words for "recent" and for "changes": what the newest pages
    should be about ("recent changes to Bases" → "to Bases")."""
    rest = " ".join(_RECENT_RE.sub(" ", query).split()) or query
    return " ".join(_CHANGE_RE.sub(" ", rest).split()) or rest


def page_date(page: Page) -> dt.date | None:
    """The newest real date of a page (created or updated), or None when it has none."""
    key = (page.path, page.content_hash)
    if page.content_hash:
        with _memo_lock:
            if key in _memo:
                return _memo[key]
    found = note_dates(page.frontmatter, lambda: page.body, page.path)   # body: if needed
    date = found.latest if found else None
    if page.content_hash:
        with _memo_lock:
            if len(_memo) >= _MEMO_SIZE:
                _memo.clear()
            _memo[key] = date
    return date


def mostly_dated(pages: Iterable[Page]) -> bool:
    """At least half the pages carry a real date (and there is a page)."""
    total = dated = 0
    for page in pages:
        total += 1
        dated += page_date(page) is not None
    return total > 0 and dated >= total / 2


class Recency:
    """Applies decay and the recent-query boost to one query's candidates."""

    def __init__(self, pages: Mapping[str, Page], mode: str, decay_lambda: float,
                 evergreen_tags: Iterable[str], evergreen_pages: Iterable[str],
                 kind_lambdas: Mapping[str, float] | None = None):
        self.pages = pages
        self.mode = mode
        self.decay_lambda = decay_lambda
        self.kind_lambdas = {str(k).lower(): float(v) for k, v in (kind_lambdas or {}).items()}
        self.evergreen_tags = {t.lower() for t in evergreen_tags}
        self.evergreen_pages = set(evergreen_pages)
        self.decays = mode == "on" or (mode == "auto" and mostly_dated(pages.values()))
        self._newest_paths: list[str] | None = None

    def add_newest(self, query: str, candidates: dict[str, Candidate],
                   keyword: KeywordIndex, weight: float) -> None:
        """On a query for what is new, the newest dated pages that match its subject join
        ``candidates`` (with their share ``weight`` of the keyword score), found by "recent"."""
        if self.mode == "off" or not asks_for_recent(query):
            return
        about = subject(query)
        if not _WORD_RE.search(about):
            # "what changed recently?" has no subject: every page matches it as well as the
            # best one, so the newest of all enter level with it and their dates decide
            best = max((c.score for c in candidates.values()), default=weight)
            for path in self._newest()[:RECENT_ADD]:
                if path not in candidates:
                    candidates[path] = Candidate(score=best, found_by=["recent"])
            return
        hits = keyword.search(about, RECENT_POOL)
        if not hits:
            return
        top = hits[0].score
        dated = [(date, rank, hit) for rank, hit in enumerate(hits, 1)
                 if hit.score >= RECENT_MIN_SHARE * top and hit.path in self.pages
                 and not self._evergreen(hit.path)
                 and (date := page_date(self.pages[hit.path]))]
        for date, rank, hit in sorted(dated, key=lambda d: (d[0], -d[1]), reverse=True
                                      )[:RECENT_ADD]:
            if hit.path not in candidates:
                cand = Candidate(score=weight * hit.score / top, section_id=hit.section_id)
                cand.sources["keyword"] = {"rank": rank, "score": round(hit.score, 4)}
                cand.found_by.append("recent")
                candidates[hit.path] = cand

    def _newest(self) -> list[str]:
        """Dated, non-evergreen pages, newest first (computed once)."""
        if self._newest_paths is None:
            dated = [(date, path) for path, page in self.pages.items()
                     if not self._evergreen(path) and (date := page_date(page))]
            self._newest_paths = [p for _, p in sorted(dated, key=lambda d: (d[0], d[1]),
                                                       reverse=True)]
        return self._newest_paths

    def apply(self, query: str, candidates: dict[str, Candidate]) -> frozenset[str]:
        """Decay or boost ``candidates`` in place, recording each factor in its boosts; the
        pages whose place their date decides (dated ones, on a query for what is new), which
        no retriever's pick should lift back over newer ones."""
        if self.mode == "off":
            return frozenset()
        dated = {path: date for path in candidates
                 if not self._evergreen(path) and (date := page_date(self.pages[path]))}
        if asks_for_recent(query):
            if not dated:
                return frozenset()
            newest = max(dated.values())
            for path, date in dated.items():
                factor = 1 + RECENT_BOOST * math.exp(-(newest - date).days / RECENT_DAYS)
                candidates[path].score *= factor
                candidates[path].boosts["recent"] = round(factor, 4)
            return frozenset(dated)
        if self.decays and dated:
            newest = page_date(self.pages[self._newest()[0]])
            for path, date in dated.items():
                factor = math.exp(-self.lambda_of(path) * max(0, (newest - date).days))
                if factor < 0.9999:
                    candidates[path].score *= factor
                    candidates[path].boosts["recency"] = round(factor, 4)
        return frozenset()

    def lambda_of(self, path: str) -> float:
        """The decay λ of ``path``: its ``type``'s in ``recency_lambdas``, else the smallest
        of its tags' there (a page tagged both decision and reference keeps the slower),
        else ``recency_lambda``."""
        if not self.kind_lambdas:
            return self.decay_lambda
        page = self.pages[path]
        kind = page.frontmatter.get("type")
        if isinstance(kind, str) and kind.strip().lower() in self.kind_lambdas:
            return self.kind_lambdas[kind.strip().lower()]
        tagged = [self.kind_lambdas[t.lower()] for t in page.tags if t.lower() in self.kind_lambdas]
        return min(tagged) if tagged else self.decay_lambda

    def age_days(self, path: str) -> int | None:
        """How many days older than the vault's newest dated page ``path`` is, as the decay
        counts them; None for an undated or evergreen page (the decay leaves it alone) and
        for one whose kind has its own λ (``recency_lambdas``: not the λ calibrate fits)."""
        if path not in self.pages or self._evergreen(path) or not self._newest():
            return None
        if self._own_lambda(path):
            return None
        date = page_date(self.pages[path])
        newest = page_date(self.pages[self._newest()[0]])
        return None if date is None or newest is None else max(0, (newest - date).days)

    def _own_lambda(self, path: str) -> bool:
        """Whether ``path``'s type or a tag of it has a λ of its own in ``recency_lambdas``."""
        if not self.kind_lambdas:
            return False
        page = self.pages[path]
        kind = page.frontmatter.get("type")
        names = {t.lower() for t in page.tags}
        if isinstance(kind, str):
            names.add(kind.strip().lower())
        return bool(names & set(self.kind_lambdas))

    def _evergreen(self, path: str) -> bool:
        page = self.pages[path]
        return path in self.evergreen_pages or bool(
            self.evergreen_tags & {t.lower() for t in page.tags})
