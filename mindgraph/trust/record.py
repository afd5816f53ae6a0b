"""The trust record of a wiki page: three frontmatter records, kept apart.

::

    provenance:    origin (human | ai_generated | compiled_offline), generator, sources
    verification:  status, level 0-3, validator, last_validated, revalidate_after,
                   body_sha256 and references (what was validated, for freshness)
    evidence:      status (none | grounded | partial | unavailable), source_count, and per
                   source checked: kind, ref, sha256 of the checked text, available (and
                   the reason when it was not), claims (text, verdict, quote)

Pages written before this record existed carry only ``sources`` and ``compiler``; their
provenance is derived from those, and their verification is L0 unverified. A model's
confidence appears nowhere here: only a verdict on evidence sets a level (see levels.py).
Reading never fails: a malformed record reads as unverified and says why in ``problem``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

ORIGINS = ("human", "ai_generated", "compiled_offline")
STATUSES = ("unverified", "reviewed", "verified", "disputed")
EVIDENCE_STATUSES = ("none", "grounded", "partial", "unavailable")
CLAIM_VERDICTS = ("supported", "unsupported", "contradicted")
LEVELS = (0, 1, 2, 3)
RECORD_KEYS = ("verification", "evidence")     # the only keys verification ever writes


@dataclass(frozen=True)
class SourceRef:
    """A raw note a page was compiled from."""

    path: str
    sha256: str = ""


@dataclass(frozen=True)
class Provenance:
    """Who or what wrote the page, from which raw notes."""

    origin: str = "human"
    generator: str = ""
    sources: tuple[SourceRef, ...] = ()


@dataclass(frozen=True)
class Verification:
    """The outcome of the last validation (L0 unverified when there was none)."""

    status: str = "unverified"
    level: int = 0
    validator: str = ""
    last_validated: str = ""        # ISO date
    revalidate_after: str = ""      # ISO date
    body_sha256: str = ""           # the body that was validated
    references: tuple[str, ...] = ()  # the cited sources that were validated against

    def to_yaml(self) -> dict[str, Any]:
        """The mapping written under ``verification:``."""
        return {"status": self.status, "level": self.level, "validator": self.validator,
                "last_validated": self.last_validated,
                "revalidate_after": self.revalidate_after, "body_sha256": self.body_sha256,
                "references": list(self.references)}


@dataclass(frozen=True)
class ClaimCheck:
    """One claim of the page and what the evidence said about it."""

    claim: str
    verdict: str                # supported | unsupported | contradicted
    quote: str = ""             # the evidence sentence that supports (or contradicts) it

    @property
    def supported(self) -> bool:
        """True when the evidence carries the claim."""
        return self.verdict == "supported"


@dataclass(frozen=True)
class EvidenceSource:
    """One piece of evidence that was checked: a raw note, a local file or a URL."""

    kind: str                   # raw_note | file | url
    ref: str
    sha256: str = ""            # of the text that was checked ("" when it was unavailable)
    available: bool = True
    claims: tuple[ClaimCheck, ...] = ()
    reason: str = ""            # why it was unavailable ("" when it was read)


@dataclass(frozen=True)
class Evidence:
    """What the last validation checked the page against."""

    status: str = "none"
    source_count: int = 0
    sources: tuple[EvidenceSource, ...] = ()

    def to_yaml(self) -> dict[str, Any]:
        """The mapping written under ``evidence:``."""
        return {"status": self.status, "source_count": self.source_count,
                "sources": [_source_yaml(s) for s in self.sources]}


def _source_yaml(source: EvidenceSource) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": source.kind, "ref": source.ref, "sha256": source.sha256,
                           "available": source.available}
    if source.reason:
        out["reason"] = source.reason
    out["claims"] = [{"claim": c.claim, "supported": c.supported, "verdict": c.verdict,
                      "quote": c.quote} for c in source.claims]
    return out


@dataclass(frozen=True)
class TrustRecord:
    """The three records of one page."""

    provenance: Provenance = field(default_factory=Provenance)
    verification: Verification = field(default_factory=Verification)
    evidence: Evidence = field(default_factory=Evidence)
    problem: str = ""           # why a record could not be read ("" when it could)

    @property
    def label(self) -> str:
        """``L2 verified``: the level and status in one word pair."""
        return f"L{self.verification.level} {self.verification.status}"


def read_record(frontmatter: Mapping[str, Any]) -> TrustRecord:
    """The trust record of a page from its parsed frontmatter (never raises)."""
    problems: list[str] = []
    provenance = _provenance(frontmatter, problems)
    verification = _verification(frontmatter.get("verification"), problems)
    evidence = _evidence(frontmatter.get("evidence"), problems)
    return TrustRecord(provenance, verification, evidence, "; ".join(problems))


def origin_of(generator: str) -> str:
    """The origin a compiler identity implies: offline:vN → compiled_offline, else
    ai_generated; no compiler → human."""
    if not generator:
        return "human"
    return "compiled_offline" if generator.startswith("offline:") else "ai_generated"


def _provenance(fm: Mapping[str, Any], problems: list[str]) -> Provenance:
    raw = fm.get("provenance")
    data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if raw is not None and not isinstance(raw, Mapping):
        problems.append("provenance is not a mapping (origin, generator, sources)")
    generator = str(data.get("generator") or fm.get("compiler") or "")
    origin = str(data.get("origin") or origin_of(generator))
    if origin not in ORIGINS:
        problems.append(f"provenance.origin {origin!r} is not one of {', '.join(ORIGINS)}")
        origin = origin_of(generator)
    sources = []
    for item in _as_list(data.get("sources", fm.get("sources"))):
        if isinstance(item, Mapping) and item.get("path"):
            sources.append(SourceRef(str(item["path"]), str(item.get("sha256") or "")))
        elif isinstance(item, str) and item.strip():
            sources.append(SourceRef(item.strip()))
    return Provenance(origin, generator, tuple(sources))


def _verification(raw: Any, problems: list[str]) -> Verification:
    if raw is None:
        return Verification()
    if not isinstance(raw, Mapping):
        problems.append("verification is not a mapping")
        return Verification()
    status = str(raw.get("status") or "unverified")
    level = raw.get("level", 0)
    if status not in STATUSES:
        problems.append(f"verification.status {status!r} is not one of {', '.join(STATUSES)}")
        return Verification()
    if isinstance(level, bool) or not isinstance(level, int) or level not in LEVELS:
        problems.append(f"verification.level {level!r} is not 0, 1, 2 or 3")
        return Verification()
    return Verification(status, level, str(raw.get("validator") or ""),
                        _date(raw.get("last_validated")), _date(raw.get("revalidate_after")),
                        str(raw.get("body_sha256") or ""),
                        tuple(str(r) for r in _as_list(raw.get("references"))))


def _evidence(raw: Any, problems: list[str]) -> Evidence:
    if raw is None:
        return Evidence()
    if not isinstance(raw, Mapping):
        problems.append("evidence is not a mapping")
        return Evidence()
    status = str(raw.get("status") or "none")
    if status not in EVIDENCE_STATUSES:
        problems.append(f"evidence.status {status!r} is not one of "
                        f"{', '.join(EVIDENCE_STATUSES)}")
        status = "none"
    sources = []
    for item in _as_list(raw.get("sources")):
        if not isinstance(item, Mapping):
            continue
        claims = tuple(ClaimCheck(str(c.get("claim", "")), _claim_verdict(c),
                                  str(c.get("quote") or ""))
                       for c in _as_list(item.get("claims")) if isinstance(c, Mapping))
        sources.append(EvidenceSource(str(item.get("kind") or ""), str(item.get("ref") or ""),
                                      str(item.get("sha256") or ""),
                                      bool(item.get("available", True)), claims,
                                      str(item.get("reason") or "")))
    count = raw.get("source_count", len(sources))
    return Evidence(status, count if isinstance(count, int) else len(sources), tuple(sources))


def _claim_verdict(claim: Mapping[str, Any]) -> str:
    verdict = str(claim.get("verdict") or "")
    if verdict in CLAIM_VERDICTS:
        return verdict
    return "supported" if claim.get("supported") is True else "unsupported"


def _date(value: Any) -> str:
    return "" if value is None else str(value)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
