"""From a validator's verdict to a page's status and level (the only way a level changes).

L0 unverified: as compiled, no check.  L1 machine review: a validator read the page alone
(no evidence could be checked).  L2 grounded: the evidence text itself was read and each claim
checked against it.  L3 primary mapped: every claim supported by a source the configuration
marks as primary.  A model's confidence is no input here, so it can never raise a level.
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
    """pass → verified L2 (L3 when every claim rests on a primary source); warn → reviewed
    L2; fail → disputed at the previous level (never raised); unverifiable or no evidence
    text → reviewed L1."""
    available = [s for s in evidence.sources if s.available]
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {verdict!r}; expected one of {', '.join(VERDICTS)}")
    if verdict == "fail":
        return Outcome("disputed", previous.level, "partial" if available else "unavailable")
    if verdict == "unverifiable" or not available:
        return Outcome("reviewed", 1, "unavailable" if evidence.sources else "none")
    if verdict == "warn":
        return Outcome("reviewed", 2, "partial")
    level = 3 if primary and _all_primary(available, primary) else 2
    return Outcome("verified", level, "grounded")


def _all_primary(sources: list[EvidenceSource], primary: tuple[str, ...]) -> bool:
    """True when every supported claim is supported by a primary source."""
    supported = [(s, c) for s in sources for c in s.claims if c.supported]
    return bool(supported) and all(
        any(fnmatch.fnmatchcase(s.ref, pattern) for pattern in primary) for s, _ in supported)
