"""Keeping vectors current in a long-running process (server, MCP, library).

Once hybrid search has used vectors, pages that change are embedded as the core syncs them,
before the query that could see them. What cannot be embedded then waits in ``pending`` with
the reason in ``note`` (which every hybrid answer repeats in ``degradation``):

- more than ``serve.embed_changes_max_chunks`` sections at once (a big ingest: run `embed`);
- the embedding provider or the store failing (retried every ``RETRY_S`` seconds);
- an `embed` running in this process: it re-plans the waiting pages before it finishes, so it
  never writes back vectors of text that changed while it ran;
- an embed of another process holding the store's own lock (pgvector: another workspace's
  `mindgraph embed` writing the same table and tenant, or its server's embedding of changed
  pages; stores/pg_embed_lock.py): taken without waiting, so no request waits on it, and
  tried again later. Unlocked, the two interleaved, each planning against the other's
  half-written rows.

A page whose vectors another process stored meanwhile costs nothing when it is retried, so the
note clears by itself after `mindgraph embed` in a terminal. The owner (``Mindgraph``) calls
every method under its core lock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

from ..errors import EmbedBusy, in_general_terms, note_around
from ..page.model import Page
from .lock import store_lock
from .sync import sync_changed_pages

RETRY_S = 10.0          # how often pages that could not be embedded are tried again
MAX_RETRY_S = 300.0     # ... at most, while the provider keeps failing
NO_LIMIT = 1 << 30


class LiveVectors:
    """Which changed pages still lack vectors, and why."""

    def __init__(self, max_chunks: int, batch_size: int,
                 moved: Callable[[], Mapping[str, Any]] = dict):
        self.max_chunks = max_chunks
        self.batch_size = batch_size
        self.moved = moved              # where moved pages came from (sync.plan_sync)
        self.in_use = False             # hybrid search has used vectors in this process
        self.pending: set[str] = set()
        self.note: str | None = None
        self.embeds_running = 0
        self._tried = 0.0
        self._backoff = 1               # doubles while the provider keeps failing

    def changed(self, touched: Collection[str], embed: Callable[[int], None]) -> None:
        """Pages were added, changed or removed: embed them now (through
        ``embed(max_chunks)``, which calls ``catch_up``) unless a running `embed` will."""
        if not touched or not self.in_use:
            return
        self.pending |= set(touched)
        if not self.embeds_running:
            embed(self.max_chunks)
        elif self.note is None:
            self.note = ("changed pages wait for the `embed` running now; vector results may "
                         "miss them until it finishes")

    def due(self) -> bool:
        """True when a retry of what failed is due."""
        return time.monotonic() - self._tried > min(RETRY_S * self._backoff, MAX_RETRY_S)

    def tried(self) -> None:
        """Something vector-related was just (re)tried: the next retry waits."""
        self._tried = time.monotonic()

    def catch_up(self, pages: Mapping[str, Page], unreadable: Collection[str],
                 connect: Callable[[], tuple[Any, Any]], max_chunks: int) -> bool:
        """Embed the pending pages (up to ``max_chunks`` sections; 0 plans only, so a note
        clears once another process has embedded them). ``connect`` gives the (provider,
        store). Does nothing while an `embed` runs: it catches up when the last one ends.
        True when the note changed (answers built before are stale)."""
        if self.embeds_running:
            return False
        self.tried()
        if not self.pending:
            return False
        before = self.note
        try:
            provider, store = connect()
            with store_lock(store, wait=False, holder="catch-up"):
                self.note = sync_changed_pages(pages, self.pending, provider, store,
                                               max_chunks=max_chunks,
                                               batch_size=self.batch_size,
                                               unreadable=unreadable, moved=self.moved())
        except EmbedBusy as exc:
            busy = str(exc).split(". Run again")[0]
            self.note = (f"changed pages wait: {busy}; tried again in {RETRY_S:.0f} s, "
                         f"vector results may miss them until then")
        except Exception as exc:  # noqa: BLE001 - runs before a query, which must not fail
            self.note = note_around(in_general_terms(exc), "changed pages could not be "
                                    "embedded ({}); vector results may miss them until "
                                    "`mindgraph embed` runs")
        if self.note is None:
            self.pending = set()
            self._backoff = 1
        elif "could not be embedded" in self.note:
            # A provider that is down costs every retry its timeouts, under the core lock:
            # back off, up to five minutes.
            self._backoff = min(self._backoff * 2, 64)
        return self.note != before
