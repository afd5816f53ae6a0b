"""Compiling in forked worker processes (ingest/workers.py) writes what one process writes,
and every planning phase reports its progress."""

import json
import os
import shutil
import subprocess
import sys

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.config import load_settings
from mindgraph.ingest import STATE_FILENAME
from mindgraph.ingest.pipeline import run_ingest
from mindgraph.ingest.workers import MIN_NOTES_PER_PROCESS, in_workers, processes_for

from ingest_helpers import tree_hashes


def mixed_vault(corpora, folder, per_language=40):
    """English, Japanese and Chinese notes of the Obsidian Help vault (copied with their
    modification times), in a workspace."""
    for language in ("en", "ja", "zh"):
        notes = sorted((corpora / "obsidian-help" / language).rglob("*.md"))[:per_language]
        for note in notes:
            target = folder / "raw" / note.relative_to(corpora / "obsidian-help")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(note, target)
    (folder / "mindgraph.yml").write_text("compile:\n  processes: 1\n", encoding="utf-8")
    return folder


def ingest(folder, *extra):
    done = CliRunner().invoke(cli, ["ingest", "-C", str(folder), "--json", *extra],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def state_without_stats(folder):
    state = json.loads((folder / ".mindgraph" / STATE_FILENAME).read_text(encoding="utf-8"))
    for record in state["files"].values():
        record.pop("stat", None)     # the copies' own change times
    return state


# A fresh process (the test process may hold other tests' threads, and then ingest does not
# fork) that counts the worker pools it starts and prints the count on stderr.
FORKED_INGEST = """
import sys
import mindgraph.ingest.applying as applying
import mindgraph.ingest.pipeline as pipeline
from mindgraph.cli import cli

real = applying.in_workers
def counted(work, notes, processes, chunk=8, **options):
    print(f"pool of {processes}", file=sys.stderr)
    yield from real(work, notes, processes, chunk, **options)
def planning(work, notes, processes, chunk=8, **options):
    print(f"planning pool of {processes} for {len(notes)}", file=sys.stderr)
    yield from real(work, notes, processes, chunk, **options)
applying.in_workers = counted
pipeline.in_workers = planning
cli(["ingest", "-C", sys.argv[1], "--json", "--progress"])
"""


def test_pages_and_state_compiled_by_workers_are_those_of_one_process(corpora, tmp_path):
    serial = mixed_vault(corpora, tmp_path / "serial")
    forked = mixed_vault(corpora, tmp_path / "forked")
    (forked / "mindgraph.yml").write_text("compile:\n  processes: 2\n", encoding="utf-8")
    assert ingest(serial)["ingested"] == 120
    done = subprocess.run([sys.executable, "-c", FORKED_INGEST, str(forked)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "pool of 2" in done.stderr
    # reading and parsing the notes, and finding their mentions, are forked out too
    assert done.stderr.count("planning pool of 2 for 120") == 2, done.stderr
    assert json.loads(done.stdout)["ingested"] == 120        # --progress: stdout is JSON alone
    assert tree_hashes(forked / "wiki") == tree_hashes(serial / "wiki")
    assert state_without_stats(forked) == state_without_stats(serial)
    # and a re-run of the forked workspace finds nothing to do
    assert ingest(forked)["ingested"] == 0


def test_a_small_run_or_one_with_threads_compiles_in_this_process():
    assert processes_for(2, 2 * MIN_NOTES_PER_PROCESS, threads=1) == 2
    assert processes_for(2, MIN_NOTES_PER_PROCESS, threads=1) == 0    # one worker: no gain
    assert processes_for(1, 10_000, threads=1) == 0
    assert processes_for(2, 10_000, threads=2) == 0      # forking a threaded process is unsafe
    cores = os.cpu_count() or 1
    assert processes_for(0, 10_000, threads=1) == (cores if cores > 1 else 0)   # one a core


def test_every_planning_phase_reports_until_done(corpora, tmp_path):
    folder = mixed_vault(corpora, tmp_path / "vault", per_language=10)
    heard: dict[str, list[tuple[int, int]]] = {}

    def phases(label):
        return lambda done, total, item="": heard.setdefault(label, []).append((done, total))

    compiled = []
    report = run_ingest(load_settings(folder), phases=phases,
                        progress=lambda done, total, item: compiled.append((done, total)))
    assert report.ingested == 30
    assert sorted(heard) == ["Checking", "Linking", "Reading"]
    for label, ticks in heard.items():
        assert ticks[-1] == (30, 30), label
    assert compiled[-1] == (30, 30)


def test_the_segmenters_a_run_needs_are_loaded_once_before_forking():
    probe = ("import sys; from mindgraph.text import cjk; cjk.preload(sys.argv[1:]); "
             "print(' '.join(sorted(cjk._LOADED)))")

    def loaded(*texts):
        done = subprocess.run([sys.executable, "-c", probe, *texts], capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert loaded("Plain English.") == []
    assert loaded("ノートを開く") == ["ja"]
    assert loaded("打开笔记", "English") == ["zh"]
    assert loaded("打开笔记", "ノートを開く") == ["ja", "zh"]


def _square_or_die(item):
    """Squares ``item``; in a worker, the process running item 13 dies as the OOM killer
    would kill it (SIGKILL: no exception, no reply)."""
    parent, value = item
    if value == 13 and os.getpid() != parent:
        os.kill(os.getpid(), 9)
    return value * value


def test_a_worker_that_dies_does_not_hang_the_run_the_rest_is_computed_here():
    import signal
    import time

    def alarm(*_):
        raise TimeoutError("in_workers hung after a worker died")

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(60)
    try:
        started = time.monotonic()
        items = [(os.getpid(), n) for n in range(200)]
        got = list(in_workers(_square_or_die, items, 2, chunk=4))
    finally:
        signal.alarm(0)
    assert got == [n * n for n in range(200)]          # all of them, in order
    assert time.monotonic() - started < 60


def test_what_runs_meanwhile_runs_here_once_the_workers_are_forked():
    import multiprocessing

    seen = []
    got = list(in_workers(abs, list(range(-50, 50)), 2,
                          meanwhile=lambda: seen.append((os.getpid(),
                                                         len(multiprocessing.active_children())))))
    assert got == [abs(n) for n in range(-50, 50)]
    assert seen == [(os.getpid(), 2)]       # once, in this process, beside its two workers



def _frozen(_item):
    import gc

    return gc.get_freeze_count()


def test_what_the_workers_inherit_is_out_of_their_collections_and_nothing_stays_frozen_here():
    import gc

    gc.unfreeze()       # what other tests' loaded states froze here (page/cache.py)
    inherited = [object() for _ in range(100)]
    counts = list(in_workers(_frozen, inherited, 2, chunk=10))
    # each worker's collections skip what it inherited (no walk of it, no copy-on-write)
    assert len(counts) == 100 and min(counts) >= len(inherited)
    # and this process (a server's, a watcher's) collects everything again afterwards
    assert gc.get_freeze_count() == 0
    # unless it keeps its long-lived objects frozen already (a loaded state or page cache,
    # page/cache.py): those stay frozen, and so do these
    gc.freeze()
    try:
        assert min(in_workers(_frozen, inherited, 2, chunk=10)) >= len(inherited)
        assert gc.get_freeze_count() > 0        # not thawed
    finally:
        gc.unfreeze()


def test_mecab_is_checked_in_a_thread_while_reading_and_joined_before_the_next_fork():
    probe = """
import sys, threading
from pathlib import Path
from mindgraph.ingest.notes import Note
from mindgraph.ingest.warmup import Segmenters
from mindgraph.text import cjk

def note(text):
    n = Note.__new__(Note); n.text = text; return n
loading = Segmenters(lambda note: True)
seen = [n.text for n in loading.watch([note("Plain English."), note("ノートを開く"), note("打开笔记")])]
alive = loading.thread is not None and loading.thread.name
loading.join()
print(len(seen), alive, threading.active_count(), " ".join(sorted(cjk._LOADED)))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # every note goes by; MeCab loaded in its thread, jieba here; one thread left to fork
    assert done.stdout.split() == ["3", "mindgraph-mecab", "1", "ja", "zh"]


def test_jieba_loads_before_the_reading_workers_fork_when_a_note_to_read_is_chinese(tmp_path):
    """Building jieba's dictionary holds the GIL (~0.13 s): beside the Reading workers it kept
    the pool's thread from feeding them, so a Chinese note among those to read loads it
    before they fork; an English folder loads nothing."""
    probe = """
import sys
from pathlib import Path
from mindgraph.ingest.scan import scan_raw
from mindgraph.ingest.warmup import Segmenters
from mindgraph.text import cjk

raw = Path(sys.argv[1])
for folder in ("en", "all"):
    files = [f for f in scan_raw(raw / folder, exclude=()) if f.is_note]
    loading = Segmenters(lambda note: True)
    loading.before_reading(raw / folder, files, 1 << 20)
    print(folder, loading.chinese, sorted(cjk._LOADED))
"""
    for folder, count in (("en", 300), ("all", 300)):
        for i in range(count):
            path = tmp_path / folder / "en" / f"note {i}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# Note {i}\n\nPlain English about syncing notes.\n")
    for i in range(10):      # a folder of Chinese notes after 300 English ones
        path = tmp_path / "all" / "zh" / f"笔记 {i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# 笔记 {i}\n\n如何同步笔记。\n")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["en False []", "all True ['zh']"]

# A fresh process that looks, as the compile's workers hand back their first page, at what
# the run has on disk, and at how many workers were there while it saved the pending records.
PENDING_PROBE = """
import json, multiprocessing, sys
from pathlib import Path
import mindgraph.ingest.applying as applying
from mindgraph.cli import cli

folder = Path(sys.argv[1])
real = applying.in_workers
def watched(work, notes, processes, chunk=8, meanwhile=None):
    def saving():
        workers = len(multiprocessing.active_children())
        meanwhile()
        state = json.loads((folder / ".mindgraph" / ".ingest-state.json").read_text("utf-8"))
        statuses = sorted({r["status"] for r in state["files"].values()})
        pages = [p for p in (folder / "wiki").rglob("*.md")] if (folder / "wiki").exists() else []
        print(f"saved {len(state['files'])} {statuses} beside {workers} workers, "
              f"{len(pages)} pages", file=sys.stderr)
    yield from real(work, notes, processes, chunk, meanwhile=saving)
applying.in_workers = watched
cli(["ingest", "-C", str(folder), "--json"])
"""


def test_the_pending_records_are_saved_while_the_workers_compile_before_any_page(
        corpora, tmp_path):
    folder = mixed_vault(corpora, tmp_path / "vault")
    (folder / "mindgraph.yml").write_text("compile:\n  processes: 2\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", PENDING_PROBE, str(folder)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # every note is recorded as pending on disk while the two workers compile, and no page
    # is written before that (a kill then finds what the run was doing)
    assert "saved 120 ['pending'] beside 2 workers, 0 pages" in done.stderr, done.stderr
    assert json.loads(done.stdout)["ingested"] == 120
    assert len(list((folder / "wiki").rglob("*.md"))) == 120


def _collection_threshold(_item):
    import gc

    return gc.get_threshold()


def test_a_worker_collects_its_young_garbage_less_often():
    """A worker makes short-lived objects by the hundred thousand and almost no cycles: it
    collects once per WORKER_GC_THRESHOLD[0] allocations, not Python's 700 (~9 % of its
    Japanese segmentation was spent collecting); this process keeps its own setting."""
    import gc

    from mindgraph.ingest.workers import WORKER_GC_THRESHOLD

    mine = gc.get_threshold()
    assert set(in_workers(_collection_threshold, list(range(8)), 2, chunk=1)) == \
        {WORKER_GC_THRESHOLD}
    assert WORKER_GC_THRESHOLD[0] >= 10_000 and gc.get_threshold() == mine


def _big_result(n):
    return bytes([n % 256]) * 20_000_000


def test_a_run_stopped_while_a_worker_sends_its_result_leaves_no_thread_behind():
    """Ctrl-C in `mindgraph ingest` printed "Aborted!" and then hung for good, in one try out
    of ten: a worker stopped while it wrote a result left the pool's manager thread reading
    the rest of it, from a pipe whose write end this process holds too, and Python's exit
    joins that thread. Large results make a worker be writing when the run stops."""
    import threading
    import time

    before = set(threading.enumerate())
    for _ in range(3):
        results = in_workers(_big_result, list(range(8)), 2, chunk=1)
        assert next(results)[:1] == b"\x00"
        results.close()             # what Ctrl-C does to the run that iterates them
        deadline = time.monotonic() + 10
        while set(threading.enumerate()) - before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [t.name for t in set(threading.enumerate()) - before] == []
