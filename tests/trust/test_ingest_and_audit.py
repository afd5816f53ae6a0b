"""Ingest keeps the trust record; the audit counts coverage, staleness and what is due;
`verify --due` picks only what needs it."""

from __future__ import annotations

import datetime as dt
import json

from trust_support import plan_of

from mindgraph.config import load_settings
from mindgraph.page.parse import parse_page
from mindgraph.trust.record import read_record
from mindgraph.trust.service import TrustService


def _apply(mg, base, *pages):
    plan = plan_of(mg, base, *pages)
    assert mg(base, "verify", "--apply", plan["plan"], "--approve",
              plan["digest"]).exit_code == 0
    return plan


def _freshness(base, rel, today=None):
    service = TrustService(load_settings(base), today=today)
    page = next(p for p in service.pages([rel]))
    return page.record, service.freshness(page)


def test_a_recompile_with_unchanged_content_keeps_the_record_fresh(compiled, mg):
    _apply(mg, compiled)
    before = (compiled / "wiki" / "Sync.md").read_bytes()
    result = mg(compiled, "ingest", "--force")
    assert result.exit_code == 0 and "edited by hand" not in result.output
    assert (compiled / "wiki" / "Sync.md").read_bytes() == before
    record, fresh = _freshness(compiled, "Sync.md")
    assert record.label == "L2 verified" and fresh.fresh


def test_a_recompile_that_changes_the_content_keeps_the_old_record_but_is_stale(compiled, mg):
    _apply(mg, compiled)
    old = _freshness(compiled, "Sync.md")[0]
    (compiled / "raw" / "Sync.md").write_text("# Sync\n\nSync keeps 1 month of history.\n")
    result = mg(compiled, "ingest")
    assert result.exit_code == 0 and "edited by hand" not in result.output, result.output
    record, fresh = _freshness(compiled, "Sync.md")
    assert record.verification == old.verification and record.evidence == old.evidence
    assert fresh.state == "stale" and "content_changed" in fresh.triggers


def test_a_raw_note_cannot_forge_a_trust_record(compiled, mg):
    (compiled / "raw" / "Forged.md").write_text(
        "---\nverification:\n  status: verified\n  level: 3\nevidence:\n  status: grounded\n"
        "---\nClaims nobody checked.\n")
    assert mg(compiled, "ingest").exit_code == 0
    text = (compiled / "wiki" / "Forged.md").read_text()
    assert read_record(parse_page(text, "Forged.md").frontmatter).label == "L0 unverified"


def test_audit_figures_threshold_and_fail_under(compiled, mg):
    _apply(mg, compiled, "Sync.md", "日本語")
    before = {p: p.read_bytes() for p in compiled.rglob("*") if p.is_file()}
    audit = json.loads(mg(compiled, "audit", "--json").output)
    assert {p: p.read_bytes() for p in compiled.rglob("*") if p.is_file()} == before  # read-only
    assert {k: audit[k] for k in ("pages", "evidence_capable", "fresh_l2", "coverage_pct",
                                  "threshold_count", "surplus")} == {
        "pages": 3, "evidence_capable": 3, "fresh_l2": 2, "coverage_pct": 66.67,
        "threshold_count": 3, "surplus": -1}
    assert audit["due"] == {"overdue": 0, "7d": 0, "8-14d": 0, "15-30d": 0, ">30d": 2}
    text = mg(compiled, "audit").output
    assert "coverage          66.67%" in text and "threshold         3 (80%), surplus -1" in text
    # under the threshold, the text says what to run next (it gave the figures alone)
    assert ("next              the threshold needs 1 more fresh L2 page(s): run `mindgraph "
            "verify --due`") in text
    assert mg(compiled, "audit", "--fail-under", "60").exit_code == 0
    failing = mg(compiled, "audit", "--fail-under", "70")
    assert failing.exit_code == 1 and "under --fail-under 70%" in failing.output


def test_audit_counts_stale_pages_by_trigger_and_due_buckets(compiled, mg):
    _apply(mg, compiled)
    page = compiled / "wiki" / "Plain.md"
    page.write_text(page.read_text().replace("canvases", "boards"))
    later = TrustService(load_settings(compiled),
                         today=lambda: dt.date.today() + dt.timedelta(days=85))
    report = later.audit()
    assert report.stale == {"content_changed": 1, "references_changed": 0, "age_expired": 0}
    assert report.due["7d"] == 3 and report.fresh_l2 == 2
    expired = TrustService(load_settings(compiled),
                           today=lambda: dt.date.today() + dt.timedelta(days=91)).audit()
    assert expired.stale["age_expired"] == 3 and expired.fresh_l2 == 0
    assert expired.due["overdue"] == 3


def test_verify_due_picks_only_stale_or_due_pages(compiled, mg):
    _apply(mg, compiled, "Sync.md", "Plain.md")
    page = compiled / "wiki" / "Plain.md"
    page.write_text(page.read_text().replace("canvases", "boards"))
    due = plan_of(mg, compiled, "--due")
    assert sorted(t["path"] for t in due["verdicts"]) == ["Plain.md", "日本語/メモ.md"]
