"""Each freshness trigger, and the default and configured revalidation age."""

import datetime as dt

from mindgraph.config import settings_from_dict
from mindgraph.trust.freshness import body_hash, freshness, references, revalidate_after
from mindgraph.trust.record import read_record, Verification

PAGE = ("---\ntitle: A\nsources:\n- path: a.md\n  sha256: x\n---\n"
        "Body cites https://example.org/doc.\n")
DAY = dt.date(2026, 1, 10)


def _validated(text=PAGE, on=DAY, days=90):
    record = read_record({"sources": [{"path": "a.md"}]})
    return Verification("verified", 2, "offline:v1", on.isoformat(), revalidate_after(on, days),
                        body_hash(text), references(text, record.provenance)), record


def test_fresh_right_after_validation_and_never_validated_is_unverified_not_stale():
    verification, record = _validated()
    state = freshness(verification, PAGE, record.provenance, DAY)
    assert state.fresh and state.triggers == () and state.due_in_days == 90
    assert freshness(Verification(), PAGE, record.provenance, DAY).state == "unverified"


def test_content_changed_when_the_body_differs():
    verification, record = _validated()
    edited = PAGE.replace("Body", "A new body")
    assert freshness(verification, edited, record.provenance, DAY).triggers == \
        ("content_changed",)
    # frontmatter edits alone are not content changes
    retitled = PAGE.replace("title: A", "title: B")
    assert freshness(verification, retitled, record.provenance, DAY).fresh


def test_references_changed_when_the_cited_sources_differ():
    verification, record = _validated()
    other = read_record({"sources": [{"path": "b.md"}]})
    state = freshness(verification, PAGE, other.provenance, DAY)
    assert state.state == "stale" and state.triggers == ("references_changed",)


def test_age_expired_after_revalidate_after_90_days_by_default_or_as_configured():
    verification, record = _validated()
    assert verification.revalidate_after == "2026-04-10"
    assert freshness(verification, PAGE, record.provenance, dt.date(2026, 4, 10)).fresh
    late = freshness(verification, PAGE, record.provenance, dt.date(2026, 4, 11))
    assert late.triggers == ("age_expired",) and late.due_in_days == -1
    assert settings_from_dict({}).trust.revalidate_after_days == 90
    days = settings_from_dict({"trust": {"revalidate_after_days": 30}}).trust
    assert days.revalidate_after_days == 30
    short, _ = _validated(days=days.revalidate_after_days)
    assert freshness(short, PAGE, record.provenance, dt.date(2026, 2, 10)).triggers == \
        ("age_expired",)
