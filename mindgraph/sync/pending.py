"""Changes waiting for the next run, debounced: a burst of events becomes one batch.

Events are added from the watching thread; ``take`` blocks (no wake-ups while nothing is
pending, so an idle watcher costs no CPU here) until something is pending and then until no
new event came for ``quiet_s`` (an editor's save — temp file, rename, several writes — is one
batch), or at most ``max_wait_s`` after the first one, so a folder that never stops changing
is still synced. Changes that arrive while a run is in progress stay here for the next run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable

from .paths import Change


class PendingChanges:
    """A thread-safe set of changes with the time each was first seen."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._changes: dict[Change, float] = {}
        self._last = 0.0
        self._closed = False

    def add(self, changes: Iterable[Change]) -> None:
        """Record changes (from any thread) and wake ``take``."""
        now = time.monotonic()
        with self._cond:
            added = False
            for change in changes:
                self._changes.setdefault(change, now)
                added = True
            if added:
                self._last = now
                self._cond.notify_all()

    def close(self) -> None:
        """Make ``take`` return now (what is pending stays unread)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def snapshot(self) -> list[Change]:
        """What is pending, without taking it."""
        with self._cond:
            return sorted(self._changes)

    def take(self, quiet_s: float, max_wait_s: float,
             idle_s: float | None = None) -> set[Change] | None:
        """The next debounced batch (taken off the set); None once closed; an empty set when
        nothing came within ``idle_s`` seconds (None: wait for ever)."""
        with self._cond:
            idle_until = None if idle_s is None else time.monotonic() + idle_s
            while not self._changes and not self._closed:
                if idle_until is None:
                    self._cond.wait()
                elif not self._cond.wait(max(0.0, idle_until - time.monotonic())) \
                        and not self._changes and not self._closed:
                    return set()
            while not self._closed:
                first = min(self._changes.values())
                due = min(self._last + quiet_s, first + max_wait_s)
                left = due - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            if self._closed:
                return None
            batch = set(self._changes)
            self._changes.clear()
            return batch
