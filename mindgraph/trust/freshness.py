"""Is a page's verification still current? Three triggers make it stale.

``content_changed``: the body hash differs from the one validated; ``references_changed``:
the set of cited sources differs, or a cited local file reads differently now
(evidence_drift.py); ``age_expired``: today is past ``revalidate_after`` (90 days
after validation by default; trust.revalidate_after_days). A page never validated (L0) is
``unverified``, not stale. A stale L2 is not a fresh L2.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ..fsutil import sha256_text
from ..page.markdown import split_frontmatter
from .citations import reference_set
from .record import Provenance, Verification

TRIGGERS = ("content_changed", "references_changed", "age_expired")


def utc_today() -> dt.date:
    """Today in UTC: the day freshness counts from (``TrustService.today`` by default)."""
    return dt.datetime.now(dt.timezone.utc).date()


@dataclass(frozen=True)
class Freshness:
    """fresh | stale | unverified, the triggers that made it stale, days until due."""

    state: str
    triggers: tuple[str, ...] = ()
    due_in_days: int | None = None

    @property
    def fresh(self) -> bool:
        """True when validated and none of the triggers fired."""
        return self.state == "fresh"


def body_hash(text: str) -> str:
    """SHA-256 of a page's body (the text after the frontmatter, LF line endings)."""
    _, body, _ = split_frontmatter(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    return sha256_text(body)


def references(text: str, provenance: Provenance) -> tuple[str, ...]:
    """The sources a page cites: its raw notes (raw:path), URLs and local files (file:path;
    see citations.py)."""
    _, body, _ = split_frontmatter(text)
    return _references(body, provenance)


def _references(body: str, provenance: Provenance) -> tuple[str, ...]:
    return reference_set(body, provenance)


def freshness(verification: Verification, text: str, provenance: Provenance,
              today: dt.date, evidence_changed: bool = False) -> Freshness:
    """How current ``verification`` is for the page ``text`` on ``today``
    (``evidence_changed``: a local file it was checked against reads differently now)."""
    _, body, _ = split_frontmatter(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    return freshness_of_body(verification, body, provenance, today, evidence_changed)


def freshness_of_body(verification: Verification, body: str, provenance: Provenance,
                      today: dt.date, evidence_changed: bool = False) -> Freshness:
    """``freshness`` for a page whose body (LF line endings) is already split off."""
    if verification.level == 0 and not verification.last_validated:
        return Freshness("unverified")
    triggers = []
    if verification.body_sha256 != sha256_text(body):
        triggers.append("content_changed")
    if evidence_changed or tuple(verification.references) != _references(body, provenance):
        triggers.append("references_changed")
    due = _date(verification.revalidate_after)
    due_in = (due - today).days if due is not None else None
    if due is None or due_in is None or due_in < 0:
        triggers.append("age_expired")
    return Freshness("stale" if triggers else "fresh", tuple(triggers), due_in)


def revalidate_after(validated: dt.date, days: int) -> str:
    """The ISO date a validation on ``validated`` is due again."""
    return (validated + dt.timedelta(days=days)).isoformat()


def _date(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None
