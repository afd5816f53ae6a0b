"""One watcher run, without the watcher's threads: what it leaves indexed decides whether the
events of its own writes, which reach the watcher after it, count as changes."""

import os

from sync_support import make_workspace

from mindgraph.core import Mindgraph
from mindgraph.sync.digests import real_changes
from mindgraph.sync.paths import RAW, WIKI, Change
from mindgraph.sync.run import sync_run

NOTES = {"Trunks.md": "# Trunks\nA trunk holds clothes. See [[Wheels]].\n",
         "Wheels.md": "# Wheels\nWheels make a trunk roll.\n"}


def test_a_rename_run_leaves_its_own_page_writes_as_touches(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    mg = Mindgraph.open(base)
    indexed: dict[str, str] = {}
    sync_run(mg, [], trigger="start", indexed=indexed)
    assert set(indexed) == {"Trunks.md", "Wheels.md"}
    os.rename(base / "raw" / "Wheels.md", base / "raw" / "Casters.md")
    record = sync_run(mg, [Change(RAW, "Casters.md"), Change(RAW, "Wheels.md")],
                      indexed=indexed)
    assert record.error is None and record.moved == [{"from": "Wheels.md", "to": "Casters.md"}]
    assert not (base / "wiki" / "Wheels.md").exists()
    # the events the run's writes raise: the moved page's new and old paths, its linker
    events = [Change(WIKI, "Casters.md"), Change(WIKI, "Wheels.md"), Change(WIKI, "Trunks.md")]
    roots = {RAW: base / "raw", WIKI: base / "wiki"}
    real, touches = real_changes(events, roots, {RAW: {}, WIKI: indexed},
                                 {RAW: 1 << 20, WIKI: 1 << 20})
    assert real == [] and touches == 3
    assert set(indexed) == {"Trunks.md", "Casters.md"}


def test_a_renamed_note_is_reported_as_a_move_not_a_compile(tmp_path):
    """`watch` said "raw/Wheels.md, raw/Casters.md: compiled 2" for a rename (the moved note
    and the page linking to it), as if two notes had been written."""
    base = make_workspace(tmp_path, NOTES)
    mg = Mindgraph.open(base)
    sync_run(mg, [], trigger="start")
    os.rename(base / "raw" / "Wheels.md", base / "raw" / "Casters.md")
    record = sync_run(mg, [Change(RAW, "Casters.md"), Change(RAW, "Wheels.md")])
    assert record.moved == [{"from": "Wheels.md", "to": "Casters.md"}]
    assert "Casters.md" not in record.compiled
    line = record.line()
    assert " raw/Wheels.md → raw/Casters.md: moved 1" in line, line
    assert record.to_dict()["moved"] == [{"from": "Wheels.md", "to": "Casters.md"}]
    assert " ../vault/Wheels.md → ../vault/Casters.md: moved 1" in record.line("../vault")


def test_the_run_line_names_a_failed_or_warned_note_under_raw_as_check_does(tmp_path):
    """The watch log said "../vault/bad.md: failed 1 in 0.04 s (bad.md:3: …)": the failure
    and the warnings named the note as no file the user can open from the workspace."""
    base = make_workspace(tmp_path, NOTES)
    mg = Mindgraph.open(base)
    sync_run(mg, [], trigger="start")
    (base / "raw" / "bad.md").write_text("---\ntags: [a, b\n---\n# Bad\n")
    (base / "raw" / "odd.md").write_text("---\ntags: 5\n---\n# Odd\n")
    record = sync_run(mg, [Change(RAW, "bad.md"), Change(RAW, "odd.md")])
    assert record.failed[0].startswith("bad.md:")          # the JSON stays raw-relative
    line = record.line("../vault")
    assert "failed 1, " in line and " (../vault/bad.md:2: " in line, line
    assert "\n  warning: ../vault/odd.md:2: frontmatter 'tags' holds 5" in line, line
