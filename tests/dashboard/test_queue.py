"""The propagation queue in the dashboard (issue 19), in a real headless Chromium against a
real server: a raw note's fact changes, ingest compiles it, `propagate --plan` queues drafts
of the pages that still state the old fact; the dashboard lists each draft's passage and
reason, refuses a wrong digest with a clear message (nothing written), and applies the plan
with its digest (wiki/ changed, raw/ untouched). Text from the notes is shown as text only.
"""

from __future__ import annotations

import hashlib

import pytest

from browser_support import chromium_path, live_server, open_dashboard, shot
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    chromium_path() is None, reason="no chromium installed (apt-get install chromium; .ci/run "
                                    "does)")]

PLANS = "# Plans\n\nThe Standard plan keeps the version history of your notes for {} days.\n"
FAQ = ("# FAQ\n\nHow long is history kept? <img src=x onerror=\"window.__owned='queue'\"> The "
       "Standard plan keeps the version history of your notes for 30 days, then deletes it.\n")
GUIDE = ("# Guide\n\nOn the Standard plan the version history of your notes goes back 30 days "
         "and 30 snapshots.\n")


def _digest(folder):
    return hashlib.sha256(b"".join(p.read_bytes() for p in sorted(folder.rglob("*"))
                                   if p.is_file())).hexdigest()


def _queued_workspace(tmp_path):
    """Raw notes compiled into the wiki; then the Plans note's fact changes (30 → 60 days),
    it is compiled again, and propagation queues a plan for the FAQ and the Guide."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "plans.md").write_text(PLANS.format(30))
    (raw / "faq.md").write_text(FAQ)
    (raw / "guide.md").write_text(GUIDE)
    mg = Mindgraph(settings_from_dict({}, base_dir=tmp_path))
    mg.ingest()
    assert mg.propagation.plan().baseline
    (raw / "plans.md").write_text(PLANS.format(60))
    mg.ingest()
    planned = mg.propagation.plan()
    assert sorted(t.path for t in planned.plan.targets) == ["faq.md", "guide.md"]
    return mg, planned.plan


def test_the_queue_shows_each_draft_and_applies_only_with_its_digest(browser, tmp_path):
    mg, plan = _queued_workspace(tmp_path)
    wiki, raw = tmp_path / "wiki", tmp_path / "raw"
    raw_before, wiki_before = _digest(raw), _digest(wiki)
    with live_server(create_app(mg)) as url:
        page, watch = open_dashboard(browser, url)
        page.wait_for_selector("#queue-button:not([hidden])")
        assert page.inner_text("#queue-button") == "Queue (2)"
        page.click("#queue-button")
        card = page.locator(f'#detail .plan[data-plan="{plan.digest[:16]}.json"]')
        card.wait_for()
        assert plan.digest in card.inner_text()
        faq = card.locator('.target[data-page="faq.md"]')
        assert faq.locator(".kind").text_content() == "substituted"
        assert "for 30 days, then deletes it" in faq.locator(".passage del").inner_text()
        assert "for 60 days, then deletes it" in faq.locator(".passage ins").inner_text()
        assert "<img src=x onerror" in faq.locator(".passage del").inner_text()   # as text
        reason = faq.locator(".reason").inner_text()
        assert "now says “The Standard plan keeps the version history of your notes for 60 " \
               "days.”" in reason and "for 30 days.”" in reason
        guide = card.locator('.target[data-page="guide.md"]')
        assert guide.locator(".kind").text_content() == "marked"
        assert "Possibly outdated" in guide.locator(".passage ins").first.inner_text()
        assert any("goes back 30 days" in t for t in guide.locator(".passage .ctx").all_inner_texts())
        assert page.locator("#detail img, #detail [onerror]").count() == 0
        shot(page, "queue.png")

        card.locator(".digest-input").fill("45a9")
        card.locator(".approve-form button").click()
        assert "64 hex characters" in card.locator(".plan-status").inner_text()
        card.locator(".digest-input").fill("0" * 64)
        card.locator(".approve-form button").click()
        page.wait_for_function("() => document.querySelector('.plan-status')"
                               ".textContent.startsWith('Refused')")
        refused = card.locator(".plan-status").inner_text()
        assert refused == (f"Refused, nothing was written: the digest entered ({'0' * 16}…) is not "
                           f"this plan's digest ({plan.digest[:16]}…).")
        shot(page, "queue-refused.png")
        assert _digest(wiki) == wiki_before
        refusals = [p for p in watch.problems if "status of 400" in p]   # the browser's own
        assert len(refusals) == 1                                         # log of the refusal
        watch.problems = [p for p in watch.problems if p not in refusals]

        card.locator(".digest-input").fill(plan.digest)
        card.locator(".approve-form button").click()
        page.wait_for_selector("#detail p.muted:has-text('Nothing is waiting for approval')")
        assert page.inner_text("#queue-button") == "Queue"
        shot(page, "queue-applied.png")
        assert "for 60 days, then deletes it" in (wiki / "faq.md").read_text()
        assert "Possibly outdated" in (wiki / "guide.md").read_text()
        assert _digest(raw) == raw_before
        assert page.evaluate("window.__owned === undefined")
        assert watch.problems == []


def test_a_viewer_without_propagation_sees_no_queue(browser, tmp_path):
    """An empty queue says so; the page keeps working (no console errors)."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Home.md").write_text("# Home\n")
    with live_server(create_app(Mindgraph(settings_from_dict({}, base_dir=tmp_path)))) as url:
        page, watch = open_dashboard(browser, url + "/#queue")
        page.wait_for_selector("#detail p.muted:has-text('Nothing is waiting for approval')")
        assert page.inner_text("#queue-button") == "Queue"
        assert watch.problems == []
