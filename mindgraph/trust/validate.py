"""Validate one page: its claims against its evidence, giving the two records to write."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from .claims import evidence_sentences, page_claims
from .evidence import EvidenceText
from .freshness import body_hash, references, revalidate_after
from .levels import outcome
from .offline import IDENTITY, analyse, check_claim, verdict_of
from .record import ClaimCheck, Evidence, EvidenceSource, TrustRecord, Verification


@dataclass(frozen=True)
class PageVerdict:
    """The validator's verdict on a page and the records it gives."""

    path: str
    verdict: str                 # pass | warn | fail | unverifiable
    verification: Verification
    evidence: Evidence
    claims: int
    supported: int

    def to_dict(self) -> dict:
        """JSON form (the plan stores the two records as they will be written)."""
        return {"path": self.path, "verdict": self.verdict, "claims": self.claims,
                "supported": self.supported, "verification": self.verification.to_yaml(),
                "evidence": self.evidence.to_yaml()}


def validate_offline(path: str, text: str, record: TrustRecord, found: list[EvidenceText],
                     today: dt.date, revalidate_days: int,
                     primary: tuple[str, ...] = ()) -> PageVerdict:
    """Check every claim of the page ``text`` against each available evidence text.

    A claim counts as supported when any source supports it; the per-source records say
    which one did. Claims are checked against the union of the sources' sentences.
    """
    claims = page_claims(text)
    sentences_by_source = {e.ref: [analyse(s) for s in evidence_sentences(e.text)]
                           for e in found if e.text is not None}
    every = [s for sentences in sentences_by_source.values() for s in sentences]
    checks = [check_claim(claim, every) for claim in claims] if every else []
    sources = []
    for item in found:
        if item.text is None:
            sources.append(EvidenceSource(item.kind, item.ref, "", False))
            continue
        mine = sentences_by_source[item.ref]
        quoted = {s.text for s in mine}
        sources.append(EvidenceSource(item.kind, item.ref, item.sha256, True,
                                      tuple(c if c.quote in quoted or c.verdict ==
                                            "unsupported" else ClaimCheck(c.claim,
                                                                          "unsupported")
                                            for c in checks)))
    verdict = verdict_of(checks) if every else "unverifiable"
    evidence = Evidence("none", len(found), tuple(sources))
    result = outcome(verdict, record.verification, evidence, primary)
    verification = Verification(result.status, result.level, IDENTITY, today.isoformat(),
                                revalidate_after(today, revalidate_days), body_hash(text),
                                references(text, record.provenance))
    evidence = Evidence(result.evidence_status, len(found), tuple(sources))
    return PageVerdict(path, verdict, verification, evidence, len(claims),
                       sum(1 for c in checks if c.supported))
