"""Bounded rescans: limits.max_files and limits.max_total_bytes, reported per file, never
deleting a page, never a crash; wiki pages over limits.max_page_bytes are never read whole."""

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.config import settings_from_dict
from mindgraph.errors import ConfigError
from mindgraph.fsutil import UnreadableFile, read_bytes
from mindgraph.ingest.wikifs import WikiWriter

from ingest_helpers import tree_hashes


def ingest(workspace, *extra):
    result = CliRunner().invoke(cli, ["ingest", "-C", str(workspace), "--json", *extra],
                                catch_exceptions=False)
    return result.exit_code, json.loads(result.output)


def config(workspace, **limits):
    lines = "".join(f"  {key}: {value}\n" for key, value in limits.items())
    (workspace / "mindgraph.yml").write_text(
        "compile:\n  max_note_bytes: 1000\nlimits:\n  max_page_bytes: 5000\n" + lines)


def skipped(report):
    return {f["path"]: f["reason"] for f in report["files"] if f["status"] == "skipped"}


def test_notes_past_max_files_are_reported_and_keep_their_pages(workspace, write_raw):
    for name in ("a", "b", "c"):
        write_raw(f"{name}.md", f"Note {name} about bread.")
    write_raw("picture.png", b"\x89PNG")        # not a note: not counted
    config(workspace, max_files=5)
    assert ingest(workspace)[1]["ingested"] == 3
    config(workspace, max_files=2)
    code, report = ingest(workspace)
    assert code == 0 and report["removed"] == 0
    reason = skipped(report)["c.md"]
    assert reason.startswith("over limits.max_files (2 notes per scan); not read this run, its "
                             "page is kept. Raise limits.max_files")
    assert (workspace / "wiki" / "c.md").is_file()
    # the note waits, and comes back once the limit allows it
    write_raw("c.md", "Note c, changed.")
    config(workspace, max_files=3)
    _, report = ingest(workspace)
    assert report["ingested"] == 1 and "Note c, changed." in \
        (workspace / "wiki" / "c.md").read_text()


def test_notes_past_max_total_bytes_are_skipped_in_path_order(workspace, write_raw):
    for name in ("a", "b", "c"):
        write_raw(f"{name}.md", name * 600)
    write_raw("big.md", "x" * 5000)      # over compile.max_note_bytes: refused, not counted
    config(workspace, max_total_bytes=1300)
    code, report = ingest(workspace)
    assert code == 1                      # big.md failed, with its own reason
    assert report["ingested"] == 2
    assert skipped(report)["c.md"].startswith(
        "over limits.max_total_bytes (1,300 bytes of notes per scan; 1,200 read before it)")
    assert not (workspace / "wiki" / "c.md").exists()
    failed = [f for f in report["files"] if f["status"] == "failed"]
    assert [f["path"] for f in failed] == ["big.md"]
    assert "compile.max_note_bytes" in failed[0]["reason"]


@pytest.mark.parametrize("limits, message", [
    ({"max_files": 0}, "'limits.max_files' must be at least 1"),
    ({"max_total_bytes": 10}, "'limits.max_total_bytes' must be at least compile.max_note_bytes"),
])
def test_bad_limits_name_the_key(limits, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings_from_dict({"limits": limits})


def test_ingest_never_reads_a_wiki_page_over_max_page_bytes(workspace, write_raw, tmp_path):
    wiki = workspace / "wiki"
    wiki.mkdir()
    (wiki / "huge.md").write_bytes(b"x" * 20_000)
    writer = WikiWriter(wiki, workspace / "raw", max_bytes=10_000)
    assert writer.read("huge.md") is None
    with pytest.raises(UnreadableFile):
        read_bytes(wiki / "huge.md", max_bytes=10_000)
    # a note compiles over a hand-made giant page at its path without reading it
    write_raw("huge.md", "Now a small note.")
    raw_before = tree_hashes(workspace / "raw")
    config(workspace)
    code, report = ingest(workspace)
    assert code == 0 and report["ingested"] == 1
    assert (wiki / "huge.md").stat().st_size < 5000
    assert tree_hashes(workspace / "raw") == raw_before
