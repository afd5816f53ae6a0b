"""The watcher service: events in, debounced batches, one run per batch with a real change.

Threads: the event source (events.py) feeds ``PendingChanges``; the loop (here) takes a
debounced batch, drops the touches (digests.py) and runs the rest (run.py). A run is never
interrupted by events: what arrives meanwhile waits in the pending set for the next run, so no
change is lost, and a change the running ingest already saw costs the next run nothing (its
hash now matches). A run that fails (another `mindgraph ingest` holds the lock, the store is
down) puts its changes back and is tried again after a pause that doubles up to a minute;
so does a startup run that fails. A run that would remove most pages (raw/ empty, unmounted or
the wrong folder: ingest/guard.py) is such a failure: held, not applied, and the status says
so (state "held") until a run is not held.

A run updates the indexes in memory only (``Mindgraph.defer_saves``): their state files under
.mindgraph (at 100,000 notes seconds to write) are saved once nothing has changed for
SAVE_AFTER_S seconds, and when the watcher stops, so a change is searchable without waiting
for them. The watcher keeps an ``IngestSession`` (the ingest state and title index between
runs), so a run that edits a few raw notes compiles just those; its records go to the state's
journal, folded into the state file at the same idle time.

The start order makes the startup reconcile safe: the watches are set up first, then the
first run syncs everything, so a change made during that run is pending for the next one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..core import Mindgraph
from ..ingest.session import IngestSession
from ..ingest.state import STATE_FILENAME
from .digests import real_changes
from .events import EventSource
from .paths import RAW, WIKI, Areas, Change
from .notices import raw_summary
from .pending import PendingChanges
from .run import sync_run
from .status import RunRecord, SyncStatus, now_iso

DEBOUNCE_MS = 500           # quiet time that ends a burst
MAX_WAIT_MS = 10_000        # ... but a batch never waits longer than this after its first event
MAX_RETRY_S = 60.0
SAVE_AFTER_S = 10.0         # quiet time before the state files are brought up to date


class Watcher:
    """Keeps one workspace's wiki, keyword index, graph and vectors current with its files."""

    def __init__(self, mg: Mindgraph, *, polling: bool = False, poll_interval_ms: int = 1000,
                 debounce_ms: int = DEBOUNCE_MS, max_wait_ms: int = MAX_WAIT_MS,
                 embed: bool = True, on_run: Callable[[RunRecord], None] | None = None,
                 save_after_s: float = SAVE_AFTER_S,
                 on_notice: Callable[[str], None] | None = None):
        s = mg.settings
        self.mg = mg
        mg.defer_saves = True
        self.save_after_s = save_after_s
        self.embed = embed
        self.on_run = on_run
        self.on_notice = on_notice      # what a run waits for (the apply lock), as it waits
        self.quiet_s = debounce_ms / 1000
        self.max_wait_s = max(max_wait_ms, debounce_ms) / 1000
        self.areas = Areas(s.raw_dir, s.wiki_dir, s.state_dir)
        self.pending = PendingChanges()
        self.source = EventSource(self.areas, self.pending.add, polling=polling,
                                  poll_interval_ms=poll_interval_ms)
        self.status = SyncStatus(s.state_dir, lambda: [str(c) for c in self.pending.snapshot()])
        self.indexed: dict[str, str] = {}       # wiki page → hash of the bytes indexed
        self.failing: dict[str, str] = {}       # raw note → why it failed (run.py)
        self.warned: dict[str, tuple[str, ...]] = {}    # raw note → its compile warnings
        self.session = IngestSession()
        self._max_bytes = {RAW: s.compile.max_note_bytes, WIKI: s.limits.max_page_bytes}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._started = False       # the startup run succeeded (retried until it does)

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
            self._started = self._run([], "start", 0).error is None
            self._loop()
        finally:
            self._save_state()
            if self.status.state != "failed":
                self.status.update(state="stopped", running=None)

    def _loop(self) -> None:
        retry_s = 1.0
        while not self._stop.is_set():
            idle = retry_s if not self._started else \
                self.save_after_s if self.mg.unsaved_state else None
            batch = self.pending.take(self.quiet_s, self.max_wait_s, idle)
            if batch is None:
                break
            if not batch and not self._started:     # the startup run failed or was held
                self._started = self._run([], "start", 0).error is None
                retry_s = 1.0 if self._started else min(retry_s * 2, MAX_RETRY_S)
                continue
            if not batch:                       # quiet for save_after_s: save the state
                self._save_state()
                continue
            real, touches = real_changes(batch, self.areas.roots, self._synced(),
                                         self._max_bytes)
            last = self.status.last_run
            if not real and last is not None and last.held:
                # notes back as they were (a vault mounted again) are no change to the held
                # state's records, but the run must be made to clear the hold
                real, touches = sorted(batch), 0
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

    def _save_state(self) -> None:
        try:
            self.mg.save_state()
            self.session.compact()
        except Exception as exc:  # noqa: BLE001 - a file not written is rebuilt when loaded
            self.status.update(error=f"state files under {self.mg.settings.state_dir} not "
                                     f"saved ({type(exc).__name__}: {exc}); they are rebuilt "
                                     "from the wiki when next loaded")

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
                          embed=self.embed, indexed=self.indexed, session=self.session,
                          failing=self.failing, warned=self.warned, notice=self.on_notice)
        if trigger == "start" and record.error is None:
            # part of the start: the status says idle once a change is served in a targeted
            # run (at 100,000 notes the term regex alone takes seconds)
            started = time.perf_counter()
            self.session.warm()
            record.seconds = round(record.seconds + time.perf_counter() - started, 3)
        if self.on_run is not None:     # first: whoever sees the status idle sees the record
            self.on_run(record)
        self.status.finished(record, touches, "idle", raw_summary(self.failing, self.warned))
        return record

    def _synced(self) -> dict[str, Mapping[str, str]]:
        """What each path held when last synced: raw notes from the ingest state (what their
        pages were compiled from: the session's, read again only when its files changed; at
        100,000 notes it is 170 MB), wiki pages from this watcher's memory."""
        state = self.session.state_for(self.mg.settings.state_dir / STATE_FILENAME)
        return {RAW: _Hashes(state.files), WIKI: self.indexed}


class _Hashes(Mapping[str, str]):
    """Raw path → the content hash its record holds (a view: no copy of 100,000 records)."""

    def __init__(self, records: Mapping[str, Any]):
        self._records = records

    def __getitem__(self, path: str) -> str:
        return self._records[path].sha256

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)
