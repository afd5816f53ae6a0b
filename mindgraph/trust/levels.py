"""From a validator's verdict to a page's status and level (the only way a level changes).

L0 unverified: as compiled, no check.  L1 machine review: a validator read the page alone
(no evidence could be checked).  L2 grounded: the evidence text itself was read and each claim
checked against it.  L3 primary mapped: every claim supported, with its own quote, by a
source the configuration marks as primary (``trust.primary_sources``: globs over evidence
refs such as ``raw:policies/*``, ``file:specs/*`` or ``https://docs.example.com/*``); a
claim resting only on another source keeps the page at L2.  A model's confidence is no input
here, so it can never raise a level.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from .record import Evidence, EvidenceSource, Verification

VERDICTS = ("pass", "warn", "fail", "unverifiable")


@dataclass(frozen=True)
class Outcome:
    """The status, level and evidence status a verdict gives."""

    status: str
    level: int
    evidence_status: str


def outcome(verdict: str, previous: Verification, evidence: Evidence,
            primary: tuple[str, ...] = ()) -> Outcome:
    """pass → verified L2 (L3 when every claim is mapped to a primary source); warn, or a
    pass while some cited evidence could not be read → reviewed L2 (evidence partial); fail
    → disputed at the previous level (never raised); unverifiable, or no evidence text at
    all (a URL written in the page that could not be fetched is none) → reviewed L1."""
    available = [s for s in evidence.sources if s.available]
    lacking = len(available) < len(evidence.sources)
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}; expected one of {', '.join(VERDICTS)}")
    if verdict == "fail":
        return Outcome("disputed", previous.level, "partial" if available else "unavailable")
    if verdict == "unverifiable" or not available:
        return Outcome("reviewed", 1, "unavailable" if evidence.sources else "none")
    if verdict == "warn" or lacking:
        return Outcome("reviewed", 2, "partial")
    level = 3 if primary_mapped(available, primary) else 2
    return Outcome("verified", level, "grounded")


def is_primary(ref: str, primary: tuple[str, ...]) -> bool:
    """True when evidence ``ref`` (raw:path, file:path, a URL) matches a primary glob."""
    return any(fnmatch.fnmatchcase(ref, pattern) for pattern in primary)


def primary_mapped(sources: list[EvidenceSource], primary: tuple[str, ...]) -> bool:
    """True when every claim checked is supported by (mapped to) a primary source: its own
    supporting quote in a source the configuration marks primary. A claim supported only by
    other sources, or no claim at all, is not."""
    if not primary:
        return False
    claims = {c.claim for s in sources for c in s.claims}
    mapped = {c.claim for s in sources if is_primary(s.ref, primary)
              for c in s.claims if c.supported}
    return bool(claims) and claims <= mapped
