"""The trust record as read from frontmatter, and the verdict → status/level mapping."""

import pytest

from mindgraph.trust.levels import outcome
from mindgraph.trust.record import (ClaimCheck, Evidence, EvidenceSource, Verification,
                                    read_record)


def test_old_page_with_only_sources_and_compiler_reads_as_l0_with_provenance():
    record = read_record({"sources": [{"path": "a.md", "sha256": "ab"}],
                          "compiler": "offline:v1"})
    assert record.provenance.origin == "compiled_offline"
    assert record.provenance.generator == "offline:v1"
    assert [(s.path, s.sha256) for s in record.provenance.sources] == [("a.md", "ab")]
    assert record.label == "L0 unverified" and record.evidence.status == "none"
    assert read_record({"compiler": "anthropic:claude:p3"}).provenance.origin == "ai_generated"
    assert read_record({}).provenance.origin == "human"


def test_explicit_provenance_wins_and_bad_records_read_as_unverified_with_the_reason():
    record = read_record({"provenance": {"origin": "human", "sources": ["x.md"]},
                          "compiler": "offline:v1", "verification": {"status": "verified",
                                                                     "level": 7}})
    assert record.provenance.origin == "human"
    assert record.provenance.sources[0].path == "x.md"
    assert record.verification.level == 0 and "level 7" in record.problem
    assert "not a mapping" in read_record({"evidence": "lots"}).problem


def _evidence(available=True, ref="raw:a.md", verdict="supported"):
    return Evidence("none", 1, (EvidenceSource("raw_note", ref, "h", available,
                                               (ClaimCheck("c", verdict, "q"),)),))


@pytest.mark.parametrize("verdict, status, level, evidence", [
    ("pass", "verified", 2, "grounded"),
    ("warn", "reviewed", 2, "partial"),
    ("unverifiable", "reviewed", 1, "none"),
])
def test_verdict_mapping(verdict, status, level, evidence):
    ev = _evidence() if verdict != "unverifiable" else Evidence()
    got = outcome(verdict, Verification(), ev)
    assert (got.status, got.level, got.evidence_status) == (status, level, evidence)


def test_fail_is_disputed_and_never_raises_the_level():
    assert outcome("fail", Verification(), _evidence(verdict="contradicted")).level == 0
    previous = Verification("verified", 2)
    got = outcome("fail", previous, _evidence(verdict="contradicted"))
    assert (got.status, got.level) == ("disputed", 2)


def test_evidence_that_could_not_be_read_stays_l1_even_on_pass():
    got = outcome("pass", Verification(), _evidence(available=False))
    assert (got.status, got.level, got.evidence_status) == ("reviewed", 1, "unavailable")


def test_l3_only_when_every_supported_claim_rests_on_a_primary_source():
    assert outcome("pass", Verification(), _evidence(), ("raw:*",)).level == 3
    assert outcome("pass", Verification(), _evidence(), ("raw:policies/*",)).level == 2
    assert outcome("pass", Verification(), _evidence()).level == 2


def test_unknown_verdict_is_refused():
    with pytest.raises(ValueError, match="unknown verdict"):
        outcome("very confident", Verification(), _evidence())


def _sources(*items):
    """EvidenceSources from (ref, {claim: verdict}) pairs."""
    return Evidence("none", len(items), tuple(
        EvidenceSource("raw_note" if ref.startswith("raw:") else "url", ref, "h", True,
                       tuple(ClaimCheck(c, v, "q" if v == "supported" else "")
                             for c, v in claims.items()))
        for ref, claims in items))


def test_l3_needs_every_claim_mapped_to_a_primary_source_a_secondary_one_besides_is_fine():
    both = _sources(("raw:policies/a.md", {"c1": "supported", "c2": "supported"}),
                    ("https://blog.example.com/x", {"c1": "supported", "c2": "unsupported"}))
    assert outcome("pass", Verification(), both, ("raw:policies/*",)).level == 3
    split = _sources(("raw:policies/a.md", {"c1": "supported", "c2": "unsupported"}),
                     ("https://blog.example.com/x", {"c1": "unsupported", "c2": "supported"}))
    assert outcome("pass", Verification(), split, ("raw:policies/*",)).level == 2
    assert outcome("pass", Verification(), split,
                   ("raw:policies/*", "https://blog.example.com/*")).level == 3


def test_a_pass_while_cited_evidence_could_not_be_read_is_reviewed_l2_partial():
    evidence = Evidence("none", 2, (
        EvidenceSource("raw_note", "raw:a.md", "h", True, (ClaimCheck("c", "supported", "q"),)),
        EvidenceSource("url", "https://example.org", "", False, reason="HTTP 404 Not Found")))
    got = outcome("pass", Verification(), evidence, ("raw:*",))
    assert (got.status, got.level, got.evidence_status) == ("reviewed", 2, "partial")


def test_the_unavailable_reason_is_kept_in_the_record():
    record = read_record({"evidence": {"status": "partial", "sources": [
        {"kind": "url", "ref": "https://x", "available": False, "reason": "HTTP 404"}]}})
    assert record.evidence.sources[0].reason == "HTTP 404"
    assert record.evidence.to_yaml()["sources"][0]["reason"] == "HTTP 404"
