"""Compiling offline in forked worker processes, so a first run uses every core.

The offline compiler is a pure function of a note and the title index, and on a large first
run it is most of the CPU time, in Python (one core per process); so is finding the titles
each note mentions. The run forks ``compile.processes`` workers for each of the two: they
inherit the notes and the index (nothing is pickled to them) and send back only each note's
mentions, or its page's text and move signature. Everything that writes (pages, the state,
the report) stays in the parent, one note after another in note order (``imap`` keeps it), so
the pages, the state and what a kill leaves behind are those of a run in one process. A worker gets SIGKILL when the parent dies
(Linux ``PR_SET_PDEATHSIG``), so a killed run leaves no orphan holding the ingest lock.

A worker that dies (killed, out of memory) does not hang the run: the pool breaks, and what
was not computed yet is computed in this process, in order.

Forking is used only where it is safe: on Linux, in a process with no other thread (a server
calling ingest from a worker thread compiles in that thread).

Every object alive at the fork is frozen out of the garbage collector's reach (``gc.freeze``):
a worker's collections then never walk the notes, the index and the modules it inherited
(walking them wrote to every object's header, a copy-on-write fault per page of them, and
took ~0.2 s of each worker's CPU on the vault), nor do the parent's own while the workers
run. A process that had frozen nothing gets everything back into its collections afterwards;
one that keeps its long-lived objects frozen already (a loaded ingest state or page cache:
page/cache.py's ``paused_gc``) keeps these frozen too, once its young garbage is collected
(``gc.unfreeze`` would thaw those as well).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, Sequence

MIN_NOTES_PER_PROCESS = 32      # below this a fork costs more than it saves
# A worker allocates a few hundred thousand short-lived objects a second (segmented words,
# matches, lines) and makes almost no cycles: Python's default (700 allocations a young
# collection) spent ~9 % of its Japanese segmentation collecting; one young collection per
# 50,000 keeps what a cycle could hold to a few MB (bench_ingest_speed.py: ~3 % of a first
# run's CPU on the vault, the same pages).
WORKER_GC_THRESHOLD = (50_000, 10, 10)

_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None     # what the workers do


def processes_for(wanted: int, notes: int, threads: int | None = None) -> int:
    """How many worker processes to fork for ``notes`` notes (0: compile in this process).
    ``wanted`` 0 means one per core; ``threads``: of this process (None: count them)."""
    if not sys.platform.startswith("linux") or (threads or threading.active_count()) > 1:
        return 0        # macOS system libraries are not fork-safe; Windows has no fork
    count = wanted or (os.cpu_count() or 1)
    count = min(count, notes // MIN_NOTES_PER_PROCESS)
    return count if count > 1 else 0


def in_workers(work: Callable[[Any], Any], items: Sequence[Any], processes: int,
               chunk: int = 8, meanwhile: Callable[[], Any] | None = None) -> Iterator[Any]:
    """``work(item)`` for every item, in order, computed by ``processes`` forked workers
    (``chunk`` items per message: it amortises the pipe and keeps the order cheap).
    ``meanwhile`` runs here once the workers are forked, while they work (this process
    mostly waits for them otherwise)."""
    global _JOB
    _JOB = (work, items)
    # with "fork" the executor forks every worker up front, before its manager thread starts
    pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"),
                               initializer=_die_with_parent, initargs=(os.getpid(),))
    done = 0
    thaw = False
    try:
        try:
            thaw = not gc.get_freeze_count()   # else frozen already: keep it so (above)
            if not thaw:
                gc.collect(1)           # no young garbage frozen for good
            gc.freeze()     # what the workers inherit stays out of every collection (above)
            results = pool.map(_work, range(len(items)), chunksize=chunk)
            if meanwhile is not None:
                meanwhile()
            for result in results:
                yield result
                done += 1
        except BrokenProcessPool:   # a worker died: the rest here (imap used to wait forever)
            for position in range(done, len(items)):
                yield work(items[position])
    finally:
        workers = list((getattr(pool, "_processes", None) or {}).values())
        manager = getattr(pool, "_executor_manager_thread", None)    # shutdown forgets it
        results_in = getattr(getattr(pool, "_result_queue", None), "_writer", None)   # and it
        pool.shutdown(wait=False, cancel_futures=True)
        for worker in workers:      # they ignore Ctrl-C: stop them, the run is over
            if worker.is_alive():
                worker.terminate()
        for worker in workers:
            worker.join(5)
        # A worker stopped while it wrote a result leaves the manager thread reading the
        # rest of that message for ever: the pipe's write end is open here too (it was made
        # here before the fork), so it never ends. Closed once the workers are gone, the read
        # ends; else Ctrl-C printed "Aborted!" and the process hung at exit, joining that
        # thread (Python's own atexit for the pool).
        if not any(worker.is_alive() for worker in workers):
            _close_quietly(results_in)
        # and the pool's manager thread: while it lives, processes_for sees a second thread,
        # and the next phase of the run (reading, linking, compiling) would not fork
        if manager is not None:
            manager.join(5)
        _JOB = None
        if thaw:
            gc.unfreeze()


def _work(position: int) -> Any:
    assert _JOB is not None
    work, items = _JOB
    return work(items[position])


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this worker when the parent dies (elsewhere: nothing to do);
    Ctrl-C is the parent's to handle (it stops the pool), and SIGTERM, how the parent stops
    a worker, ends it whatever handler the parent had (a server's, a test run's, which
    raised in the worker and left it alive, its parent waiting for it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    gc.set_threshold(*WORKER_GC_THRESHOLD)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)        # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:       # the parent died before prctl took effect
        os._exit(1)


def _close_quietly(connection: Any) -> None:
    """Close a pipe end of the pool's (None: the pool has none, or a Python without it)."""
    try:
        if connection is not None:
            connection.close()
    except OSError:
        pass
