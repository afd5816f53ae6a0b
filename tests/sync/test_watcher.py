"""The watcher driven by real file-system events: after each change the wiki, the keyword
index, the graph and the vectors are current, with native events and with stat scans.

The core under test does not refresh itself (``auto_refresh`` off, as in a server), so what a
query finds is what the watcher's run made current."""

import os
import time

import pytest

from sync_support import make_workspace, wait_until, watching, write

NOTES = {"Trunks.md": "# Trunks\nA trunk holds clothes. See [[Wheels]].\n",
         "Wheels.md": "# Wheels\nWheels make a trunk roll.\n"}


@pytest.fixture(params=["native", "polling"])
def mode(request):
    return {"polling": request.param == "polling", "poll_interval_ms": 100}


def test_create_modify_delete_keep_wiki_index_graph_and_vectors_current(tmp_path, mode):
    base = make_workspace(tmp_path, NOTES)
    with watching(base, **mode) as w:
        assert w.status["backend"].startswith("stat scans" if mode["polling"] else "native")
        assert (base / "wiki" / "Trunks.md").is_file() and "Trunks.md" in w.vectors()

        runs = len(w.records)
        write(base / "raw" / "Zeppelin.md", "# Zeppelin\nAn airship for [[Trunks]].\n")
        w.settle(runs)
        assert "airship" in (base / "wiki" / "Zeppelin.md").read_text()
        assert w.hits("airship") == ["Zeppelin.md"]
        assert "Zeppelin.md" in w.graph_nodes()
        assert any(b["page"] == "Zeppelin.md" for b in w.mg.links("Trunks")["backlinks"])
        assert "Zeppelin.md" in w.vectors()
        assert w.records[-1].changes == ["raw/Zeppelin.md"]
        assert w.records[-1].compiled == ["Zeppelin.md"] and w.records[-1].embedded >= 1

        before = w.vectors()["Zeppelin.md"]
        runs = len(w.records)
        write(base / "raw" / "Zeppelin.md", "# Zeppelin\nA balloon with a gondola.\n")
        w.settle(runs)
        assert w.hits("gondola") == ["Zeppelin.md"] and w.hits("airship") == []
        assert w.vectors()["Zeppelin.md"] != before
        assert not any(b["page"] == "Zeppelin.md" for b in w.mg.links("Trunks")["backlinks"])

        runs = len(w.records)
        (base / "raw" / "Zeppelin.md").unlink()
        w.settle(runs)
        assert not (base / "wiki" / "Zeppelin.md").exists()
        assert w.hits("gondola") == []
        assert "Zeppelin.md" not in w.graph_nodes()
        assert "Zeppelin.md" not in w.vectors()
        assert w.records[-1].removed == ["Zeppelin.md"] and w.records[-1].vectors_removed >= 1


def test_a_rename_moves_the_page_its_index_entries_and_vectors(tmp_path, mode):
    base = make_workspace(tmp_path, NOTES)
    with watching(base, **mode) as w:
        runs = len(w.records)
        os.rename(base / "raw" / "Wheels.md", base / "raw" / "Casters.md")
        w.settle(runs)
        assert not (base / "wiki" / "Wheels.md").exists()
        assert "roll" in (base / "wiki" / "Casters.md").read_text()
        assert w.hits("roll") == ["Casters.md"]
        assert "Casters.md" in w.graph_nodes() and "Wheels.md" not in w.graph_nodes()
        vectors = w.vectors()
        assert "Casters.md" in vectors and "Wheels.md" not in vectors
        assert len(w.records) == runs + 1, [r.line() for r in w.records[runs:]]


def test_a_folder_moved_in_one_step_is_synced(tmp_path):
    base = make_workspace(tmp_path, {"trips/Kyoto.md": "# Kyoto\nTemples and a trunk.\n"})
    with watching(base) as w:
        runs = len(w.records)
        os.rename(base / "raw" / "trips", base / "raw" / "journeys")
        w.settle(runs)
        assert w.hits("temples") == ["journeys/Kyoto.md"]
        assert set(w.vectors()) == {"journeys/Kyoto.md"}


def test_editor_saves_are_one_change_and_touches_are_none(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    note = base / "raw" / "Trunks.md"
    with watching(base) as w:
        runs = len(w.records)
        # vim-like: a swap file, a backup, a write to a temp file renamed over the note
        write(base / "raw" / ".Trunks.md.swp", "swap")
        os.rename(note, base / "raw" / "Trunks.md~")
        write(base / "raw" / "Trunks.md.tmp", "# Trunks\nA trunk holds books.\n")
        os.replace(base / "raw" / "Trunks.md.tmp", note)
        os.unlink(base / "raw" / "Trunks.md~")
        os.unlink(base / "raw" / ".Trunks.md.swp")
        # and a few more writes of the same save, then delete + create
        for _ in range(5):
            with open(note, "a", encoding="utf-8") as handle:
                handle.write("")
        note.unlink()
        write(note, "# Trunks\nA trunk holds books.\n")
        w.settle(runs)
        time.sleep(0.4)                     # more than the debounce: no second run follows
        assert [r.changes for r in w.records[runs:]] == [["raw/Trunks.md"]]
        assert w.hits("books") == ["Trunks.md"]

        runs, touches = len(w.records), w.status["touches_ignored"]
        os.utime(note)                                  # a touch
        write(note, note.read_text(encoding="utf-8"))   # saved unchanged
        wait_until(lambda: w.status["touches_ignored"] > touches, what="the touch to be seen")
        wait_until(lambda: w.status["state"] == "idle")
        assert len(w.records) == runs                   # nothing was redone


def test_a_hand_edit_of_a_wiki_page_is_reindexed_and_embedded(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    with watching(base) as w:
        before = w.vectors()["Wheels.md"]
        raw_before = (base / "raw" / "Wheels.md").read_bytes()
        runs = len(w.records)
        page = base / "wiki" / "Wheels.md"
        page.write_text(page.read_text(encoding="utf-8") + "\nAlso squeaky hinges.\n")
        w.settle(runs)
        assert w.records[-1].changes == ["wiki/Wheels.md"] and not w.records[-1].compiled
        assert w.hits("squeaky") == ["Wheels.md"]
        assert w.vectors()["Wheels.md"] != before
        assert (base / "raw" / "Wheels.md").read_bytes() == raw_before


def test_a_burst_of_1000_notes_is_synced_in_few_runs(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    with watching(base) as w:
        runs = len(w.records)
        for i in range(1000):
            write(base / "raw" / f"burst/{i // 100}/Note {i}.md",
                  f"# Note {i}\nWord marker{i} about trunk number {i}.\n")
        wait_until(lambda: w.hits("marker999") and w.status["state"] == "idle"
                   and not w.status["pending_count"], 120, "the burst to be synced")
        assert len(list((base / "wiki" / "burst").rglob("*.md"))) == 1000
        assert w.hits("marker0") == ["burst/0/Note 0.md"]
        assert len(w.graph_nodes()) == 1002
        vectors = w.vectors()
        assert all(f"burst/{i // 100}/Note {i}.md" in vectors for i in range(1000))
        assert len(w.records) - runs <= 4, [r.line() for r in w.records[runs:]]
        assert sum(len(r.compiled) for r in w.records[runs:]) == 1000


def test_a_change_made_during_a_run_is_picked_up_by_the_next(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    with watching(base) as w:
        runs = len(w.records)
        for i in range(400):
            write(base / "raw" / f"bulk/Note {i}.md", f"# Note {i}\nFiller {i}.\n")
        # a run's ingest has scanned raw/ once it writes a page after we saw it running
        # (a page from an earlier run of the burst proves nothing)
        seen: dict[int, float] = {}

        def scanned():
            running = w.status["running"]
            if not running or not running["changes"]:
                return None
            since = seen.setdefault(id(running), time.time())
            for change in running["changes"]:
                page = base / "wiki" / change.removeprefix("raw/")
                if page.exists() and page.stat().st_mtime > since:
                    return running
            return None
        during = wait_until(scanned, 60, "a bulk run past its scan")
        write(base / "raw" / "Wheels.md", "# Wheels\nWheels with ballbearings.\n")
        assert w.status["running"] is during        # the change landed during that run
        wait_until(lambda: w.hits("ballbearings") and w.status["state"] == "idle", 120,
                   "the change to be synced")
        assert "ballbearings" in (base / "wiki" / "Wheels.md").read_text()
        that = next(i for i, r in enumerate(w.records) if i >= runs
                    and r.changes == during["changes"])
        assert "raw/Wheels.md" not in w.records[that].changes
        assert any("raw/Wheels.md" in r.changes for r in w.records[that + 1:])


def test_the_start_completes_what_changed_while_nothing_watched(tmp_path):
    from click.testing import CliRunner

    from mindgraph.cli import cli

    base = make_workspace(tmp_path, {**NOTES, "Old.md": "# Old\nSoon gone.\n"})
    assert CliRunner().invoke(cli, ["ingest", "-C", str(base)]).exit_code == 0  # not embedded
    write(base / "raw" / "Wheels.md", "# Wheels\nWheels with spokes.\n")
    (base / "raw" / "Old.md").unlink()
    with watching(base) as w:
        start = w.records[0]
        assert start.trigger == "start" and start.compiled == ["Wheels.md"]
        assert start.removed == ["Old.md"]
        assert set(w.vectors()) == {"Trunks.md", "Wheels.md"}     # embedded at the start
        assert w.hits("spokes") == ["Wheels.md"] and w.hits("gone") == []


@pytest.mark.pg
def test_the_watcher_keeps_pgvector_current(tmp_path, pg_dsn, monkeypatch):
    base = make_workspace(tmp_path, NOTES)
    with open(base / "mindgraph.yml", "a", encoding="utf-8") as config:
        config.write("store:\n  backend: pgvector\n  table: mg_test_watch\n")
    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    try:
        with watching(base) as w:
            assert set(w.vectors()) == {"Trunks.md", "Wheels.md"}
            runs = len(w.records)
            write(base / "raw" / "Zeppelin.md", "# Zeppelin\nAn airship.\n")
            (base / "raw" / "Wheels.md").unlink()
            w.settle(runs)
            assert set(w.vectors()) == {"Trunks.md", "Zeppelin.md"}
            assert w.hits("airship") == ["Zeppelin.md"]
    finally:
        import psycopg

        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS mg_test_watch")


def test_a_bad_note_is_reported_in_the_run_and_the_watcher_goes_on(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    with watching(base) as w:
        runs = len(w.records)
        (base / "raw" / "Broken.md").write_bytes(b"# Broken\nbad byte \xff here\n")
        w.settle(runs)
        record = w.records[-1]
        assert record.failed and record.failed[0].startswith("Broken.md:2: not valid UTF-8")
        assert "Re-save the file as UTF-8" in record.line()
        runs = len(w.records)
        write(base / "raw" / "Fine.md", "# Fine\nA quokka.\n")
        w.settle(runs)
        assert w.hits("quokka") == ["Fine.md"]


def _saved_keyword_index(base):
    from mindgraph.retrieval.keyword import KeywordIndex

    return KeywordIndex.load(base / ".mindgraph" / "keyword.pickle")


def _saved_pages(base):
    index = _saved_keyword_index(base)
    return set(index.hashes) if index is not None else set()


def test_a_change_is_searchable_before_the_state_files_are_saved_and_they_follow(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    with watching(base, save_after_s=60) as w:
        w.mg.save_state()                   # as after a quiet minute
        files = {n: (base / ".mindgraph" / n).stat().st_mtime_ns
                 for n in ("pages.pickle", "keyword.pickle", "graph.pickle")}
        runs = len(w.records)
        write(base / "raw" / "Zeppelin.md", "# Zeppelin\nAn airship for [[Trunks]].\n")
        w.settle(runs)
        assert w.hits("airship") == ["Zeppelin.md"]
        assert "Zeppelin.md" in w.graph_nodes()
        # the run did not wait for the files: they are as the startup left them
        assert {n: (base / ".mindgraph" / n).stat().st_mtime_ns for n in files} == files
        assert "Zeppelin.md" not in _saved_pages(base)
    # stopping saved them: the next process loads the change instead of redoing it
    saved = _saved_keyword_index(base)
    assert "Zeppelin.md" in saved.hashes and [h.path for h in saved.search("airship")] == \
        ["Zeppelin.md"]
    from mindgraph.page.cache import PageCache

    cache = PageCache.open(base / "wiki", base / ".mindgraph" / "pages.pickle")
    assert "Zeppelin.md" in cache.pages and not cache.refresh()


def test_the_state_files_are_saved_once_the_watcher_has_been_quiet(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    with watching(base, save_after_s=0.3) as w:
        runs = len(w.records)
        write(base / "raw" / "Zeppelin.md", "# Zeppelin\nAn airship for [[Trunks]].\n")
        w.settle(runs)
        wait_until(lambda: not w.mg.unsaved_state, 10, "the state files to be saved")
        assert "Zeppelin.md" in _saved_pages(base)


def test_the_ingest_state_is_read_again_only_when_it_changed(tmp_path, monkeypatch):
    from mindgraph.ingest.state import IngestState

    base = make_workspace(tmp_path, NOTES)
    with watching(base) as w:
        loads = []
        real_load = IngestState.load.__func__
        monkeypatch.setattr(IngestState, "load", classmethod(
            lambda cls, path: loads.append(path) or real_load(cls, path)))
        first = w.watcher._synced()
        assert set(first["raw"]) == set(NOTES)
        assert w.watcher._synced()["raw"] == first["raw"] and len(loads) <= 1
        read = len(loads)
        runs = len(w.records)
        write(base / "raw" / "Zeppelin.md", "# Zeppelin\nAn airship.\n")
        w.settle(runs)
        # the run's own ingest read it; the watcher reads the new file once after it
        mine = len(loads)
        assert "Zeppelin.md" in w.watcher._synced()["raw"]
        assert "Zeppelin.md" in w.watcher._synced()["raw"]
        assert len(loads) - mine <= 1 and read <= 1
