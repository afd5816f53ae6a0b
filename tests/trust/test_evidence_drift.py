"""DESIGN: a note becomes stale when its references change. A page verified against a local
file it cites stayed a fresh, grounded L2 after that file was edited to say otherwise: only the
set of cited sources was compared. Through the CLI: verify, apply, edit the file, then audit,
stats, search and `verify --due` all say the page is stale; the file put back, fresh again."""

from __future__ import annotations

import json

from trust_support import plan_of

POLICY = "The free plan allows 3 devices per account.\nPayments are monthly.\n"


def test_an_edited_evidence_file_makes_the_page_citing_it_stale(tmp_path, mg):
    (tmp_path / "raw" / "docs").mkdir(parents=True)
    (tmp_path / "raw" / "docs" / "policy.txt").write_text(POLICY)
    (tmp_path / "raw" / "Plans.md").write_text(
        "# Plans\n\nThe free plan allows 3 devices per account, as "
        "[the policy](docs/policy.txt) says.\n")
    (tmp_path / "raw" / "Other.md").write_text("# Other\n\nNothing cited here at all.\n")
    assert mg(tmp_path, "ingest").exit_code == 0
    plan = plan_of(mg, tmp_path, "Plans.md", "Other.md")
    assert mg(tmp_path, "verify", "--apply", plan["plan"], "--approve",
              plan["digest"]).exit_code == 0

    def audit() -> dict:
        return json.loads(mg(tmp_path, "audit", "--json").output)

    assert audit()["fresh_l2"] == 2
    policy = tmp_path / "raw" / "docs" / "policy.txt"
    policy.write_text(POLICY.replace("3 devices", "1 device"))
    report = audit()
    assert report["fresh_l2"] == 1
    assert report["stale_by_trigger"]["references_changed"] == 1
    assert "stale 1 (references_changed 1)" in mg(tmp_path, "stats").output
    found = json.loads(mg(tmp_path, "search", "free plan devices", "--json").output)
    trust = {r["page"]: r["trust"] for r in found["results"]}
    assert trust["Plans.md"]["freshness"] == "stale"
    assert trust["Plans.md"]["stale"] == ["references_changed"]
    due = plan_of(mg, tmp_path, "--due")
    # docs/policy.md, its own page, never verified, is due too; Other.md is not
    assert sorted(t["path"] for t in due["verdicts"]) == ["Plans.md", "docs/policy.md"]

    policy.write_text(POLICY)                       # put back: what was checked, fresh again
    assert audit()["fresh_l2"] == 2
