"""What each identity spent, in one SQLite file under the state folder: every process of a
server (``serve --workers N``) and every restart reads and writes the same counts.

A quota is a sliding window: one row per LLM call or document, with its time, and a new one
fits when fewer than the limit are younger than the window. Rows older than the window go
as the next one is taken, so an identity holds at most ``limit`` rows of each kind. Taking
is one ``BEGIN IMMEDIATE`` transaction: two processes cannot both take the last one.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ..errors import StoreError
from ..fsutil import make_private

LEDGER_FILE = "quotas.sqlite"


class QuotaLedger:
    """Timed events per (kind, who) in ``path``; process- and thread-safe through SQLite."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._made = False

    def take(self, kind: str, who: str, count: int, limit: int, window_s: float,
             *, record: bool = True, now: float | None = None) -> float | None:
        """Record ``count`` events of ``who`` unless that would make more than ``limit``
        within the last ``window_s``: None when they fit (recorded unless ``record`` is
        False: a check), else the seconds until enough have aged out (the window for a
        ``count`` over ``limit``, which never fits)."""
        now = time.time() if now is None else now
        db = self._connect()
        try:
            db.execute("BEGIN IMMEDIATE")
            db.execute("DELETE FROM events WHERE kind = ? AND who = ? AND at <= ?",
                       (kind, who, now - window_s))
            times = [row[0] for row in db.execute(
                "SELECT at FROM events WHERE kind = ? AND who = ? ORDER BY at", (kind, who))]
            over = len(times) + count - limit
            if over > 0:
                db.execute("COMMIT")
                if count > limit:
                    return window_s
                return max(0.0, times[over - 1] + window_s - now)
            if record:
                db.executemany("INSERT INTO events (kind, who, at) VALUES (?, ?, ?)",
                               [(kind, who, now)] * count)
            db.execute("COMMIT")
            return None
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: the quota counts cannot be read or written "
                             f"({exc}). Check that the state folder is writable and has "
                             f"room, or set the limits.* quotas to 0.") from None
        finally:
            db.close()

    def _connect(self) -> sqlite3.Connection:
        try:
            if not self._made:      # who asked for what, when: 0600, as the rest of the state
                self.path.parent.mkdir(parents=True, exist_ok=True)
                make_private(self.path)
            db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path}: the quota counts cannot be opened ({exc}). Check "
                             f"that the state folder is writable, or set the limits.* quotas "
                             f"to 0.") from None
        try:
            if not self._made:
                db.execute("CREATE TABLE IF NOT EXISTS events "
                           "(kind TEXT NOT NULL, who TEXT NOT NULL, at REAL NOT NULL)")
                db.execute("CREATE INDEX IF NOT EXISTS events_by_who ON events (kind, who, at)")
                self._made = True
            return db
        except sqlite3.Error as exc:
            db.close()
            raise StoreError(f"{self.path}: the quota counts cannot be opened ({exc}). Check "
                             f"that the state folder is writable, or set the limits.* quotas "
                             f"to 0.") from None


__all__ = ["LEDGER_FILE", "QuotaLedger"]
