"""Validate one page: its claims against its evidence, giving the two records to write."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Callable

from ..errors import TooLarge
from ..fsutil import sha256_text
from .claims import evidence_sentences, page_claims
from .evidence import EvidenceText
from .freshness import body_hash, references, revalidate_after
from .levels import outcome
from .offline import IDENTITY, verdict_of
from .offline_index import judge_claims
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


Judge = Callable[[list[str], list[EvidenceText]], list[ClaimCheck]]


def offline_judge(claims: list[str], found: list[EvidenceText],
                  deadline: float | None = None, budget: str = "") -> list[ClaimCheck]:
    """The offline validator over every available evidence text at once (OverBudget past
    ``deadline``, a ``time.monotonic()``; ``budget`` names it in the message)."""
    return judge_claims(claims, (s for e in found if e.text is not None
                                 for s in evidence_sentences(e.text)), deadline,
                        f" ({budget})" if budget else "")


def check_text(text: str, found: list[EvidenceText], judge: Judge = offline_judge,
               deadline: float | None = None, budget: str = ""
               ) -> tuple[str, list[ClaimCheck], tuple[EvidenceSource, ...]]:
    """The verdict on every claim of ``text`` against each available evidence text: the
    verdict, the checks, and one record per source (a claim counts as supported when any
    source supports it; each source's record holds what that source says of each claim:
    the offline validator checks every claim against each source alone, a model's verdicts
    count for the source that holds the quote). The offline validator stops with OverBudget
    past ``deadline``."""
    available = [e for e in found if e.text is not None]
    claims = [c.text for c in page_claims(text)]
    own: dict[int, list[ClaimCheck]] = {}
    if not (available and claims):
        checks: list[ClaimCheck] = []
    elif judge is offline_judge:
        # each source alone; over all of them a claim gets the first source's check that
        # supports it, else the first that contradicts it: what one pass over every
        # sentence in order finds, without reading the evidence twice
        own = {id(e): offline_judge(claims, [e], deadline, budget) for e in available}
        checks = [_first(options) for options in zip(*own.values())]
    else:
        checks = judge(claims, available)
        own = {id(e): _quoted_in(checks, e.text or "") for e in available}
    sources = []
    for item in found:
        if item.text is None:
            sources.append(EvidenceSource(item.kind, item.ref, "", False, reason=item.reason))
        else:
            sources.append(EvidenceSource(item.kind, item.ref, item.sha256, True,
                                          tuple(own.get(id(item), ()))))
    return (verdict_of(checks) if checks else "unverifiable"), checks, tuple(sources)


def _first(options: tuple[ClaimCheck, ...]) -> ClaimCheck:
    """The first check that supports the claim, else the first that contradicts it."""
    return next((c for c in options if c.supported), None) or next(
        (c for c in options if c.verdict == "contradicted"), options[0])


def _quoted_in(checks: list[ClaimCheck], text: str) -> list[ClaimCheck]:
    """A model's checks as one source says them: a quote it does not hold supports nothing."""
    sentences = set(evidence_sentences(text))
    flat = " ".join(text.split())
    return [c if c.verdict == "unsupported" or c.quote in sentences
            or " ".join(c.quote.split()) in flat else ClaimCheck(c.claim, "unsupported")
            for c in checks]


def validate_page(path: str, text: str, record: TrustRecord, found: list[EvidenceText],
                  today: dt.date, revalidate_days: int, primary: tuple[str, ...] = (),
                  judge: Judge = offline_judge, validator: str = IDENTITY) -> PageVerdict:
    """Check a page against its evidence and give the records to write."""
    verdict, checks, sources = check_text(text, found, judge)
    result = outcome(verdict, record.verification, Evidence("none", len(found), sources),
                     primary)
    verification = Verification(result.status, result.level, validator, today.isoformat(),
                                revalidate_after(today, revalidate_days), body_hash(text),
                                references(text, record.provenance))
    evidence = Evidence(result.evidence_status, len(found), sources)
    return PageVerdict(path, verdict, verification, evidence, len(checks) or
                       len(page_claims(text)), sum(1 for c in checks if c.supported))


@dataclass(frozen=True)
class ValidateLimits:
    """What one read-only validation may ask for: claims in the text, sentences in all the
    evidence texts together (0: no limit), and a ``deadline`` (``time.monotonic()``) with the
    setting that gave it."""

    max_claims: int = 0
    max_sentences: int = 0
    deadline: float | None = None
    budget: str = "serve.request_timeout_s"


def validate_text(text: str, evidence: list[str], limits: ValidateLimits = ValidateLimits()
                  ) -> dict:
    """The read-only judge (POST /validate, the ``validate`` MCP tool): a text and its
    evidence texts in, the verdict JSON out; nothing is read or written. TooLarge when the
    text has more claims or the evidence more sentences than ``limits`` allow; OverBudget
    past its deadline."""
    claims = len(page_claims(text))
    if limits.max_claims and claims > limits.max_claims:
        raise TooLarge(f"text: {claims:,} claims (sentences and list items); a validation "
                       f"checks at most {limits.max_claims:,} (serve.validate_max_claims). "
                       f"Send the text in parts, or raise the setting.")
    if limits.max_sentences:
        sentences = sum(len(evidence_sentences(body)) for body in evidence)
        if sentences > limits.max_sentences:
            raise TooLarge(f"evidence: {sentences:,} sentences in all; a validation reads at "
                           f"most {limits.max_sentences:,} "
                           f"(serve.validate_max_evidence_sentences). Send only the evidence "
                           f"that matters, or raise the setting.")
    found = [EvidenceText("text", f"evidence[{i}]", body, sha256_text(body))
             for i, body in enumerate(evidence)]
    verdict, checks, sources = check_text(text, found, deadline=limits.deadline,
                                          budget=limits.budget)
    by_claim = {}
    for source in sources:
        for check in source.claims:
            if check.verdict != "unsupported":
                by_claim.setdefault(check.claim, source.ref)
    return {"validator": IDENTITY, "verdict": verdict, "claims": len(checks),
            "supported": sum(1 for c in checks if c.supported),
            "checks": [{"claim": c.claim, "verdict": c.verdict, "quote": c.quote,
                        "source": by_claim.get(c.claim, "")} for c in checks]}
