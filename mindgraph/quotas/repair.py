"""A quota ledger that is not one any more — not a database, truncated, a database of other
tables — is moved aside (``quotas.sqlite.corrupt-<UTC time>``, its journal with it) and
counting starts afresh, with a warning in the server's log naming both files.

Why not refuse until the owner deletes it: the file holds only counts of the last hour and
day, no one's data. Refusing turned a damaged counter into an outage: every identity's every
LLM request a 503 until someone read the log. Starting afresh costs at most one window's
quota more for each identity, and the damaged file is kept to look at.

Several processes (``serve --workers N``) may find the damage at once. Each takes an
exclusive ``flock`` on the damaged file's own inode, then checks the file at the ledger's
path again: only one that still finds it damaged moves it, so a fresh ledger another process
just made is never moved aside. Without ``fcntl`` (Windows) there is no lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Callable, Iterator

_LOG = logging.getLogger("mindgraph.quotas")
_CORRUPT, _NOT_A_DATABASE = 11, 26          # SQLite's primary result codes
_BESIDE = ("-journal", "-wal", "-shm")       # SQLite's own files next to the database


def is_damage(exc: BaseException) -> bool:
    """Does ``exc`` say the file is not a usable quota ledger (as opposed to locked, full,
    read-only: a state to wait out or fix, not a file to replace)?"""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_CORRUPT, _NOT_A_DATABASE)
    return type(exc) is sqlite3.DatabaseError      # ledger._make_schema: other columns


def move_aside(path: Path, why: str, probe: Callable[[], None]) -> Path | None:
    """Move the damaged ledger at ``path`` aside unless ``probe`` (which raises when the file
    at ``path`` is damaged) now passes — another process replaced it first. The new name, or
    None when nothing was moved."""
    with _locked(path):
        try:
            probe()
            return None
        except sqlite3.Error as exc:
            if not is_damage(exc):
                return None         # the caller's next attempt reports it
        aside = _free_name(path)
        # its journal first: once the file is gone from ``path`` another process may make a
        # fresh ledger there, whose write-ahead log (its last commits) must not follow it
        for suffix in _BESIDE:
            with contextlib.suppress(FileNotFoundError):
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
        try:
            os.replace(path, aside)
        except FileNotFoundError:
            return None
    _LOG.warning("%s is not a quota ledger any more (%s): moved aside to %s and counting "
                 "restarted from zero; each identity may spend up to one more window's quota. "
                 "Look at or delete %s.", path, why, aside.name, aside)
    return aside


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:             # Windows: no flock
        yield
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:       # moved aside already
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)                # and the lock with it


def _free_name(path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 2
    while aside.exists():
        aside = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        n += 1
    return aside


__all__ = ["is_damage", "move_aside"]
