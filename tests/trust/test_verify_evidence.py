"""`mindgraph verify` with cited evidence: URLs from a real local HTTP server (fetched only
with --fetch or trust.fetch_urls, else read from the cache), local files linked from a note,
and what an offline run lacked."""

from __future__ import annotations

import json

from trust_support import Route, evidence_server, plan_of

HUMAN = ("---\ntitle: Retention\n---\n# Retention\n\n"
         "[Deleted notes stay in the trash for 30 days]({url}/retention).\n\n"
         "- Restoring a note puts it back in its folder.\n")
EVIDENCE = ("<html><body><h1>Retention</h1><p>Deleted notes stay in the trash for 30 days."
            "</p><ul><li>Restoring a note puts it back in its folder.</li></ul></body></html>")


def _human_page(base, url):
    (base / "wiki" / "Retention.md").write_text(HUMAN.format(url=url), encoding="utf-8")


def _verdict(plan, path):
    return next(v for v in plan["verdicts"] if v["path"] == path)


def _url_source(verdict):
    return next(s for s in verdict["evidence"]["sources"] if s["kind"] == "url")


def test_a_page_whose_only_evidence_is_an_unfetched_url_stays_l1(compiled, mg):
    with evidence_server({"/retention": Route(EVIDENCE)}) as (base_url, hits):
        _human_page(compiled, base_url)
        result = mg(compiled, "verify", "Retention.md")
        assert result.exit_code == 0, result.output
        assert "→ L1 reviewed" in result.output
        assert "records  L1 reviewed 1" in result.output
        assert "  lacked       1 source(s) on 1 page(s): not fetched: URL fetching is off " \
               "(`mindgraph verify --fetch`, or trust.fetch_urls: true) and no copy is " \
               "cached\n" in result.output
        assert f"               {base_url}/retention (Retention.md)\n" in result.output
        assert "evidence url lacked 1" in result.output
        assert hits == {}                          # off by default: nothing was requested
        verdict = _verdict(plan_of(mg, compiled, "Retention.md"), "Retention.md")
        assert (verdict["verification"]["status"], verdict["verification"]["level"],
                verdict["evidence"]["status"]) == ("reviewed", 1, "unavailable")
        assert _url_source(verdict)["reason"].startswith("not fetched")


def test_fetch_grounds_the_page_and_a_later_offline_run_uses_the_cached_copy(compiled, mg):
    with evidence_server({"/retention": Route(EVIDENCE)}) as (base_url, hits):
        _human_page(compiled, base_url)
        fetched = plan_of(mg, compiled, "Retention.md", "--fetch")
        assert hits == {"/retention": 1}
    verdict = _verdict(fetched, "Retention.md")
    assert verdict["verdict"] == "pass"
    assert (verdict["verification"]["status"], verdict["verification"]["level"]) == \
        ("verified", 2)
    source = _url_source(verdict)
    assert source["available"] and source["sha256"]
    assert [c["supported"] for c in source["claims"]] == [True, True]
    assert fetched["evidence"] == {"url read": 1}
    # the server is gone: the offline run checks against what was fetched before
    offline = plan_of(mg, compiled, "Retention.md")
    again = _verdict(offline, "Retention.md")
    assert offline["evidence"] == {"url cached": 1}
    assert again["verification"]["level"] == 2 and _url_source(again)["sha256"] == \
        source["sha256"]


def test_config_turns_fetching_on_and_a_slow_server_times_out(compiled, mg):
    (compiled / "mindgraph.yml").write_text(
        "paths:\n  raw: raw\ntrust:\n  fetch_urls: true\n  fetch_timeout_s: 0.5\n"
        "  fetch_private_hosts: true\n")
    with evidence_server({"/retention": Route(EVIDENCE, delay_s=3)}) as (base_url, hits):
        _human_page(compiled, base_url)
        verdict = _verdict(plan_of(mg, compiled, "Retention.md"), "Retention.md")
        assert hits == {"/retention": 1}
        assert "timed out after 0.5 s" in _url_source(verdict)["reason"]
        assert verdict["verification"]["level"] == 1
        # --no-fetch overrides the configuration for one run
        plan_of(mg, compiled, "Retention.md", "--no-fetch")
        assert hits == {"/retention": 1}


def test_a_compiled_page_citing_an_unfetched_url_is_reviewed_not_verified(compiled, mg):
    with evidence_server({"/sync": Route("<p>Sync keeps 12 months of version history.</p>")}) \
            as (base_url, _):
        (compiled / "raw" / "Cited.md").write_text(
            f"# Cited\n\nSync keeps 12 months of version history ({base_url}/sync).\n")
        assert mg(compiled, "ingest").exit_code == 0
        offline = _verdict(plan_of(mg, compiled, "Cited.md"), "Cited.md")
        online = _verdict(plan_of(mg, compiled, "Cited.md", "--fetch"), "Cited.md")
    # every claim rests on the raw note either way; what was cited but not read is partial
    assert offline["verdict"] == online["verdict"] == "pass"
    assert (offline["verification"]["status"], offline["evidence"]["status"]) == \
        ("reviewed", "partial")
    assert (online["verification"]["status"], online["evidence"]["status"]) == \
        ("verified", "grounded")


def test_a_linked_local_file_is_evidence_and_one_outside_the_workspace_is_not_read(
        compiled, mg, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.txt"
    outside.write_text("Deleted notes stay in the trash for 30 days.")
    (compiled / "raw" / "docs").mkdir()
    (compiled / "raw" / "docs" / "trash.txt").write_text(
        "Deleted notes stay in the trash for 30 days.\n")
    (compiled / "wiki" / "Trash.md").write_text(
        "# Trash\n\n[Deleted notes stay in the trash for 30 days](../raw/docs/trash.txt).\n")
    (compiled / "wiki" / "Leak.md").write_text(
        f"# Leak\n\n[Deleted notes stay in the trash for 30 days]"
        f"(../../{outside.parent.name}/secret.txt).\n")
    plan = plan_of(mg, compiled, "Trash.md", "Leak.md")
    trash, leak = _verdict(plan, "Trash.md"), _verdict(plan, "Leak.md")
    assert (trash["verdict"], trash["verification"]["status"],
            trash["verification"]["level"]) == ("pass", "verified", 2)
    [checked] = trash["evidence"]["sources"]
    assert (checked["kind"], checked["ref"], checked["available"]) == \
        ("file", "file:../raw/docs/trash.txt", True)
    assert checked["claims"] == [{
        "claim": "Deleted notes stay in the trash for 30 days.", "supported": True,
        "verdict": "supported", "quote": "Deleted notes stay in the trash for 30 days."}]
    source = leak["evidence"]["sources"][0]
    assert source["ref"].startswith("file:") and not source["available"]
    assert "outside the workspace" in source["reason"]
    assert leak["verification"]["level"] == 1
    assert "file:../raw/docs/trash.txt" in trash["verification"]["references"]
    assert json.dumps(plan).count("a secret") == 0


def test_l3_on_the_real_cli_when_every_claim_is_mapped_to_a_primary_source(compiled, mg):
    (compiled / "mindgraph.yml").write_text(
        "paths:\n  raw: raw\ntrust:\n  primary_sources: ['raw:policies/*']\n")
    (compiled / "raw" / "policies").mkdir()
    (compiled / "raw" / "policies" / "Trash.md").write_text(
        "# Trash\n\nDeleted notes stay in the trash for 30 days.\n")
    assert mg(compiled, "ingest").exit_code == 0
    plan = plan_of(mg, compiled, "policies/Trash.md", "Sync.md")
    trash, sync = _verdict(plan, "policies/Trash.md"), _verdict(plan, "Sync.md")
    assert (trash["verification"]["status"], trash["verification"]["level"]) == \
        ("verified", 3)
    assert (sync["verification"]["status"], sync["verification"]["level"]) == ("verified", 2)


def test_fetch_refuses_a_local_server_by_default_and_reads_it_when_allowed(compiled, mg):
    (compiled / "mindgraph.yml").write_text("paths:\n  raw: raw\n")       # the defaults
    with evidence_server({"/retention": Route(EVIDENCE), "/away": Route(
            status=302, headers={"Location": "/retention"})}) as (base_url, hits):
        port = base_url.rsplit(":", 1)[1]
        (compiled / "wiki" / "Retention.md").write_text(
            HUMAN.format(url=base_url) + f"\n- [The same](http://0x7f.0.0.1:{port}/retention) "
            f"and [away]({base_url}/away).\n", encoding="utf-8")
        result = mg(compiled, "verify", "--fetch")
        assert result.exit_code == 0, result.output        # the run goes on, page by page
        verdict = _verdict(plan_of(mg, compiled, "Retention.md", "--fetch"), "Retention.md")
        reasons = {s["ref"]: s["reason"] for s in verdict["evidence"]["sources"]
                   if s["kind"] == "url"}
        assert hits == {}                                   # never connected
        assert reasons[f"{base_url}/retention"] == (
            "127.0.0.1 is a loopback address: verify fetches public addresses only (set "
            "trust.fetch_private_hosts: true to allow the private network)")
        assert reasons[f"http://0x7f.0.0.1:{port}/retention"].startswith(
            "0x7f.0.0.1 resolves to 127.0.0.1, a loopback address")
        assert "a loopback address" in reasons[f"{base_url}/away"]
        assert verdict["verification"]["level"] == 1
        assert "trust.fetch_private_hosts: true" in result.output
        (compiled / "mindgraph.yml").write_text("paths:\n  raw: raw\ntrust:\n"
                                                "  fetch_private_hosts: true\n")
        allowed = _verdict(plan_of(mg, compiled, "Retention.md", "--fetch"), "Retention.md")
        assert hits["/retention"] >= 1
        assert allowed["verification"]["level"] == 2


def test_every_run_prunes_the_evidence_cache_by_age_then_by_size(compiled, mg):
    import datetime as dt
    import os

    from mindgraph.trust.fetch.base import Fetched
    from mindgraph.trust.fetch.cache import EvidenceCache

    cache = EvidenceCache(compiled / ".mindgraph")
    today = dt.date.today()
    ages = {"https://old.example/a": 400, "https://mid.example/b": 30,
            "https://new.example/c": 1, "https://new.example/same-text": 1}
    for n, (url, days) in enumerate(ages.items()):
        cache.put(url, Fetched.of("x" * 3000))            # one text, four entries
        entry = cache._entry(url)
        data = json.loads(entry.read_text())
        entry.write_text(json.dumps(data | {"fetched": str(today - dt.timedelta(days=days))}))
        os.utime(entry, ns=(n * 10**9, n * 10**9))
    cache.put("https://other.example/d", Fetched.of("y" * 3000))
    (cache.root / "urls" / "broken.json").write_text("{not json")
    (cache.root / "texts" / ("0" * 64 + ".txt")).write_text("an orphan")
    # defaults: only the copy past 365 days, the unreadable entry and the orphan go
    assert mg(compiled, "verify").exit_code == 0
    assert {u for u in [*ages, "https://other.example/d"] if cache.get(u)} == \
        set(ages) - {"https://old.example/a"} | {"https://other.example/d"}
    assert sorted(p.name for p in (cache.root / "urls").iterdir()) == sorted(
        cache._entry(u).name for u in [*ages, "https://other.example/d"]
        if u != "https://old.example/a")
    assert len(list((cache.root / "texts").iterdir())) == 2
    # a cap that holds two texts and their entries: the oldest go first; a text two entries
    # share stays while one names it
    (compiled / "mindgraph.yml").write_text("paths:\n  raw: raw\ntrust:\n"
                                            "  evidence_cache_max_bytes: 6500\n")
    assert mg(compiled, "verify").exit_code == 0
    kept = {u for u in [*ages, "https://other.example/d"] if cache.get(u)}
    assert kept == {"https://new.example/c", "https://new.example/same-text",
                    "https://other.example/d"}
    assert len(list((cache.root / "texts").iterdir())) == 2
