"""Targeted runs (ingest/targeted.py) against the full path, through run_ingest with a session:
the plan each change gets, and the same pages and records as a full run of the same steps."""

import os
import shutil
from dataclasses import asdict

from ingest_helpers import tree_hashes

from mindgraph.config import load_settings
from mindgraph.ingest.pipeline import run_ingest
from mindgraph.ingest.session import IngestSession
from mindgraph.ingest.state import STATE_FILENAME, IngestState

MTIME = 1_767_000_000


def put(raw, path, text):
    target = raw / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    os.utime(target, (MTIME, MTIME))


def records(base):
    state = IngestState.load(base / ".mindgraph" / STATE_FILENAME)
    return ({p: {k: v for k, v in asdict(r).items() if k != "stat"}
             for p, r in state.files.items()}, state.moves, state.index)


def workspace(base, notes):
    (base / "raw").mkdir(parents=True)
    (base / "mindgraph.yml").write_text("")
    for path, text in notes.items():
        put(base / "raw", path, text)
    return load_settings(base)


def test_a_term_that_becomes_generic_falls_back_and_equals_the_full_path(tmp_path):
    # "Kayak" mentioned by 21 of 42 notes is not generic (more than half, and over 20, is);
    # a 22nd mention makes it generic, which unlinks it in every note: not a targeted run
    notes = {"Kayak.md": "# Kayak\nA boat.\n"}
    for i in range(41):
        notes[f"n/Note {i}.md"] = f"# Note {i}\nWords {i}." + (" A Kayak trip." if i < 20 else "") \
            + "\n"
    watched = workspace(tmp_path / "watched", notes)
    reference = workspace(tmp_path / "reference", notes)
    session = IngestSession()
    assert run_ingest(watched, session=session).plan.startswith("full: ")
    run_ingest(reference)
    session.warm()
    assert "[[Kayak]]" in (tmp_path / "watched" / "wiki" / "n" / "Note 0.md").read_text()

    put(watched.raw_dir, "n/Note 30.md", "# Note 30\nWords 30, then a Kayak.\n")
    put(reference.raw_dir, "n/Note 30.md", "# Note 30\nWords 30, then a Kayak.\n")
    report = run_ingest(watched, session=session, changed=["n/Note 30.md"])
    assert report.plan == "full: a term became generic, or stopped being generic"
    run_ingest(reference)
    assert "[[Kayak]]" not in (tmp_path / "watched" / "wiki" / "n" / "Note 0.md").read_text()
    assert tree_hashes(tmp_path / "watched" / "wiki") == tree_hashes(tmp_path / "reference"
                                                                     / "wiki")
    assert records(tmp_path / "watched") == records(tmp_path / "reference")

    # an edit that keeps the generic terms is targeted, and equal all the same
    for settings in (watched, reference):
        put(settings.raw_dir, "n/Note 35.md", "# Note 35\nOther words entirely.\n")
    report = run_ingest(watched, session=session, changed=["n/Note 35.md"])
    assert report.plan == "targeted" and [f.path for f in report.files] == ["n/Note 35.md"]
    run_ingest(reference)
    assert tree_hashes(tmp_path / "watched" / "wiki") == tree_hashes(tmp_path / "reference"
                                                                     / "wiki")
    assert records(tmp_path / "watched") == records(tmp_path / "reference")
    assert (tmp_path / "watched" / ".mindgraph" / (STATE_FILENAME + ".journal")).exists()


def test_another_process_ingest_makes_the_next_run_full(tmp_path):
    settings = workspace(tmp_path / "ws", {"a.md": "# A\nOne.\n", "b.md": "# B\nTwo.\n"})
    session = IngestSession()
    run_ingest(settings, session=session)
    session.warm()
    put(settings.raw_dir, "a.md", "# A\nOne, edited.\n")
    run_ingest(settings)                        # the CLI, beside the watcher
    put(settings.raw_dir, "b.md", "# B\nTwo, edited.\n")
    report = run_ingest(settings, session=session, changed=["b.md"])
    assert report.plan == "full: another process ingested since the last run"
    assert [f.path for f in report.files if f.status == "ingested"] == ["b.md"]
    put(settings.raw_dir, "a.md", "# A\nOne, again.\n")
    assert run_ingest(settings, session=session, changed=["a.md"]).plan == "targeted"
    copy = tmp_path / "copy"
    shutil.copytree(settings.raw_dir, copy / "raw")
    (copy / "mindgraph.yml").write_text("")
    run_ingest(load_settings(copy))
    assert tree_hashes(tmp_path / "ws" / "wiki") == tree_hashes(copy / "wiki")


def test_the_readme_lists_every_reason_for_a_full_run_in_the_watchers_words():
    """README.md's Live sync section quotes each "full: <why>" as the code words it."""
    import re
    from pathlib import Path

    from mindgraph.ingest import pipeline, session, targeted

    root = Path(__file__).resolve().parents[2]
    readme = root / "README.md"
    section = readme.read_text(encoding="utf-8").split("### Live sync", 1)[1].split("\n### ")[0]
    quoted = " ".join(section.split())
    reasons = [session.NO_RUN_YET, session.OTHER_INGEST, session.HELD, session.FAILED,
               session.PARTIAL]
    for module in (targeted, pipeline):
        source = Path(module.__file__).read_text(encoding="utf-8")
        # the literal reasons a run returns: the returns of _plan_targeted, pipeline's why
        for text in re.findall(r'(?:return|why =) f?"([^"]+)"', source):
            reasons.append(text.replace("{path}", "<note>"))
    for why in reasons:
        if why.startswith("full: ") or why in ("targeted",):
            continue
        assert f'"{why}"' in quoted, f"README.md, Live sync, does not quote {why!r}"


def test_a_targeted_run_counts_a_note_of_its_compiled_stat_as_unchanged(tmp_path,
                                                                         monkeypatch):
    """A watcher's event for a note whose stat is the one it was compiled from (an editor's
    save of nothing new): read again, and, once not read, counted skipped, not unchanged (the
    summary's "skipped 1" where nothing was skipped for a reason)."""
    from mindgraph.ingest import notes

    monkeypatch.setattr(notes, "RACY_NS", 0)     # the stats recorded at once, not 2 s on
    watched = workspace(tmp_path / "w", {"Kayak.md": "# Kayak\nA boat.\n",
                                         "Trunks.md": "# Trunks\nFor a Kayak trip.\n"})
    session = IngestSession()
    run_ingest(watched, session=session)
    session.warm()
    read, reads = notes.read_note, []
    monkeypatch.setattr(notes, "read_note", lambda raw, file, *a: (reads.append(file.path),
                                                                    read(raw, file, *a))[1])
    report = run_ingest(watched, session=session, changed=["Kayak.md"])
    assert report.plan == "targeted"
    # not read again: its scan entry has the inode its record's stat was made with (the
    # full path's has; the targeted one's had none, so every such note was read and hashed)
    assert reads == []
    assert (report.ingested, report.unchanged, report.skipped, report.skipped_for_reason) == \
        (0, 1, 1, 0)
