"""A workspace whose raw/ is a vault outside it (`paths: {raw: ../vault}`, as the README
allows): what a new user meets on the first run, through the CLI."""

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


@pytest.fixture
def ws(tmp_path):
    vault = tmp_path / "vault"
    (vault / "people").mkdir(parents=True)
    (vault / "Home.md").write_text("# Home\n\nSee [[Bob]] and [[Alice]].\n")
    (vault / "people" / "Alice.md").write_text("# Alice\n\nAlice works with Bob.\n")
    (vault / "people" / "Bob.md").write_text("---\ntags: [people\n---\n# Bob\n\nBob is here.\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "mindgraph.yml").write_text("paths:\n  raw: ../vault\n")
    assert run("ingest", "-C", str(workspace)).exit_code in (0, 1)
    return workspace


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_lint_accepts_provenance_sources_in_a_raw_folder_outside_the_workspace(ws):
    page = (ws / "wiki" / "Home.md").read_text()
    assert "Home.md" in page.split("---")[1]        # the compiler recorded its source
    result = run("lint", "-C", str(ws), "--json")
    findings = json.loads(result.stdout)["findings"]
    assert [f for f in findings if f["rule"] == "dangling-reference"] == []


def test_get_and_check_say_a_note_failed_to_compile_rather_than_no_page(ws):
    got = run("get", "Bob", "-C", str(ws))
    assert got.exit_code == 1
    assert "people/Bob.md exists but failed to compile" in got.output
    assert "frontmatter is not valid YAML" in got.output and "Search for it" not in got.output
    check = json.loads(run("check", "-C", str(ws), "--json").stdout)
    broken = [f for f in check["findings"] if f["kind"] == "broken-link"]
    assert len(broken) == 1 and "[[Bob]]" in broken[0]["message"]
    assert "people/Bob.md exists but failed to compile" in broken[0]["message"]
    assert "fix the link's spelling" not in broken[0]["message"]
    assert "No page named 'Nobody'" in run("get", "Nobody", "-C", str(ws)).output


def test_a_failed_note_deleted_since_is_not_said_to_exist(ws):
    """Deleted from the vault after the run that failed it (the next run not yet made, or
    held by the removal guard): `get` and `check` said it "exists but failed to compile"."""
    (ws.parent / "vault" / "people" / "Bob.md").unlink()
    got = run("get", "Bob", "-C", str(ws))
    assert got.exit_code == 1 and "No page named 'Bob'" in got.output
    assert "exists but failed to compile" not in got.output
    check = json.loads(run("check", "-C", str(ws), "--json").stdout)
    assert not any("exists but failed to compile" in f["message"] for f in check["findings"])
    assert any(f["kind"] == "raw-gone" for f in check["findings"])


def test_the_pages_of_notes_deleted_during_a_held_run_have_their_findings_named_by_raw_path(
        tmp_path):
    """Every note deleted: the ingest is held (removal guard) and the pages stay. `check`
    reported their broken links at the wiki pages (Home.md:19), a place nobody fixes, for
    notes that no longer exist; now one raw-gone warning per such page names its note."""
    ws = tmp_path / "ws"
    (ws / "raw").mkdir(parents=True)
    (ws / "raw" / "Home.md").write_text("# Home\n\nSee [[Nowhere]] and [[Alice]].\n")
    (ws / "raw" / "Alice.md").write_text("# Alice\n\nAlice works with [[Bob]].\n")
    assert run("ingest", "-C", str(ws)).exit_code == 0
    before = json.loads(run("check", "-C", str(ws), "--json").stdout)
    assert before["counts"]["broken-link"] == 2
    for note in ("Home.md", "Alice.md"):
        (ws / "raw" / note).unlink()
    held = run("ingest", "-C", str(ws))
    assert held.exit_code != 0 and "ingest held" in held.output
    check = json.loads(run("check", "-C", str(ws), "--json").stdout)
    assert check["counts"] == {"raw-gone": 2} and check["errors"] == 0
    gone = {f["raw_path"]: f["message"] for f in check["findings"]}
    assert set(gone) == {"Home.md", "Alice.md"}
    assert "findings of its page (1 error, 1 warning) are not reported" in gone["Home.md"]
    assert "restore raw/Alice.md" in gone["Alice.md"]
    assert gone["Alice.md"].endswith("drops its record and its page Alice.md.")
    text = run("check", "-C", str(ws)).output
    assert "raw/Home.md: deleted from raw/" in text and "Home.md:19" not in text
