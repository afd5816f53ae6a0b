"""The corpus cache of a remote adapter: every project and item, on disk, for a time-to-live.

A note app answers over the network, with rate limits; search, `pull` and `create` would
otherwise list the whole account again and again. The cache keeps the last full listing in
``<state>/apps/<adapter>.json`` for ``ttl_s`` seconds (``adapters[].cache_ttl_s``, 300 by
default): within it, listing, searching and pulling cost no API call. A write through the
adapter (`create`, `update`) replaces that item in the cached corpus, and an item the app says
is gone is dropped from it, so the next read sees both without a new listing. Another process's
write is seen too: the file is re-read when its modification time changes. A file that does
not parse, or (given ``max_bytes``: the loader gives ``limits.max_pull_bytes``) is larger than
that, is ignored unread (the next read lists the app again, within the same budget); a corpus
whose file would be larger is kept in memory only.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from ..fsutil import Stamp, atomic_write_text, read_bytes, stamp_of
from .base import Item, Project

DEFAULT_TTL_S = 300.0
VERSION = 1


@dataclass(frozen=True)
class Corpus:
    """Every project and item of an account, and when they were listed (POSIX seconds)."""

    projects: tuple[Project, ...]
    items: tuple[Item, ...]
    fetched_at: float

    def item(self, item_id: str) -> Item | None:
        """The cached item of that id, if any."""
        return next((i for i in self.items if i.id == item_id), None)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"version": VERSION, "fetched_at": self.fetched_at,
                "projects": [{"id": p.id, "name": p.name, "kind": p.kind}
                             for p in self.projects],
                "items": [i.to_json() for i in self.items]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Corpus":
        """The inverse of ``to_json`` (KeyError, ValueError or TypeError when malformed)."""
        if data.get("version") != VERSION:
            raise ValueError("another cache version")
        return cls(tuple(Project(str(p["id"]), str(p["name"]), p.get("kind", "tasks"))
                         for p in data["projects"]),
                   tuple(Item.from_json(i) for i in data["items"]), float(data["fetched_at"]))


class CorpusCache:
    """One adapter's corpus, in memory and at ``path`` (None: memory only), fresh for
    ``ttl_s`` seconds (0: every read lists the app); a file over ``max_bytes`` is neither
    read nor written."""

    def __init__(self, path: Path | None, ttl_s: float = DEFAULT_TTL_S,
                 clock: Callable[[], float] = time.time, max_bytes: int | None = None):
        self.path = path
        self.ttl_s = ttl_s
        self.max_bytes = max_bytes
        self.clock = clock
        self._lock = threading.RLock()
        self._corpus: Corpus | None = None
        self._seen: Stamp | None = None

    def get(self, fetch: Callable[[], tuple[list[Project], list[Item]]]) -> Corpus:
        """The cached corpus while it is fresh, else ``fetch()``'s, stored."""
        with self._lock:
            corpus = self._fresh()
            if corpus is None:
                projects, items = fetch()
                corpus = Corpus(tuple(projects), tuple(items), self.clock())
                self._store(corpus)
            return corpus

    def cached(self) -> Corpus | None:
        """The corpus while it is fresh (no call to the app), else None."""
        with self._lock:
            return self._fresh()

    def put(self, item: Item) -> None:
        """Replace (or add) ``item`` in the cached corpus, if one is cached."""
        with self._lock:
            corpus = self._fresh()
            if corpus is not None:
                items = tuple(i for i in corpus.items if i.id != item.id) + (item,)
                self._store(replace(corpus, items=items))

    def drop(self, item_id: str) -> None:
        """Forget an item the app no longer has."""
        with self._lock:
            corpus = self._fresh()
            if corpus is not None and corpus.item(item_id) is not None:
                self._store(replace(corpus, items=tuple(i for i in corpus.items
                                                        if i.id != item_id)))

    def _fresh(self) -> Corpus | None:
        if self.ttl_s <= 0:
            return None
        self._reload()
        corpus = self._corpus
        if corpus is None or self.clock() - corpus.fetched_at >= self.ttl_s:
            return None
        return corpus

    def _reload(self) -> None:
        if self.path is None:
            return
        try:
            seen = stamp_of(self.path.stat())
        except OSError:
            return
        if seen == self._seen:
            return
        self._seen = seen
        try:
            data = read_bytes(self.path, max_bytes=self.max_bytes,
                              limit_key="limits.max_pull_bytes")
            self._corpus = Corpus.from_json(json.loads(data))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self._corpus = None

    def _store(self, corpus: Corpus) -> None:
        self._corpus = corpus
        if self.ttl_s <= 0 or self.path is None:
            return
        text = json.dumps(corpus.to_json(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        if self.max_bytes is not None and len(text.encode("utf-8")) > self.max_bytes:
            self.path.unlink(missing_ok=True)     # no older corpus read back in its place
            self._seen = None
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path, text)
        self._seen = stamp_of(self.path.stat())
