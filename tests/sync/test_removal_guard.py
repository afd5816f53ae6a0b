"""The watcher applies ingest's removal guard: a sync that would remove most pages (raw/
emptied by an unmount, a sync not done, a wrong folder) is held, reported in the status
(state "held", and why) and retried; it is not applied, and it clears once raw/ is back."""

import json
import shutil

from mindgraph.core import Mindgraph
from mindgraph.sync import Watcher

from sync_support import make_workspace, wait_until, watching

NOTES = {f"Note {i}.md": f"# Note {i}\nText number {i}.\n" for i in range(25)}


def pages(base):
    return sorted(p.name for p in (base / "wiki").rglob("*.md"))


def test_a_sync_that_would_remove_most_pages_is_held_and_clears_when_raw_is_back(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    away = tmp_path / "away"
    with watching(base, embed=False) as w:
        assert len(pages(base)) == 25
        away.mkdir()
        for note in (base / "raw").iterdir():   # a sync service emptied raw/
            shutil.move(note, away / note.name)
        status = wait_until(lambda: w.status if w.status["state"] == "held" else None,
                            what="the watcher to hold the run")
        assert "ingest held" in status["held"] and "--allow-removals" in status["held"]
        assert status["last_run"]["held"] is True and status["last_run"]["removed"] == []
        status_file = base / ".mindgraph" / "sync-status.json"
        wait_until(lambda: json.loads(status_file.read_text())["state"] == "held",
                   what="the status file to say held")
        assert len(pages(base)) == 25           # nothing removed
        assert w.hits("number") != []           # nor dropped from the index
        for note in away.iterdir():             # synced again
            shutil.move(note, base / "raw" / note.name)
        wait_until(lambda: w.status["state"] == "idle" and not w.status["last_run"]["held"],
                   timeout=90, what="the held run to clear")
        assert w.status["held"] is None and len(pages(base)) == 25


def test_a_held_start_is_retried_until_raw_is_back(tmp_path):
    from click.testing import CliRunner

    from mindgraph.cli import cli

    base = make_workspace(tmp_path, NOTES)
    assert CliRunner().invoke(cli, ["ingest", "-C", str(base)]).exit_code == 0
    away = tmp_path / "away"
    shutil.copytree(base / "raw", tmp_path / "notes")
    shutil.move(base / "raw", away)
    (base / "raw").mkdir()              # a mount point with nothing mounted
    mg = Mindgraph.open(base)
    records: list = []
    watcher = Watcher(mg, on_run=records.append, debounce_ms=100, embed=False).start()
    try:
        wait_until(lambda: watcher.status.to_dict()["state"] == "held", what="a held start")
        assert records[0].trigger == "start" and records[0].held
        wait_until(lambda: len(records) >= 2, what="the start to be retried")
        assert records[1].trigger == "start" and records[1].held
        assert len(pages(base)) == 25
        shutil.rmtree(away)
        shutil.rmtree(base / "raw")
        shutil.copytree(tmp_path / "notes", base / "raw")
        wait_until(lambda: watcher.status.to_dict()["state"] == "idle", timeout=90,
                   what="the retried start to succeed")
        assert any(r.trigger == "start" and not r.held and r.error is None for r in records)
        assert len(pages(base)) == 25
    finally:
        watcher.stop()
        mg.close()
