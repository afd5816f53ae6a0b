"""Recency: newer pages first, by real dates only.

A page's date is what mindgraph.page.dates finds in it: its frontmatter (a compiled page
carries the dates of its raw note there, git history included), a date written in the note, or
its file name — the newest of created and updated. A page without one is left alone, neither
decayed nor boosted: a file's modification time says when the vault was copied, not when the
note was written.

Two effects, both off with ``retrieval.recency: off`` and neither on evergreen pages:

- decay, on every query when most pages are dated (``auto``) or always (``on``): a dated
  candidate's score × exp(−``recency_lambda`` × its age in days);
- a boost for queries that ask for what is new ("latest release notes", "what changed recently
  in Canvas", 「最新の変更」, "最近更新"): a dated candidate's score
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
from .results import Candidate

RECENT_BOOST = 1.0
RECENT_DAYS = 180.0
_MEMO_SIZE = 200_000
_RECENT_RE = re.compile(
    r"(?<![A-Za-z])(?:latest|newest|most recent(?:ly)?|recent(?:ly)?|lately|"
    r"what['’]?s new|what is new|new (?:in|features?|things|releases?|versions?)|"
    r"what (?:has |have )?changed|(?:last|this) (?:week|month|year|release|update|version)|"
    r"changelog|just (?:released|added|shipped))(?![A-Za-z])"
    r"|最新|最近|新機能|新しい(?:機能|バージョン)|変更点|更新内容|新功能|新增|更新了|新版本",
    re.I)

_memo: dict[tuple[str, str], dt.date | None] = {}
_memo_lock = threading.Lock()


def asks_for_recent(query: str) -> bool:
    """Whether the query asks for what is new or changed lately."""
    return bool(_RECENT_RE.search(query))


def page_date(page: Page) -> dt.date | None:
    """The newest real date of a page (created or updated), or None when it has none."""
    key = (page.path, page.content_hash)
    if page.content_hash:
        with _memo_lock:
            if key in _memo:
                return _memo[key]
    found = note_dates(page.frontmatter, page.body, page.path)
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
                 evergreen_tags: Iterable[str], evergreen_pages: Iterable[str]):
        self.pages = pages
        self.mode = mode
        self.decay_lambda = decay_lambda
        self.evergreen_tags = {t.lower() for t in evergreen_tags}
        self.evergreen_pages = set(evergreen_pages)
        self.decays = mode == "on" or (mode == "auto" and mostly_dated(pages.values()))

    def apply(self, query: str, candidates: dict[str, Candidate],
              today: dt.date | None = None) -> frozenset[str]:
        """Decay and boost ``candidates`` in place, recording each factor in its boosts; the
        pages whose place their date decides (dated ones, on a query for what is new), which
        no retriever's pick should lift back over newer ones."""
        if self.mode == "off":
            return frozenset()
        dated = {path: date for path in candidates
                 if not self._evergreen(path) and (date := page_date(self.pages[path]))}
        if self.decays:
            today = today or dt.date.today()
            for path, date in dated.items():
                factor = math.exp(-self.decay_lambda * max(0, (today - date).days))
                if factor < 0.9999:
                    candidates[path].score *= factor
                    candidates[path].boosts["recency"] = round(factor, 4)
        if dated and asks_for_recent(query):
            newest = max(dated.values())
            for path, date in dated.items():
                factor = 1 + RECENT_BOOST * math.exp(-(newest - date).days / RECENT_DAYS)
                candidates[path].score *= factor
                candidates[path].boosts["recent"] = round(factor, 4)
            return frozenset(dated)
        return frozenset()

    def _evergreen(self, path: str) -> bool:
        page = self.pages[path]
        return path in self.evergreen_pages or bool(
            self.evergreen_tags & {t.lower() for t in page.tags})
