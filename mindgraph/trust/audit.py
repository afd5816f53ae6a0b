"""The trust audit: how much of the wiki is fresh L2, what is stale and what falls due.

Read-only. *Evidence-capable* pages have at least one source to check (a raw note or a URL).
*Fresh L2* pages are at level 2 or 3, not disputed, and fresh. Coverage is fresh L2 over
evidence-capable; the threshold count is what the configured share (80% by default) needs,
and the surplus is how many fresh L2 pages there are beyond it (negative: short of it).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from .freshness import TRIGGERS, Freshness
from .record import TrustRecord

DUE_BUCKETS = ("overdue", "7d", "8-14d", "15-30d", ">30d")


@dataclass(frozen=True)
class PageTrust:
    """One page's record and freshness, as the audit counts it."""

    path: str
    record: TrustRecord
    freshness: Freshness
    evidence_capable: bool


@dataclass(frozen=True)
class AuditReport:
    """The audit's figures."""

    pages: int
    evidence_capable: int
    fresh_l2: int
    coverage_pct: float
    threshold_pct: float
    threshold_count: int
    surplus: int
    by_level: dict[str, int] = field(default_factory=dict)
    by_status: dict[str, int] = field(default_factory=dict)
    stale: dict[str, int] = field(default_factory=dict)
    stale_pages: int = 0
    due: dict[str, int] = field(default_factory=dict)
    disputed: tuple[str, ...] = ()
    unreadable: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"pages": self.pages, "evidence_capable": self.evidence_capable,
                "fresh_l2": self.fresh_l2, "coverage_pct": self.coverage_pct,
                "threshold_pct": self.threshold_pct, "threshold_count": self.threshold_count,
                "surplus": self.surplus, "by_level": self.by_level,
                "by_status": self.by_status, "stale_pages": self.stale_pages,
                "stale_by_trigger": self.stale, "due": self.due,
                "disputed": list(self.disputed), "unreadable": list(self.unreadable)}


def is_fresh_l2(item: PageTrust) -> bool:
    """Level 2 or 3, not disputed, and fresh."""
    v = item.record.verification
    return v.level >= 2 and v.status != "disputed" and item.freshness.fresh


def audit(items: Iterable[PageTrust], threshold_pct: float,
          unreadable: Iterable[str] = ()) -> AuditReport:
    """Count the figures over every page."""
    items = list(items)
    capable = [i for i in items if i.evidence_capable]
    fresh = sum(1 for i in capable if is_fresh_l2(i))
    need = math.ceil(round(threshold_pct / 100 * len(capable), 9))
    stale = Counter(t for i in items for t in i.freshness.triggers)
    due: Counter[str] = Counter({b: 0 for b in DUE_BUCKETS})
    for item in items:
        days = item.freshness.due_in_days
        if item.freshness.state == "unverified" or days is None:
            continue
        due[_bucket(days)] += 1
    return AuditReport(
        pages=len(items), evidence_capable=len(capable), fresh_l2=fresh,
        coverage_pct=round(100 * fresh / len(capable), 2) if capable else 0.0,
        threshold_pct=threshold_pct, threshold_count=need, surplus=fresh - need,
        by_level={f"L{n}": sum(1 for i in items if i.record.verification.level == n)
                  for n in range(4)},
        by_status=dict(Counter(i.record.verification.status for i in items)),
        stale={t: stale.get(t, 0) for t in TRIGGERS},
        stale_pages=sum(1 for i in items if i.freshness.state == "stale"),
        due=dict(due),
        disputed=tuple(i.path for i in items if i.record.verification.status == "disputed"),
        unreadable=tuple(unreadable))


def _bucket(days: int) -> str:
    if days < 0:
        return "overdue"
    if days <= 7:
        return "7d"
    if days <= 14:
        return "8-14d"
    return "15-30d" if days <= 30 else ">30d"
