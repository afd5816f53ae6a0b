"""Answers of the LLM for search (expanded queries, rerankings), kept across processes.

A search LLM call costs seconds and money; agents ask the same things again, often from a new
process (each `mindgraph search` is one). One SQLite file under the state folder, keyed by
the provider's identity, the task and the text, holds up to ``MAX_ENTRIES`` answers (the least
recently used go first). A cache that cannot be read or written is no cache, never an error.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Callable, TypeVar

from ..fsutil import make_private

T = TypeVar("T")

MAX_ENTRIES = 5000


class AnswerCache:
    """A small persistent key → text map (thread- and process-safe through SQLite)."""

    def __init__(self, path: Path, max_entries: int = MAX_ENTRIES):
        self.path = Path(path)
        self.max_entries = max_entries
        self._private = False

    def get(self, key: str) -> str | None:
        """The stored answer for ``key``, or None."""
        def read(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            db.execute("UPDATE answers SET used = ? WHERE key = ?", (time.time(), key))
            return str(row[0])
        return self._run(read)

    def put(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, dropping the least recently used beyond the limit."""
        def write(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO answers (key, value, used) VALUES (?, ?, ?)",
                       (key, value, time.time()))
            db.execute("DELETE FROM answers WHERE key IN (SELECT key FROM answers "
                       "ORDER BY used DESC LIMIT -1 OFFSET ?)", (self.max_entries,))
        self._run(write)

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> T | None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self._private:   # it holds what agents asked: 0600, as the rest of the state
                make_private(self.path)
                self._private = True
            db = sqlite3.connect(self.path, timeout=2.0)
        except (OSError, sqlite3.Error):
            return None
        try:
            with db:                    # one transaction, committed on success
                db.execute("CREATE TABLE IF NOT EXISTS answers "
                           "(key TEXT PRIMARY KEY, value TEXT NOT NULL, used REAL NOT NULL)")
                return work(db)
        except sqlite3.Error:
            return None
        finally:
            db.close()
