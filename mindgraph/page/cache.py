"""A persisted, incremental cache of parsed pages: only files that changed are read again.

``PageCache.refresh()`` walks the wiki with ``os.scandir`` and compares each markdown file's
stamp (mtime_ns, ctime_ns, inode, size) with the cache: the change time and the inode too,
since a file rewritten at the same size with its mtime set back (``touch -r``, an editor that
keeps times, a sync tool) keeps (mtime, size) but not its ctime, which no one can set. Files with a new stat are read and their SHA-256 compared:
only a different hash makes a "changed" page (touching a file is not a change). Files that
disappeared are "removed". The parsed pages are saved under the state folder, replaced
atomically, so a cold start costs one unpickle instead of parsing every page; their texts
(bodies and sections) stay in that file, mapped, and are read when asked for (store.py).

A long-running process (server, MCP, library) need not scan at all: with ``watch`` on, the
second full refresh starts a ``WikiWatcher`` (inotify, see watch.py) and later refreshes re-read
only the files the kernel reported, falling back to a scan whenever the watcher cannot tell.
The first refresh never starts one, so a one-shot CLI command spends nothing on it.

A file with another name (a hard link, or a symlinked page) can change with no event in the
wiki: an edit through its other name. Those files are compared by their stats, yet not all of
them before every query (100,000 hard-linked notes cost 1.3 s a query): each refresh checks
the share of them that the time since the previous refresh calls for, from a rotating cursor,
so every one is checked at least once in any ALIAS_RECHECK_S seconds of refreshes and an
edit through another name shows in every answer given ALIAS_RECHECK_S after it (sooner in
small vaults: at least ALIAS_MIN_BATCH files are checked each time).

Two safety nets: a file modified within RACY_NS of a scan may be modified again within the
same timestamp tick without changing its size, so it is re-read on the next refresh (git's
"racy clean" rule); and the cache carries a fingerprint of the page parser's source, so a new
parser never serves pages parsed by an old one.

The walk follows exactly the rules of ``vault.iter_markdown_files`` (same skipped folders,
no symlinked folders), so ``pages`` always equals ``load_vault(root).pages``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import math
import marshal
import os
import stat
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Collection, Iterable, Iterator

from .. import statefile
from ..fsutil import read_bytes, sha256_bytes, stamp_of as _stamp
from .model import Page
from .store import (PageTexts, StoredPage, encode_texts, forget_decoded, holds_own_blob,
                    interned, read_state_with_texts, resident_fields, write_state_with_texts)
from .vault import MARKDOWN_SUFFIXES, SKIP_DIRS, PageLimits, PageProblem, page_notices, read_page
from .watch import WikiWatcher

CACHE_VERSION = 4      # 4: stamps hold ctime and inode; 3: blobs checksummed; 2: texts after the pickle (store.py); 1: one pickle
RACY_NS = 2_000_000_000
ALIAS_RECHECK_S = 2.0       # every file with another name is compared within this time
ALIAS_MIN_BATCH = 64        # files with another name compared at each refresh, at least
_PARSER_MODULES = ("model.py", "markdown.py", "links.py", "parse.py", "vault.py", "summary.py",
                   "html_images.py")


@dataclass(frozen=True)
class ChangeSet:
    """Pages added, changed (new content hash) and removed by a refresh, as sorted paths."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def to_dict(self) -> dict[str, list[str]]:
        """JSON-friendly form."""
        return {"added": list(self.added), "changed": list(self.changed),
                "removed": list(self.removed)}


@dataclass
class _Entry:
    stamp: tuple[int, int, int, int]        # (mtime_ns, ctime_ns, inode, size): see _stamp
    result: Page | PageProblem
    racy: bool = False


@dataclass
class PageCache:
    """Parsed pages of one wiki folder, refreshed from the files' stats and hashes."""

    root: Path
    cache_file: Path | None = None
    watch: bool = False
    _entries: dict[str, _Entry] = field(default_factory=dict)
    _pages: dict[str, Page] = field(default_factory=dict)
    _scans: int = 0
    _watcher: WikiWatcher | None = None
    _aliased: set[str] = field(default_factory=set)    # hard-linked or symlinked pages
    _texts: PageTexts | None = field(default=None, repr=False)   # the state file's blobs
    _alias_ring: list[str] | None = None    # _aliased in order, for the rotating cursor
    _alias_cursor: int = 0
    _aliases_checked_at: float = 0.0        # clock() of the last check of any of them

    limits: PageLimits = PageLimits()
    alias_recheck_s: float = ALIAS_RECHECK_S
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def open(cls, root: str | Path, cache_file: str | Path | None,
             watch: bool = False, limits: PageLimits = PageLimits()) -> "PageCache":
        """The cache persisted in ``cache_file`` for ``root`` (empty if absent or stale)."""
        cache = cls(Path(root), Path(cache_file) if cache_file else None, watch, limits=limits)
        if cache.cache_file is not None:
            cache._load()
        return cache

    @property
    def pages(self) -> dict[str, Page]:
        """Parsed pages by vault-relative path (do not modify)."""
        return self._pages

    @property
    def problems(self) -> list[PageProblem]:
        """Files that are not pages, and pages with bad frontmatter, by path."""
        out = []
        for path in sorted(self._entries):
            result = self._entries[path].result
            if isinstance(result, PageProblem):
                out.append(result)
            else:
                out.extend(page_notices(result, self.limits))
        return out

    @property
    def watching(self) -> bool:
        """True while refreshes read inotify events instead of scanning the folder."""
        return self._watcher is not None

    def refresh(self, only: Iterable[str] | None = None, save: bool = True) -> ChangeSet:
        """Re-read what changed on disk (or only the paths in ``only``) and return the changes."""
        reread: Collection[str] = ()
        if only is None and self._watcher is not None:
            touched = self._watcher.changes()
            if self._watcher.broken:
                self.close()                # scans from here on
            if touched is not None:
                due = self._aliases_due()
                if not touched and not due:
                    return ChangeSet((), (), ())
                # Reported by the kernel: compare hashes, not stats. Files with another name
                # (hard links, symlinks) can change with no event here: compare their stats.
                only, reread = touched | due, touched
        elif only is None and self.watch and self._scans == 1:
            # Watches go in before the scan, so a change during the scan is reported later.
            self._watcher = WikiWatcher.start(self.root)
        with paused_gc():
            changes = self._refresh(only, save, reread)
        if only is None:
            self._scans += 1
        if save and self._texts is not None and self._texts.damaged:
            self.save()         # a whole file again, with the texts repaired from the wiki
        return changes

    def _aliases_due(self) -> set[str]:
        """The files with another name to compare now: the share of them the time since the
        last check calls for (all of them per ``alias_recheck_s``), at least ALIAS_MIN_BATCH,
        taken from a rotating cursor."""
        if not self._aliased:
            return set()
        if self._alias_ring is None:
            self._alias_ring = sorted(self._aliased)
        ring, now = self._alias_ring, self.clock()
        elapsed = now - self._aliases_checked_at
        share = len(ring) if self.alias_recheck_s <= 0 else \
            math.ceil(len(ring) * elapsed / self.alias_recheck_s)
        count = min(len(ring), max(ALIAS_MIN_BATCH, share))
        start = self._alias_cursor % len(ring)
        due = ring[start:start + count] + ring[:max(0, start + count - len(ring))]
        self._alias_cursor = (start + count) % len(ring)
        self._aliases_checked_at = now
        return set(due)

    def close(self) -> None:
        """Stop watching the folder (refreshes scan again if the cache is used later), and
        drop the decoded texts kept process-wide, which would hold this cache's state file
        open after the cache is gone."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        forget_decoded()

    def _refresh(self, only: Iterable[str] | None, save: bool, reread: Collection[str] = ()
                 ) -> ChangeSet:
        started = time.time_ns()
        if only is None:
            seen = dict(_scan(self.root))
            stale = [p for p in self._entries if p not in seen]
            self._set_aliased({rel for rel, found in seen.items() if found[2]})
            self._aliases_checked_at = self.clock()     # every one was just compared
        else:
            seen = {}
            stale = []
            for rel in only:
                found = _stat(self.root / rel)
                if found is None:
                    if rel in self._entries:
                        stale.append(rel)
                else:
                    seen[rel] = found
                self._mark_aliased(rel, found is not None and found[2])
        added, changed, removed = [], [], []
        dirty = bool(stale)
        for rel in stale:
            entry = self._entries.pop(rel)
            if isinstance(entry.result, Page):
                del self._pages[rel]
                removed.append(rel)
        for rel, (file, stamp, aliased) in seen.items():
            entry = self._entries.get(rel)
            racy = max(stamp[0], stamp[1]) >= started - RACY_NS
            if (entry is not None and not entry.racy and rel not in reread
                    and entry.stamp == stamp):
                continue
            dirty = True
            old = entry.result if entry is not None else None
            if isinstance(old, Page) and not aliased and self._same_bytes(file, old):
                # touched, copied or racy, same bytes: the parsed page stands (no parse)
                self._entries[rel] = _Entry(stamp, old, racy)
                continue
            result = read_page(self.root, file, self.limits)
            self._entries[rel] = _Entry(stamp, result, racy)
            if isinstance(result, Page):
                if isinstance(old, Page):
                    if old.content_hash == result.content_hash:
                        self._entries[rel].result = old  # same bytes: nothing changed
                        continue
                    changed.append(rel)
                else:
                    added.append(rel)
                self._pages[rel] = result
            elif isinstance(old, Page):
                del self._pages[rel]
                removed.append(rel)
        if dirty and save and self.cache_file is not None:
            self.save()
        return ChangeSet(tuple(sorted(added)), tuple(sorted(changed)), tuple(sorted(removed)))

    def _same_bytes(self, file: Path, page: Page) -> bool:
        """True when ``file`` still holds the bytes ``page`` was parsed from (read and hashed,
        not parsed); False when they differ or cannot be read (read_page then says why)."""
        try:
            data = read_bytes(file, max_bytes=self.limits.max_bytes,
                              limit_key="limits.max_page_bytes")
        except OSError:     # UnreadableFile included
            return False
        return bool(page.content_hash) and sha256_bytes(data) == page.content_hash

    def _set_aliased(self, aliased: set[str]) -> None:
        if aliased != self._aliased:
            self._aliased = aliased
            self._alias_ring = None         # rebuilt in order when next due

    def _mark_aliased(self, rel: str, aliased: bool) -> None:
        if aliased != (rel in self._aliased):
            if aliased:
                self._aliased.add(rel)
            else:
                self._aliased.discard(rel)
            self._alias_ring = None

    def save(self) -> None:
        """Persist the cache atomically (a crash leaves the previous cache or this one): the
        pages' resident fields pickled, their texts after it (``store``), which every page
        then reads from the new file instead of memory."""
        if self.cache_file is None:
            return
        records: dict[str, tuple] = {}
        fresh: dict[str, bytes] = {}        # blobs of pages parsed since the last save
        offset = 0
        for rel, entry in self._entries.items():
            result = entry.result
            if isinstance(result, Page):
                if holds_own_blob(result):
                    _, length, crc = result.__dict__["_at"]
                    result = (resident_fields(result), (offset, length, crc))
                else:
                    fresh[rel] = encode_texts(result)
                    length = len(fresh[rel])
                    # one copy of each repeated string in the file (the pickle shares them),
                    # so loading makes no duplicates to free (freed, they fragment the heap)
                    result = (interned(resident_fields(result)),
                              (offset, length, zlib.crc32(fresh[rel])))
                offset += length
            records[rel] = (entry.stamp, entry.racy, result)
        state = {"version": CACHE_VERSION, "fingerprint": parser_fingerprint(),
                 "root": str(self.root.resolve()), "limits": self.limits,
                 "marshal": marshal.version, "entries": records, "texts_length": offset}
        blobs = (fresh[rel] if rel in fresh else encode_texts(self._entries[rel].result)
                 for rel, record in records.items() if isinstance(record[2], tuple))
        texts = write_state_with_texts(self.cache_file, "pages", CACHE_VERSION, state, blobs)
        self._use_texts(texts, records)

    def _use_texts(self, texts: PageTexts, records: dict[str, tuple]) -> None:
        """Every page reads its texts from ``texts`` (records: where each one's blob is)."""
        forget_decoded()
        self._watch_texts(texts)
        for rel, (_, _, record) in records.items():
            if not isinstance(record, tuple):
                continue
            entry = self._entries[rel]
            page = entry.result
            if isinstance(page, StoredPage):
                page.rehome(texts, record[1])
            else:
                entry.result = self._pages[rel] = StoredPage.of(record[0], texts, record[1])

    def _watch_texts(self, texts: PageTexts) -> None:
        """A damaged blob of ``texts`` is parsed again from its wiki file."""
        root, limits = self.root, self.limits   # not self: no cycle (paused_gc freezes them)

        def repair(rel: str) -> Page | None:
            page = read_page(root, root / rel, limits)
            return page if isinstance(page, Page) else None

        texts.repair = repair
        self._texts = texts

    def _load(self) -> None:
        assert self.cache_file is not None
        with paused_gc():
            found = read_state_with_texts(self.cache_file, "pages", CACHE_VERSION)
        if found is None:
            return
        state, texts = found
        self._watch_texts(texts)
        if (state.get("version") != CACHE_VERSION
                or state.get("fingerprint") != parser_fingerprint()
                or state.get("limits") != self.limits
                or state.get("marshal") != marshal.version):
            return
        # A copy of the workspace (cp -r) or a moved one: its files got new stats, so each is
        # read and hashed once, and only one with other bytes is parsed again (_same_bytes).
        elsewhere = state.get("root") != str(self.root.resolve())
        entries: dict[str, _Entry] = {}
        with paused_gc():
            for rel, (stamp, racy, result) in state["entries"].items():
                if isinstance(result, tuple):
                    result = StoredPage.of(result[0], texts, result[1])
                entries[rel] = _Entry(stamp, result, racy or elsewhere)
        self._entries = entries
        self._pages = {p: e.result for p, e in self._entries.items() if isinstance(e.result, Page)}


def read_state(path: str | Path, kind: str, format_version: str | int) -> dict | None:
    """The state dict one of our caches saved (``statefile.read_state``, unpickled with the
    collector paused), or None: absent, written by another mindgraph or format, or damaged
    (callers then rebuild from the wiki; the next save replaces it)."""
    with paused_gc():
        return statefile.read_state(path, kind, format_version)


def open_pages(wiki_dir: str | Path, state_dir: str | Path, watch: bool = False,
               limits: PageLimits = PageLimits(), cache_name: str = "pages.pickle",
               save: bool = True) -> tuple[PageCache, ChangeSet]:
    """The page cache of ``wiki_dir`` kept in ``state_dir`` (file ``cache_name``; another
    folder, such as raw/, needs a name of its own), refreshed from disk (and saved there
    unless ``save`` is false)."""
    cache = PageCache.open(wiki_dir, Path(state_dir) / cache_name, watch, limits)
    return cache, cache.refresh(save=save)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building or unpickling many small objects.

    Those objects hold no reference cycles to collect, yet each generation-0 threshold crossing
    makes the collector traverse them: at 10,000 pages this halves build and load times.
    Afterwards the surviving objects are frozen (``gc.freeze``) so that a later full collection
    does not walk millions of long-lived objects (a ~1 s pause at 10,000 pages); refcounting
    still frees them when they are dropped.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.freeze()
            gc.enable()


@functools.lru_cache(maxsize=1)
def parser_fingerprint() -> str:
    """SHA-256 of the page parser's source files: a new parser invalidates cached pages."""
    digest = hashlib.sha256()
    folder = Path(__file__).parent
    for name in _PARSER_MODULES:
        try:
            digest.update(read_bytes(folder / name))
        except OSError:
            digest.update(name.encode())
    return digest.hexdigest()


def _scan(root: Path) -> Iterator[tuple[str, tuple[Path, tuple[int, int, int, int], bool]]]:
    """(relative path, (file, stamp, aliased)) of every markdown file, like
    iter_markdown_files; ``aliased``: the file has another name (a hard link or a symlink)."""
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name not in SKIP_DIRS and not name.startswith("."):
                        stack.append((Path(entry.path), prefix + name + "/"))
                    continue
                if name.startswith(".") or not name.lower().endswith(MARKDOWN_SUFFIXES):
                    continue
                if entry.is_file():
                    st = entry.stat()
                else:   # a symlink, FIFO, socket or device: read_page reports it
                    st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            aliased = entry.is_symlink() or st.st_nlink > 1
            yield prefix + name, (Path(entry.path), _stamp(st), aliased)


def _stat(file: Path) -> tuple[Path, tuple[int, int, int, int], bool] | None:
    """What ``_scan`` records for one file, or None when there is no such file (one system
    call for a file that is not a symlink: this runs for every file with another name)."""
    try:
        st = os.lstat(file)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(file)
        except OSError:     # a dangling symlink: read_page reports it, as in a scan
            return file, _stamp(st), True
        aliased = True
    else:
        aliased = st.st_nlink > 1
    if stat.S_ISDIR(st.st_mode):
        return None
    return file, _stamp(st), aliased
