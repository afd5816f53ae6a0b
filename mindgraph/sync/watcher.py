"""The watcher service: events in, debounced batches, one run per batch with a real change.

Threads: the event source (events.py) feeds ``PendingChanges``; the loop (here) takes a
debounced batch, drops the touches (digests.py) and runs the rest (run.py). A run is never
interrupted by events: what arrives meanwhile waits in the pending set for the next run, so no
change is lost, and a change the running ingest already saw costs the next run nothing (its
hash now matches). A run that fails (another `mindgraph ingest` holds the lock, the store is
down) puts its changes back and is tried again after a pause that doubles up to a minute.

The start order makes the startup reconcile safe: the watches are set up first, then the
first run syncs everything, so a change made during that run is pending for the next one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..core import Mindgraph
from ..ingest.state import STATE_FILENAME, IngestState
from .digests import real_changes
from .events import EventSource
from .paths import RAW, WIKI, Areas, Change
from .pending import PendingChanges
from .run import sync_run
from .status import RunRecord, SyncStatus, now_iso

DEBOUNCE_MS = 500           # quiet time that ends a burst
MAX_WAIT_MS = 10_000        # ... but a batch never waits longer than this after its first event
MAX_RETRY_S = 60.0


class Watcher:
    """Keeps one workspace's wiki, keyword index, graph and vectors current with its files."""

    def __init__(self, mg: Mindgraph, *, polling: bool = False, poll_interval_ms: int = 1000,
                 debounce_ms: int = DEBOUNCE_MS, max_wait_ms: int = MAX_WAIT_MS,
                 embed: bool = True, on_run: Callable[[RunRecord], None] | None = None):
        s = mg.settings
        self.mg = mg
        self.embed = embed
        self.on_run = on_run
        self.quiet_s = debounce_ms / 1000
        self.max_wait_s = max(max_wait_ms, debounce_ms) / 1000
        self.areas = Areas(s.raw_dir, s.wiki_dir, s.state_dir)
        self.pending = PendingChanges()
        self.source = EventSource(self.areas, self.pending.add, polling=polling,
                                  poll_interval_ms=poll_interval_ms)
        self.status = SyncStatus(s.state_dir, lambda: [str(c) for c in self.pending.snapshot()])
        self.indexed: dict[str, str] = {}       # wiki page → hash of the bytes indexed
        self._max_bytes = {RAW: s.compile.max_note_bytes, WIKI: s.limits.max_page_bytes}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # -- life cycle ---------------------------------------------------------------------------
    def start(self) -> "Watcher":
        """Watch in background threads (for servers); returns at once."""
        loop = threading.Thread(target=self.run, name="mindgraph-sync", daemon=True)
        self._threads.append(loop)
        loop.start()
        return self

    def run(self) -> None:
        """Watch in this thread until ``stop`` (or Ctrl-C): the startup sync, then a run per
        batch of real changes."""
        self.mg.settings.wiki_dir.mkdir(parents=True, exist_ok=True)
        source = threading.Thread(target=self._watch_events, name="mindgraph-events",
                                  daemon=True)
        self._threads.append(source)
        source.start()
        self.source.ready.wait()
        if self.source.error:
            self.status.update(state="failed", error=self.source.error)
            return
        self.status.update(backend=self.source.backend)
        try:
            self._warm()
            self._run([], "start", 0)
            self._loop()
        finally:
            if self.status.state != "failed":
                self.status.update(state="stopped", running=None)

    def _loop(self) -> None:
        retry_s = 1.0
        while not self._stop.is_set():
            batch = self.pending.take(self.quiet_s, self.max_wait_s)
            if batch is None:
                break
            real, touches = real_changes(batch, self.areas.roots, self._synced(),
                                         self._max_bytes)
            if not real:
                self.status.finished(None, touches, "idle")
                continue
            record = self._run(real, "change", touches)
            if record.error is None:
                retry_s = 1.0
            elif not self._stop.is_set():
                self.pending.add(real)          # not lost: tried again after a pause
                self._stop.wait(retry_s)
                retry_s = min(retry_s * 2, MAX_RETRY_S)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop watching; a run in progress finishes first (up to ``timeout`` seconds)."""
        self._stop.set()
        self.pending.close()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout)

    # -- internals ----------------------------------------------------------------------------
    def _watch_events(self) -> None:
        self.source.run(self._stop)
        if not self._stop.is_set():             # the source died: say so, stop the loop
            self.status.update(state="failed", error=self.source.error or "event source ended")
            self.pending.close()

    def _warm(self) -> None:
        """Open the page cache and the indexes, so each run updates them incrementally (and
        keeps their files under .mindgraph current for the next command), and load the
        embedding model, so the first change does not wait for it."""
        try:
            self.mg.sync()
            self.mg.keyword_index()
            self.mg.graph()
            if self.embed:
                self.mg.embedding_provider().embed_documents(["warm up"])
        except Exception:  # noqa: BLE001 - e.g. no wiki yet: the first run builds it
            pass

    def _run(self, changes: list[Change], trigger: str, touches: int) -> RunRecord:
        self.status.update(state="running", running={"since": now_iso(), "trigger": trigger,
                                                     "changes": [str(c) for c in changes]})
        record = sync_run(self.mg, changes, trigger=trigger, touches=touches,
                          embed=self.embed, indexed=self.indexed)
        self.status.finished(record, touches, "idle")
        if self.on_run is not None:
            self.on_run(record)
        return record

    def _synced(self) -> dict[str, dict[str, str]]:
        """What each path held when last synced: raw notes from the ingest state (what their
        pages were compiled from), wiki pages from this watcher's memory."""
        state = IngestState.load(self.mg.settings.state_dir / STATE_FILENAME)
        return {RAW: {p: r.sha256 for p, r in state.files.items()}, WIKI: self.indexed}
