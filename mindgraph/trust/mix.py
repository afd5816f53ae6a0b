"""The trust mix of a wiki (for `stats` and `check`) and the trust findings of `check`.

The mix: pages per level and per status, how many are fresh, stale (and by which trigger) or
never verified. The findings: each *disputed* page (a claim its evidence contradicts; the
page names the claim and the quote, and the fix), and each page whose trust record cannot be
read (it reads as L0 unverified; the finding says why).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import shlex
from collections import Counter
from typing import Any, Iterable

from ..page.check import CheckReport, Finding
from ..page.model import Page
from .claims import page_claims
from .evidence_drift import EvidenceFiles
from .freshness import TRIGGERS, freshness_of_body
from .record import LEVELS, STATUSES, read_record


def trust_mix(pages: Iterable[Page], today: dt.date, files: EvidenceFiles | None = None
              ) -> dict[str, Any]:
    """Pages per level and status, fresh / stale / unverified, stale pages by trigger
    (``files`` re-reads the local files each record was checked against)."""
    levels: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    states: Counter[str] = Counter()
    triggers: Counter[str] = Counter()
    for page in pages:
        record = read_record(page.frontmatter)
        state = freshness_of_body(record.verification, page.body, record.provenance, today,
                                  files is not None and files.changed(page.path, record))
        levels[f"L{record.verification.level}"] += 1
        statuses[record.verification.status] += 1
        states[state.state] += 1
        triggers.update(state.triggers)
    return {"by_level": {f"L{n}": levels[f"L{n}"] for n in LEVELS},
            "by_status": {s: statuses[s] for s in STATUSES},
            "fresh": states["fresh"], "stale": states["stale"],
            "unverified": states["unverified"],
            "stale_by_trigger": {t: triggers[t] for t in TRIGGERS}}


def trust_findings(pages: Iterable[Page]) -> list[Finding]:
    """A warning per disputed page (at the contradicted claim's line) and per page whose
    trust record cannot be read."""
    out = []
    for page in sorted(pages, key=lambda p: p.path):
        record = read_record(page.frontmatter)
        if record.problem:
            out.append(Finding("warning", "trust-record", page.path, 0,
                               f"trust record unreadable ({record.problem}), read as L0 "
                               f"unverified; run `mindgraph verify {shlex.quote(page.path)}` "
                               f"to write a new one."))
        if record.verification.status != "disputed":
            continue
        found = next(((s.ref, c) for s in record.evidence.sources for c in s.claims
                      if c.verdict == "contradicted"), None)
        line, what = 0, ""
        if found is not None:
            ref, claim = found
            line = next((c.line + page.body_line - 1 for c in page_claims(page.body)
                         if c.text == claim.claim), 0)
            what = f": \"{_cut(claim.claim)}\" against {ref}: \"{_cut(claim.quote)}\""
        out.append(Finding("warning", "disputed", page.path, line,
                           f"verification found a claim its evidence contradicts{what}. "
                           f"Correct the claim (or the evidence, if it is what is wrong), "
                           f"then run `mindgraph verify {shlex.quote(page.path)}`."))
    return out


@dataclasses.dataclass(frozen=True)
class TrustedCheckReport(CheckReport):
    """`check`'s report with the trust mix (``trust``) and the trust findings in it."""

    trust: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready form (the lint's, plus ``trust``)."""
        return {**super().to_dict(), "trust": self.trust}


def with_trust(report: CheckReport, pages: Iterable[Page], today: dt.date,
               files: EvidenceFiles | None = None) -> TrustedCheckReport:
    """``report`` with the trust findings added and the trust mix attached."""
    pages = list(pages)
    return TrustedCheckReport(report.pages, report.findings + tuple(trust_findings(pages)),
                              trust_mix(pages, today, files))


def _cut(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def describe_mix(mix: dict[str, Any]) -> str:
    """The mix in one line: ``L0 3, L1 0, L2 2, L3 0; verified 2, …; fresh 2, stale 1 (…)``."""
    stale = ", ".join(f"{k} {v}" for k, v in mix["stale_by_trigger"].items() if v)
    return ("; ".join([", ".join(f"{k} {v}" for k, v in mix["by_level"].items()),
                       ", ".join(f"{k} {v}" for k, v in mix["by_status"].items()),
                       f"fresh {mix['fresh']}, stale {mix['stale']}"
                       + (f" ({stale})" if stale else "")]))
