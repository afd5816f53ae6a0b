"""Compiling offline in forked worker processes, so a first run uses every core.

The offline compiler is a pure function of a note and the title index, and on a large first
run it is most of the CPU time, in Python (one core per process). The run forks
``compile.processes`` workers once it has planned: each inherits the planned notes and the
index (nothing is pickled to them) and sends back only each page's text and the note's move
signature. Everything that writes — pages, the state, the report — stays in the parent, one
note after another in note order (``imap`` keeps it), so the pages, the state and what a kill
leaves behind are those of a run in one process. A worker gets SIGKILL when the parent dies
(Linux ``PR_SET_PDEATHSIG``), so a killed run leaves no orphan holding the ingest lock.

Forking is used only where it is safe: a platform with ``fork`` and a process with no other
thread (a server calling ingest from a worker thread compiles in that thread).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from typing import Any, Callable, Iterator, Sequence

from .moves import signature

MIN_NOTES_PER_PROCESS = 32      # below this a fork costs more than it saves
_CHUNK = 8                      # notes per message: amortises the pipe, keeps order cheap

Result = tuple[bool, str, str]       # (compiled, page text or error, move signature)
_JOB: tuple[Callable[[Any], tuple[bool, str]], Sequence[Any]] | None = None


def processes_for(wanted: int, notes: int, threads: int | None = None) -> int:
    """How many worker processes to fork for ``notes`` notes (0: compile in this process).
    ``wanted`` 0 means one per core; ``threads``: of this process (None: count them)."""
    if not hasattr(os, "fork") or (threads or threading.active_count()) > 1:
        return 0
    count = wanted or (os.cpu_count() or 1)
    count = min(count, notes // MIN_NOTES_PER_PROCESS)
    return count if count > 1 else 0


def compiled_in_workers(compile_one: Callable[[Any], tuple[bool, str]], notes: Sequence[Any],
                        processes: int) -> Iterator[Result]:
    """``compile_one(note)`` and the note's signature for every note, in note order, computed
    by ``processes`` forked workers."""
    global _JOB
    _JOB = (compile_one, notes)
    context = multiprocessing.get_context("fork")
    pool = context.Pool(processes, initializer=_die_with_parent, initargs=(os.getpid(),))
    try:
        yield from pool.imap(_work, range(len(notes)), chunksize=_CHUNK)
        pool.close()
    finally:
        pool.terminate()
        pool.join()
        _JOB = None


def _work(position: int) -> Result:
    assert _JOB is not None
    compile_one, notes = _JOB
    note = notes[position]
    ok, text = compile_one(note)
    return ok, text, (note.signature or signature(note.text)) if ok else ""


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this worker when the parent dies (elsewhere: nothing to do);
    Ctrl-C is the parent's to handle (it stops the pool)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)        # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:       # the parent died before prctl took effect
        os._exit(1)
