"""What each identity spent, in one SQLite file under the state folder: every process of a
server (``serve --workers N``) and every restart reads and writes the same counts.

A quota is a sliding window: one row per LLM call or document, with its time, and a new one
fits when fewer than the limit are younger than the window. Rows older than the window go
as the next one is taken, so an identity holds at most ``limit`` rows of each kind. Taking
is one ``BEGIN IMMEDIATE`` transaction: two processes cannot both take the last one. Rows
taken ahead of the work they pay for (``reserve``) are given back by id (``release``).

A row dated after now (the clock was set back) counts as taken now: an identity waits at
most one window whatever the clock did, never the hours the clock jumped.

A take holds the file's write lock for well under a millisecond (bench/bench_quota_ledger.py;
a write-ahead log, synced only at checkpoints: counts, not records).
Another process holding it for longer (a ``sqlite3`` shell or a backup left in a
transaction) is waited for ``BUSY_WAIT_S`` at most, then ``QuotaLedgerBusy``: a 503 with
Retry-After that names the file and how to find the holder (search, which has a fallback,
answers without its LLM expansion and says why). Until a take succeeds again, the next
requests wait ``BUSY_RETRY_WAIT_S`` only: a held lock does not cost every request 2 s. A file that is not a quota
ledger (damaged, truncated, another database) is moved aside and counting starts afresh
(repair.py).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from pathlib import Path
from typing import Callable, TypeVar

from ..errors import QuotaLedgerBusy, StoreError
from ..fsutil import make_private
from .repair import is_damage, move_aside

LEDGER_FILE = "quotas.sqlite"
_LOG = logging.getLogger("mindgraph.quotas")
# The longest a request waits for another process's write lock on the counts. Takes in a
# write-ahead log: 0.3-0.4 ms median, 77-117 ms at the 99th percentile with 2-8 processes
# taking nonstop, 1.3 s at worst with 40 on 2 busy cores (bench/bench_quota_ledger.py; the
# rollback journal before: 12-15 ms median, 1.3-1.4 s p99, 10 s timeouts with 8). Two
# seconds is past any contention, short enough not to hold a lane for long.
BUSY_WAIT_S = 2.0
BUSY_RETRY_WAIT_S = 0.1
RETRY_AFTER_BUSY_S = 5
_COLUMNS = ["kind", "who", "at"]
# a transaction is tried at most this often: a damaged file moved aside once, a ledger
# another worker moved aside made anew, a write-ahead log's lock race retried
_ATTEMPTS = 4

T = TypeVar("T")


class QuotaLedger:
    """Timed events per (kind, who) in ``path``; process- and thread-safe through SQLite."""

    def __init__(self, path: Path, busy_wait_s: float = BUSY_WAIT_S):
        self.path = Path(path)
        self.busy_wait_s = busy_wait_s
        self._made = False
        self._held = False          # the last take found the lock held by another process

    def take(self, kind: str, who: str, count: int, limit: int, window_s: float,
             *, record: bool = True, now: float | None = None) -> float | None:
        """Record ``count`` events of ``who`` unless that would make more than ``limit``
        within the last ``window_s``: None when they fit (recorded unless ``record`` is
        False: a check), else the seconds until enough have aged out (the window for a
        ``count`` over ``limit``, which never fits)."""
        wait, _ = self.reserve(kind, who, count, limit, window_s, record=record, now=now)
        return wait

    def reserve(self, kind: str, who: str, count: int, limit: int, window_s: float,
                *, record: bool = True, now: float | None = None
                ) -> tuple[float | None, list[int]]:
        """``take``, also returning the ids of the rows recorded (for ``release``)."""
        now = time.time() if now is None else now

        def transaction(db: sqlite3.Connection) -> tuple[float | None, list[int]]:
            db.execute("DELETE FROM events WHERE kind = ? AND who = ? AND at <= ?",
                       (kind, who, now - window_s))
            db.execute("UPDATE events SET at = ? WHERE kind = ? AND who = ? AND at > ?",
                       (now, kind, who, now))          # dated in the future: the clock went back
            times = [row[0] for row in db.execute(
                "SELECT at FROM events WHERE kind = ? AND who = ? ORDER BY at", (kind, who))]
            over = len(times) + count - limit
            if over > 0:
                return (window_s if count > limit
                        else max(0.0, times[over - 1] + window_s - now)), []
            ids = []
            if record:
                for _ in range(count):
                    ids.append(int(db.execute("INSERT INTO events (kind, who, at) VALUES "
                                              "(?, ?, ?)", (kind, who, now)).lastrowid))
            return None, ids

        return self._run(transaction)

    def release(self, ids: list[int]) -> None:
        """Give back the rows ``reserve`` recorded as ``ids`` (work they paid for not done)."""
        if ids:
            self._run(lambda db: db.executemany("DELETE FROM events WHERE rowid = ?",
                                                [(i,) for i in ids]))

    # -- the file -----------------------------------------------------------------------
    def _run(self, transaction: Callable[[sqlite3.Connection], T]) -> T:
        """``transaction`` in one BEGIN IMMEDIATE, waiting for a lock another process holds
        (SQLite's busy handler) no longer than the wait; a damaged file is moved aside once
        (a file another process moved aside and no one made anew: made here) and the
        transaction run on a fresh one."""
        wait = BUSY_RETRY_WAIT_S if self._held else self.busy_wait_s
        repaired = False
        for attempt in range(_ATTEMPTS):
            started = time.monotonic()
            try:
                return self._once(transaction, wait)
            except sqlite3.Error as exc:
                last = attempt == _ATTEMPTS - 1
                if not last and (_is_protocol(exc) or (
                        _is_busy(exc) and time.monotonic() - started < wait / 2)):
                    # the files were swapped under this connection (another worker moved a
                    # damaged ledger and its log aside and made it anew), or busy without
                    # waiting (switching a new file to its write-ahead log): try again
                    time.sleep(0.01 * (attempt + 1))
                elif "no such table" in str(exc) and not last:
                    self._made = False      # moved aside by another process: made anew
                elif is_damage(exc) and not repaired and not last:
                    self._repair(str(exc))
                    repaired = True
                else:
                    raise self._error(exc) from None
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _once(self, transaction: Callable[[sqlite3.Connection], T], wait_s: float) -> T:
        if not self._made:      # who asked for what, when: 0600, as the rest of the state
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise self._error(exc, "opened") from None
            make_private(self.path)
        db = sqlite3.connect(self.path, isolation_level=None, timeout=wait_s)
        try:
            # counts, not records: a power cut may lose the last few, never corrupt them
            db.execute("PRAGMA synchronous = NORMAL")
            if not self._made:
                _make_schema(db)
                self._made = True
            db.execute("BEGIN IMMEDIATE")
            result = transaction(db)
            db.execute("COMMIT")
            self._held = False
            return result
        finally:
            db.close()

    def _repair(self, why: str) -> None:
        move_aside(self.path, why, lambda: _probe(self.path, self.busy_wait_s))
        self._made = False

    def _error(self, exc: BaseException, done: str = "read or written") -> StoreError:
        """What the caller reads: the file by its name in the state folder (the whole path,
        and the fix, go to the server's log)."""
        name = f"the quota counts ({self.path.name} in the server's state folder)"
        if _is_busy(exc):
            self._held = True
            _LOG.warning("%s: locked by another process for more than %g s; find it with "
                         "`fuser %s` (a sqlite3 shell or a backup left in a transaction) and "
                         "end it, or set the limits.* quotas to 0", self.path,
                         self.busy_wait_s, self.path)
            return QuotaLedgerBusy(
                f"{name} are locked by another process, held for more than "
                f"{self.busy_wait_s:g} s where a request holds them for under a millisecond: "
                f"nothing was counted or done. Retry in {RETRY_AFTER_BUSY_S} s; if it lasts, "
                f"the server's owner should end what holds the file (the log names it).",
                RETRY_AFTER_BUSY_S)
        _LOG.warning("%s: the quota counts cannot be %s (%s)", self.path, done, exc)
        return StoreError(f"{name} cannot be {done} ({exc}). The server's owner should check "
                          f"that the state folder is writable and has room, or set the "
                          f"limits.* quotas to 0.")


def _is_protocol(exc: BaseException) -> bool:
    """SQLITE_PROTOCOL (a write-ahead log's lock race: its files replaced while opening;
    retrying is SQLite's own advice) or SQLITE_IOERR (its -wal or -shm file moved aside
    under the connection). A lasting I/O error is still reported, after the last attempt."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (10, 15)


def _is_busy(exc: BaseException) -> bool:
    """Another connection holds the lock (SQLITE_BUSY, SQLITE_LOCKED)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (5, 6)


def _make_schema(db: sqlite3.Connection) -> None:
    """The events table, in a write-ahead log. A database of other tables, or of an events
    table with other columns, is not a quota ledger: ``sqlite3.DatabaseError`` (damage),
    before anything is written to it."""
    tables = {row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
    columns = [row[1] for row in db.execute("PRAGMA table_info(events)")]
    if tables - {"events"} or (columns and columns != _COLUMNS):
        raise sqlite3.DatabaseError(f"it holds the tables {sorted(tables)}"
                                    + (f", events with the columns {columns}" if columns
                                       else "") + f", not one events table of {_COLUMNS}")
    # write-ahead log: a commit appends to quotas.sqlite-wal and syncs nothing (with
    # synchronous NORMAL); the default rollback journal synced a new journal file per take,
    # 12-15 ms each on this machine's disk, and waiting writers slept in SQLite's busy steps
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE IF NOT EXISTS events "
               "(kind TEXT NOT NULL, who TEXT NOT NULL, at REAL NOT NULL)")
    db.execute("CREATE INDEX IF NOT EXISTS events_by_who ON events (kind, who, at)")


def _probe(path: Path, busy_wait_s: float) -> None:
    """Raise ``sqlite3.Error`` when ``path`` is (still) not a usable quota ledger."""
    db = sqlite3.connect(path, timeout=busy_wait_s, isolation_level=None)
    try:
        _make_schema(db)
        db.execute("SELECT count(*) FROM events").fetchone()
    finally:
        db.close()


__all__ = ["BUSY_WAIT_S", "LEDGER_FILE", "QuotaLedger"]
