"""`stats` and `check` report the trust mix (levels, statuses, fresh and stale pages);
`check` warns of each disputed page, naming it, the contradicted claim and the fix."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from trust_support import LOCAL, plan_of

from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app


def _apply(mg, base, *pages):
    plan = plan_of(mg, base, *pages)
    assert mg(base, "verify", "--apply", plan["plan"], "--approve",
              plan["digest"]).exit_code == 0


def _dispute_sync_and_verify_plain(mg, base):
    """Sync.md disputed (a number changed by hand), Plain.md verified then edited (stale)."""
    page = base / "wiki" / "Sync.md"
    page.write_text(page.read_text().replace("12 months", "24 months"))
    _apply(mg, base, "Sync.md", "Plain.md")
    plain = base / "wiki" / "Plain.md"
    plain.write_text(plain.read_text() + "\nA line added after verification.\n")


MIX = {"by_level": {"L0": 2, "L1": 0, "L2": 1, "L3": 0},
       "by_status": {"unverified": 1, "reviewed": 0, "verified": 1, "disputed": 1},
       "fresh": 1, "stale": 1, "unverified": 1,
       "stale_by_trigger": {"content_changed": 1, "references_changed": 0, "age_expired": 0}}


def test_stats_reports_the_trust_mix_on_the_cli_and_rest(compiled, mg):
    _dispute_sync_and_verify_plain(mg, compiled)
    result = mg(compiled, "stats")
    assert result.exit_code == 0
    assert ("trust     L0 2, L1 0, L2 1, L3 0; unverified 1, reviewed 0, verified 1, "
            "disputed 1; fresh 1, stale 1 (content_changed 1)") in result.output
    assert json.loads(mg(compiled, "stats", "--json").output)["trust"] == MIX
    client = TestClient(create_app(Mindgraph(load_settings(compiled))), base_url=LOCAL)
    assert client.get("/stats").json()["trust"] == MIX
    checked = client.get("/check").json()
    assert checked["trust"] == MIX and checked["counts"]["disputed"] == 1


def test_check_warns_of_a_disputed_page_at_its_claim_and_says_the_fix(compiled, mg):
    _dispute_sync_and_verify_plain(mg, compiled)
    result = mg(compiled, "check", "--limit", "0")
    line = next(n for n, text in enumerate(
        (compiled / "wiki" / "Sync.md").read_text().split("\n"), start=1)
        if text == "Sync keeps 24 months of version history.")
    assert (f"warning disputed         Sync.md:{line}: verification found a claim its "
            f"evidence contradicts: \"Sync keeps 24 months of version history.\" against "
            f"raw:Sync.md: \"Sync keeps 12 months of version history.\". Correct the claim "
            f"(or the evidence, if it is what is wrong), then run `mindgraph verify Sync.md`."
            ) in result.output
    assert "trust: L0 2, L1 0, L2 1, L3 0;" in result.output
    report = json.loads(mg(compiled, "check", "--json").output)
    assert report["trust"] == MIX
    assert [f["path"] for f in report["findings"] if f["kind"] == "disputed"] == ["Sync.md"]
    assert report["counts"]["disputed"] == 1
    # a disputed page is a warning, not an error: --strict does not fail on it alone
    assert not [f for f in report["findings"] if f["severity"] == "error"]


def test_check_warns_of_an_unreadable_trust_record(compiled, mg):
    page = compiled / "wiki" / "Plain.md"
    page.write_text(page.read_text().replace("---\n", "---\nverification: yes\n", 1))
    report = json.loads(mg(compiled, "check", "--json").output)
    [finding] = [f for f in report["findings"] if f["kind"] == "trust-record"]
    assert finding["path"] == "Plain.md"
    assert "verification is not a mapping" in finding["message"]
    assert "mindgraph verify Plain.md" in finding["message"]
