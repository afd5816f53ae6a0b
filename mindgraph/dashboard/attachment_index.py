"""The attachment files under raw/, by path and by file name, kept current without a walk.

An embed found by file name alone (``![[picture.png]]`` for raw/any/folder/picture.png)
needs every file name under raw/. Walking raw/ for each dashboard page or attachment request
cost a full directory walk per view (tens of milliseconds on a vault of 10,000 files). The
index is built once per raw folder (per process, shared by every viewer) and kept current by
its folders' change stamps: a folder's mtime and ctime change whenever an entry is added,
removed or renamed in it, so each question stats the known folders (one ``stat`` each, not
a listing) and lists again only the folders that changed. A folder listed within ``RACY_S``
of its own mtime is listed again next time (a file added in the same clock tick as the
listing leaves the stamp as it was: git's "racy" index entries).

What it serves from is every non-markdown entry that is no symlink, in folders reached
through no symlink, skipping hidden and tool folders, as ``page.anchors.AttachmentFiles`` sees
raw/ with ``symlinks=False``. It also holds, apart, the entries that are symlinks to no
folder, for `check` alone (``finder(links=True)``): a symlinked attachment is there for a
reader in Obsidian, so check does not call it missing, as the walk it did on every call
(``AttachmentFiles`` with symlinks) did not. Visibility is applied per question (``visible``), never stored: one
index serves every view, and a view finds no file of a scope it does not see. A stale answer
can only name a file that is gone or changed; the route resolves and checks the real file
before it serves anything (dashboard/attachments.py).
"""

from __future__ import annotations

import os
import posixpath
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..page.anchors import SKIP_DIRS

RACY_S = 2.0
_MAX_INDEXES = 8          # raw folders a process keeps an index of (a server has one)


class AttachmentIndex:
    """The attachment files under ``root`` (see the module docstring)."""

    def __init__(self, root: Path):
        self.root = root
        self._lock = threading.Lock()
        self._stamps: dict[str, tuple[int, int] | None] = {}   # folder → stamp (None: racy)
        self._files: dict[str, tuple[str, ...]] = {}  # folder → its attachment file names
        self._subdirs: dict[str, tuple[str, ...]] = {}
        self._by_path: dict[str, list[str]] = {}     # lower-case path → paths, sorted
        self._by_name: dict[str, list[str]] = {}     # lower-case file name → paths, sorted
        # the same for the symlinks to no folder (for check: never served)
        self._links: dict[str, tuple[str, ...]] = {}
        self._links_by_path: dict[str, list[str]] = {}
        self._links_by_name: dict[str, list[str]] = {}
        self.listings = 0                              # folders listed so far (for tests)

    def finder(self, visible: Callable[[str], bool] | None = None, *, links: bool = False
               ) -> Callable[[str, str], bool]:
        """``exists(target, source)`` for one page render (or one `check`): the folders are
        checked on its first question only (a page without attachment embeds costs
        nothing). ``links``: as `check` asks (page.check.check_vault), a symlink to a file
        counts, and a path that climbs (``..``) that finds nothing is still looked for by its
        file name (as ``page.anchors.AttachmentFiles`` does)."""
        checked = False

        def exists(target: str, source: str) -> bool:
            nonlocal checked
            if not checked:
                self.refresh()
                checked = True
            if not links:
                return self._lookup(target, source, visible) is not None
            return any(self._lookup(target, source, visible, tables, climbs_by_name=True)
                       is not None for tables in ((self._by_path, self._by_name),
                                                  (self._links_by_path, self._links_by_name)))

        return exists

    def locator(self, visible: Callable[[str], bool] | None = None
                ) -> Callable[[str, str], str | None]:
        """``locate`` for one page render: the folders are checked on its first question
        only, as ``finder``'s (each question stat'ed every folder of raw/ again: a page of
        7,500 embeds of one picture, 157,000 stats a view on 15 folders)."""
        checked = False

        def located(target: str, source: str) -> str | None:
            nonlocal checked
            if not checked:
                self.refresh()
                checked = True
            return self._lookup(target, source, visible)

        return located

    def locate(self, target: str, source: str,
               visible: Callable[[str], bool] | None = None) -> str | None:
        """The path (relative to raw/) of the file an attachment link to ``target`` in the
        page at ``source`` finds: by its path from raw/ or from the page's folder, else by
        its file name alone (the first such path in path order); None when none is seen."""
        self.refresh()
        return self._lookup(target, source, visible)

    def _lookup(self, target: str, source: str, visible: Callable[[str], bool] | None,
                tables: tuple[dict[str, list[str]], dict[str, list[str]]] | None = None,
                climbs_by_name: bool = False) -> str | None:
        by_path, by_name = tables or (self._by_path, self._by_name)
        raw = target.strip().replace("\\", "/").lstrip("/")
        if not raw:
            return None
        folder = posixpath.dirname(source)
        climbs = ".." in raw.split("/")     # from the page's folder only (attachments.py)
        with self._lock:
            for candidate in ((posixpath.join(folder, raw),) if climbs else
                              (raw, posixpath.join(folder, raw))):
                found = self._first(by_path, posixpath.normpath(candidate).lower(), visible)
                if found is not None:
                    return found
            if climbs and not climbs_by_name:
                return None
            return self._first(by_name, raw.rsplit("/", 1)[-1].lower(), visible)

    def refresh(self) -> None:
        """List again the folders whose stamp changed since they were listed (all of them
        the first time)."""
        with self._lock:
            if not self._stamps:
                self._list("")
            else:
                for folder, stamp in list(self._stamps.items()):
                    if folder in self._stamps and _stamp(self._path(folder)) != stamp:
                        self._list(folder)

    @staticmethod
    def _first(table: dict[str, list[str]], key: str,
               visible: Callable[[str], bool] | None) -> str | None:
        return next((p for p in table.get(key, ()) if visible is None or visible(p)), None)

    def _path(self, folder: str) -> Path:
        return self.root / folder if folder else self.root

    def _list(self, folder: str) -> None:
        """(Re)list ``folder``: its files replace the ones it had, a new subfolder is listed,
        a subfolder gone is dropped with everything below it. A work list, not recursion: a
        tree deeper than Python's recursion limit (1,000 folders) is listed too."""
        pending = [folder]
        while pending:
            pending.extend(self._list_one(pending.pop()))

    def _list_one(self, folder: str) -> list[str]:
        """List ``folder`` alone; the subfolders that are new (to be listed next)."""
        started = time.time_ns()
        stamp = _stamp(self._path(folder))
        files: list[str] = []
        links: list[str] = []
        subdirs: list[str] = []
        try:
            with os.scandir(self._path(folder)) as entries:
                for entry in entries:
                    try:
                        if entry.is_symlink():     # never followed, never served
                            if not entry.is_dir() and \
                                    not entry.name.lower().endswith((".md", ".markdown")):
                                links.append(entry.name)     # for check (``finder``)
                            continue
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                                subdirs.append(entry.name)
                        elif not entry.name.lower().endswith((".md", ".markdown")):
                            files.append(entry.name)
                    except OSError:
                        continue
        except OSError:
            stamp = None if folder == "" else stamp   # raw/ missing: look again next time
            if folder:
                self._drop(folder)
                return []
        self.listings += 1
        # an entry changed in the listing's clock tick moves the mtime (and ctime) to that
        # tick: only a recent mtime can hide one
        racy = stamp is not None and started - stamp[0] < RACY_S * 1e9
        self._stamps[folder] = None if racy else stamp
        self._set_files(folder, tuple(sorted(files)))
        self._set_files(folder, tuple(sorted(links)), linked=True)
        old = set(self._subdirs.get(folder, ()))
        self._subdirs[folder] = tuple(subdirs)
        for gone in old - set(subdirs):
            self._drop(_join(folder, gone))
        return [_join(folder, name) for name in subdirs
                if _join(folder, name) not in self._stamps]

    def _drop(self, folder: str) -> None:
        """Forget ``folder`` and everything below it (a work list, as in ``_list``)."""
        pending = [folder]
        while pending:
            gone = pending.pop()
            self._stamps.pop(gone, None)
            self._set_files(gone, ())
            self._set_files(gone, (), linked=True)
            pending.extend(_join(gone, name) for name in self._subdirs.pop(gone, ()))

    def _set_files(self, folder: str, names: tuple[str, ...], linked: bool = False) -> None:
        files, by_path, by_name = (self._links, self._links_by_path, self._links_by_name) \
            if linked else (self._files, self._by_path, self._by_name)
        old = files.get(folder, ())
        if old == names:
            return
        for name in set(old) - set(names):
            path = _join(folder, name)
            _discard(by_path, path.lower(), path)
            _discard(by_name, name.lower(), path)
        for name in set(names) - set(old):
            path = _join(folder, name)
            _insert(by_path, path.lower(), path)
            _insert(by_name, name.lower(), path)
        if names:
            files[folder] = names
        else:
            files.pop(folder, None)


def _stamp(path: Path) -> tuple[int, int] | None:
    """A folder's change stamp: its mtime and ctime (a tool that sets the mtime back, as
    ``rsync -t`` does, still moves the ctime); None when it is gone."""
    try:
        found = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_ctime_ns


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _insert(table: dict[str, list[str]], key: str, path: str) -> None:
    paths = table.setdefault(key, [])
    paths.append(path)
    paths.sort()


def _discard(table: dict[str, list[str]], key: str, path: str) -> None:
    paths = table.get(key)
    if paths is not None and path in paths:
        paths.remove(path)
        if not paths:
            del table[key]


_INDEXES: dict[Path, AttachmentIndex] = {}
_INDEXES_LOCK = threading.Lock()


def attachment_index(raw_dir: Path) -> AttachmentIndex:
    """The process's index of ``raw_dir`` (one per folder, shared by every view)."""
    key = Path(os.path.abspath(raw_dir))
    with _INDEXES_LOCK:
        index = _INDEXES.pop(key, None) or AttachmentIndex(key)
        _INDEXES[key] = index                       # most recently used last
        while len(_INDEXES) > _MAX_INDEXES:
            del _INDEXES[next(iter(_INDEXES))]
        return index


__all__ = ["RACY_S", "AttachmentIndex", "attachment_index"]
