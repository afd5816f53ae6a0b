"""`mindgraph verify` plans, `--apply --approve` writes only what was approved, `runs` and
`audit` report; end to end through the CLI on a compiled workspace."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path

from click.testing import CliRunner
from trust_support import NOTES, plan_of

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.fsutil import atomic_write_bytes
from mindgraph.page.parse import parse_page
from mindgraph.trust.plan import load_plan
from mindgraph.trust.record import read_record
from mindgraph.trust.service import TrustService


def _tree(base):
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*"))
            if p.is_file() and ".mindgraph" not in p.parts}


def _record(base, rel):
    text = (base / "wiki" / rel).read_text(encoding="utf-8")
    return read_record(parse_page(text, rel).frontmatter)


def test_verify_plans_without_writing_and_prints_the_digest(compiled, mg):
    before = _tree(compiled)
    result = mg(compiled, "verify")
    assert result.exit_code == 0, result.output
    assert "checked 3 page(s) (offline:v1): pass 3, warn 0, fail 0, unverifiable 0" in \
        result.output
    digest = result.output.split("digest  ")[1].split()[0]
    assert len(digest) == 64 and f"--approve {digest}" in result.output
    assert _tree(compiled) == before
    plans = list((compiled / ".mindgraph" / "trust" / "plans").glob("*.json"))
    assert [p.name for p in plans] == [digest[:16] + ".json"]


def test_apply_with_the_digest_writes_only_the_two_keys_on_japanese_names_too(compiled, mg):
    plan = plan_of(mg, compiled)
    before = _tree(compiled)
    result = mg(compiled, "verify", "--apply", plan["plan"], "--approve", plan["digest"])
    assert result.exit_code == 0, result.output
    assert "SUCCESS / APPLIED; 3 of 3 page(s) written" in result.output
    after = _tree(compiled)
    changed = sorted(k for k in after if before.get(k) != after[k])
    assert changed == sorted(f"wiki/{p}" for p in ("Plain.md", "Sync.md", "日本語/メモ.md"))
    for rel in changed:
        old, new = before[rel].decode(), after[rel].decode()
        from mindgraph.trust.writeback import set_record_keys
        clear = {"verification": None, "evidence": None}
        assert set_record_keys(new, clear) == old
    record = _record(compiled, "日本語/メモ.md")
    assert record.label == "L2 verified" and record.evidence.status == "grounded"
    source = record.evidence.sources[0]
    assert source.ref == "raw:日本語/メモ.md" and source.claims[0].supported
    assert source.claims[0].quote == "Obsidianはノートをローカルに保存します。"
    assert all(after[f"raw/{k}"] == NOTES[k].encode() for k in NOTES)   # raw/ never written


def test_a_wrong_digest_or_a_changed_target_is_refused_and_nothing_is_written(compiled, mg):
    plan = plan_of(mg, compiled)
    before = _tree(compiled)
    wrong = mg(compiled, "verify", "--apply", plan["plan"], "--approve", "0" * 64)
    assert wrong.exit_code == 1 and "is not this plan's digest" in wrong.output
    assert _tree(compiled) == before
    page = compiled / "wiki" / "Sync.md"
    page.write_text(page.read_text() + "\nA hand edit.\n")
    before = _tree(compiled)
    changed = mg(compiled, "verify", "--apply", plan["plan"], "--approve", plan["digest"])
    assert changed.exit_code == 1 and "1 target(s) changed since planning (Sync.md)" in \
        changed.output
    assert _tree(compiled) == before
    runs = json.loads(mg(compiled, "runs", "--json").output)
    assert [(r["kind"], r["process_status"], r["result_status"]) for r in runs] == [
        ("plan", "SUCCESS", "PLANNED"), ("apply", "FAILED", "DISCARDED"),
        ("apply", "FAILED", "DISCARDED")]


def test_a_plan_applies_once_then_is_consumed(compiled, mg):
    plan = plan_of(mg, compiled)
    args = ("verify", "--apply", plan["plan"], "--approve", plan["digest"])
    assert mg(compiled, *args).exit_code == 0
    again = mg(compiled, *args)
    assert again.exit_code == 1 and "plan already applied" in again.output
    assert "CONSUMED / DISCARDED" in again.output
    listing = mg(compiled, "runs").output.splitlines()
    assert [line.split()[2:5] for line in listing] == [
        ["plan", "SUCCESS", "PLANNED"], ["apply", "SUCCESS", "APPLIED"],
        ["apply", "CONSUMED", "DISCARDED"]]


def test_verifying_again_the_same_day_has_nothing_to_write(compiled, mg):
    plan = plan_of(mg, compiled)
    assert mg(compiled, "verify", "--apply", plan["plan"], "--approve",
              plan["digest"]).exit_code == 0
    again = mg(compiled, "verify")
    assert again.exit_code == 0 and "unchanged 3" in again.output
    assert "nothing to write: 3 page(s) already hold these records; no plan saved." in \
        again.output
    page = compiled / "wiki" / "Plain.md"
    page.write_text(page.read_text().replace("canvases", "boards"))
    changed = plan_of(mg, compiled)
    assert [t["path"] for t in changed["verdicts"]] == ["Plain.md"] and \
        changed["unchanged"] == 2


def test_scope_check_failure_is_failed_with_data_provisionally_retained(compiled, mg):
    """A writer that also writes a file outside the plan (named in NFD, as macOS writes
    Japanese names): the run is FAILED / PROVISIONAL_RETAIN, never SUCCESS, and the ledger
    names the file by its decoded NFC path, not an escaped one."""
    plan = plan_of(mg, compiled, "Sync.md", "日本語")
    stray = compiled / "wiki" / "日本語" / unicodedata.normalize("NFD", "ガイド.md")

    def leaky_write(path, data):
        atomic_write_bytes(path, data)
        stray.write_bytes(b"stray\n")

    service = TrustService(load_settings(compiled))
    result = service.apply(plan["plan"], plan["digest"], write=leaky_write)
    run = result.run
    assert not result.applied
    assert (run.process_status, run.result_status) == ("FAILED", "PROVISIONAL_RETAIN")
    assert run.written == ("Sync.md", "日本語/メモ.md")
    assert [p.rsplit("/wiki/", 1)[1] for p in run.outside_scope] == ["日本語/ガイド.md"]
    assert _record(compiled, "Sync.md").label == "L2 verified"      # retained, not undone
    listed = mg(compiled, "runs").output
    assert "FAILED    PROVISIONAL_RETAIN" in listed and "scope check failed" in listed


def test_a_contradicted_claim_is_disputed_and_the_audit_lists_it(compiled, mg):
    page = compiled / "wiki" / "Sync.md"
    page.write_text(page.read_text().replace("12 months", "24 months"))
    planned = mg(compiled, "verify", "Sync.md")
    assert "fail         Sync.md: 1/2 claims supported → L0 disputed" in planned.output
    plan = plan_of(mg, compiled, "Sync.md")
    assert mg(compiled, "verify", "--apply", plan["plan"], "--approve",
              plan["digest"]).exit_code == 0
    claims = _record(compiled, "Sync.md").evidence.sources[0].claims
    assert [(c.verdict, c.quote) for c in claims] == [
        ("contradicted", "Sync keeps 12 months of version history."),
        ("supported", "Each vault holds up to 10 GB.")]
    audit = json.loads(mg(compiled, "audit", "--json").output)
    assert audit["disputed"] == ["Sync.md"] and audit["by_status"] == {"disputed": 1,
                                                                       "unverified": 2}


def test_an_unknown_page_is_a_clear_error(compiled, mg):
    result = mg(compiled, "verify", "Nope.md")
    assert result.exit_code == 2 and "no wiki page or folder Nope.md" in result.output


def test_verify_takes_a_page_title_as_get_and_links_do(compiled, mg):
    """A title, a file name or a title in another case names the page, as in `get`, `links`
    and `graph` (the same resolver); a path and a folder still work; a near miss says what
    was meant."""
    by_path = plan_of(mg, compiled, "Sync.md")
    for name in ("Sync", "sync", "メモ"):
        planned = plan_of(mg, compiled, name)
        assert planned["targets"] == 1, name
        page = "Sync.md" if name.lower() == "sync" else "日本語/メモ.md"
        assert [v["path"] for v in planned["verdicts"]] == [page]
    assert [v["path"] for v in by_path["verdicts"]] == ["Sync.md"]
    assert plan_of(mg, compiled, "日本語")["targets"] == 1
    both = plan_of(mg, compiled, "Sync", "Plain")
    assert sorted(v["path"] for v in both["verdicts"]) == ["Plain.md", "Sync.md"]
    near = mg(compiled, "verify", "Synk")
    assert near.exit_code == 2 and "no wiki page or folder Synk" in near.output
    assert "Did you mean: Sync.md?" in near.output


def test_a_tampered_plan_cannot_write_outside_wiki(compiled, mg, tmp_path_factory):
    """A plan edited after it was printed, aiming the write-back at a raw note (``..``), at a
    file outside the workspace (an absolute path: a shell's rc file) or through a symlink in
    wiki/ that leads out, with the current hashes and its own digest: refused before any
    write (FAILED / DISCARDED), every file as it was."""
    outside = tmp_path_factory.mktemp("home") / "victim.rc"
    outside.write_text("echo hello\n")
    (compiled / "wiki" / "out").symlink_to(outside.parent, target_is_directory=True)
    (outside.parent / "notes.md").write_text("# Notes\n")
    plan = plan_of(mg, compiled, "Sync.md")
    path = Path(plan["plan"])
    data = json.loads(path.read_text(encoding="utf-8"))
    record = {"$(touch pwned)": "x"}
    for aim in ("../raw/Sync.md", str(outside), "out/notes.md", "../mindgraph.yml"):
        file = (compiled / "wiki" / aim)
        data["targets"][0] |= {"path": aim, "verification": record,
                               "sha256": hashlib.sha256(file.read_bytes()).hexdigest()}
        path.write_text(json.dumps(data), encoding="utf-8")
        before = _tree(compiled), outside.read_bytes(), (outside.parent / "notes.md").read_bytes()
        refused = mg(compiled, "verify", "--apply", str(path), "--approve",
                     load_plan(path).digest)
        assert refused.exit_code != 0 and "not a page inside wiki/" in refused.output, aim
        assert (_tree(compiled), outside.read_bytes(),
                (outside.parent / "notes.md").read_bytes()) == before, aim
    runs = json.loads(mg(compiled, "runs", "--json").output)
    applies = {(r["process_status"], r["result_status"]) for r in runs if r["kind"] == "apply"}
    assert applies == {("FAILED", "DISCARDED")}


def test_planning_renders_no_record_only_the_write_does(compiled, mg, monkeypatch):
    """Planning a long page rendered its records to YAML (every claim with its quote) and
    parsed them back only to learn whether the page would change: half of `verify`'s CPU on
    a 3 MB page (bench/bench_verify_long_page.py). The plan compares the records as parsed;
    only --apply renders them, and a page that already holds them is still unchanged."""
    from mindgraph.trust import writeback

    rendered: list[str] = []
    real_render = writeback._render

    def counting_render(key, value, newline):
        text = real_render(key, value, newline)
        rendered.append(text)
        return text

    monkeypatch.setattr(writeback, "_render", counting_render)
    plan = plan_of(mg, compiled)
    assert len(plan["verdicts"]) == 3
    assert max(map(len, rendered)) < 60          # only small stand-ins, never a record
    rendered.clear()
    assert mg(compiled, "verify", "--apply", plan["plan"], "--approve",
              plan["digest"]).exit_code == 0
    assert any("claims:" in text for text in rendered)       # the write renders them
    again = mg(compiled, "verify")
    assert "unchanged 3" in again.output


def test_a_page_whose_frontmatter_cannot_take_the_record_is_skipped_at_planning(compiled, mg):
    page = compiled / "wiki" / "Plain.md"
    text = page.read_text(encoding="utf-8")
    page.write_text("---\n{title: Plain, tags: [a]}\n---\n" + text.split("---\n", 2)[2],
                    encoding="utf-8")
    result = mg(compiled, "verify")
    assert result.exit_code == 0, result.output
    assert "skipped      Plain.md:" in result.output and "block style" in result.output


def test_the_run_ledger_is_private_like_the_plans_beside_it(compiled, mg):
    """runs.jsonl (what each verification found, in the pages' own words) was 0644."""
    assert mg(compiled, "verify").exit_code == 0
    trust = compiled / ".mindgraph" / "trust"
    plan = next((trust / "plans").glob("*.json"))
    assert (trust / "runs.jsonl").stat().st_mode & 0o777 == 0o600 == plan.stat().st_mode & 0o777


def test_an_apply_stopped_at_a_page_names_the_pages_it_did_not_write(compiled, mg):
    plan = plan_of(mg, compiled)
    calls = []

    def failing_second(path, data):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(27, "File too large")
        atomic_write_bytes(path, data)

    run = TrustService(load_settings(compiled)).apply(plan["plan"], plan["digest"],
                                                      write=failing_second).run
    assert (run.written, run.not_written) == (("Plain.md",), ("Sync.md", "日本語/メモ.md"))
    assert run.to_dict()["not_written"] == ["Sync.md", "日本語/メモ.md"]
    listed = mg(compiled, "runs").output.splitlines()[-1]
    assert "PROVISIONAL_RETAIN     1 of 3 page(s) written" in listed


def test_apply_refuses_a_page_its_record_would_take_past_max_page_bytes(tmp_path, mg):
    """The record took a 927-byte page to 4,504 bytes under a 1,000-byte limit: written, and
    then no command could read the page (`get` said there was none)."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Plain.md").write_text("# Plain\n\nA plain note about canvases.\n")
    (tmp_path / "raw" / "Big.md").write_text("# Big\n\nSync keeps 12 months of version "
                                             "history.\n\n" + "Canvas text line here.\n" * 25)
    (tmp_path / "mindgraph.yml").write_text("compile:\n  max_note_bytes: 1000\nlimits:\n"
                                            "  max_page_bytes: 1000\n")
    assert mg(tmp_path, "ingest").exit_code == 0
    before = _tree(tmp_path)
    plan = plan_of(mg, tmp_path)
    refused = CliRunner().invoke(cli, ["verify", "-C", str(tmp_path), "--apply", plan["plan"],
                                       "--approve", plan["digest"]])
    assert refused.exit_code == 1
    assert "FAILED / DISCARDED; 0 of 2 page(s) written" in refused.stdout
    assert refused.stderr.startswith("Error: Big.md (")
    assert ("bytes) would be over limits.max_page_bytes (1,000), which no command would read. "
            "Split the page, or raise limits.max_page_bytes in mindgraph.yml") in refused.stderr
    assert _tree(tmp_path) == before                            # Plain.md is not written either
    (tmp_path / "mindgraph.yml").write_text("compile:\n  max_note_bytes: 1000\nlimits:\n"
                                            "  max_page_bytes: 10000\n")
    again = mg(tmp_path, "verify", "--apply", plan["plan"], "--approve", plan["digest"])
    assert again.exit_code == 0 and "SUCCESS / APPLIED; 2 of 2" in again.output
