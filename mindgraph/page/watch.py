"""Change notification for the wiki folder, so a long-running process need not re-scan it.

A query must see every file changed before it arrived. Scanning the folder before each query
guarantees that but costs a stat per file (~5 ms at 900 pages, ~50 ms at 10,000). On Linux
the kernel queues an inotify event inside the write/rename/unlink call itself, so once a
writer's call has returned the event is already readable: draining the queue without waiting
(``changes()``) is as strict as a scan and costs microseconds when nothing changed.

``changes()`` returns the markdown paths that may have changed (the cache then re-reads and
hashes just those), or None when only a full scan can tell: the event queue overflowed, a
folder appeared, moved or vanished (its files were never watched, or its watch now sits at
another path). Then the watcher starts over on a fresh inotify instance before returning, so
the caller's full scan comes after the new watches and nothing falls between the two.

Where inotify is missing (macOS, Windows, some containers), the per-user watch limit is
reached, or the wiki is on a network or FUSE file system (NFS, SMB, sshfs, a VM's shared
folder: they accept watches but never report changes made on the other side),
``WikiWatcher.start`` returns None and callers keep scanning. A watcher that breaks later
says so (``broken``) and its cache goes back to scanning.

Files with more than one name (hard links, symlinked pages) are the cache's business: an edit
through the other name raises no event here, so the cache compares their stat every time.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path

from ..fsutil import read_text
from .vault import MARKDOWN_SUFFIXES, SKIP_DIRS

try:  # Linux only; elsewhere the page cache scans
    from inotify_simple import INotify
    from inotify_simple import flags as _flags
except (ImportError, OSError):  # pragma: no cover - depends on the platform
    INotify = None  # type: ignore[assignment,misc]
    _flags = None  # type: ignore[assignment]


def _mask() -> int:
    f = _flags
    return (f.CREATE | f.DELETE | f.MODIFY | f.CLOSE_WRITE | f.ATTRIB | f.MOVED_FROM
            | f.MOVED_TO | f.DELETE_SELF | f.MOVE_SELF | f.ONLYDIR | f.DONT_FOLLOW
            | f.EXCL_UNLINK)


# File systems whose changes may come from another machine or kernel, unseen by inotify.
_REMOTE_FS = ("nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "virtiofs", "vboxsf", "ceph",
              "glusterfs", "lustre", "afs", "gpfs", "fuse")


def file_system_type(path: Path, mounts: str = "/proc/self/mounts") -> str:
    """The type of the file system holding ``path`` ("" when it cannot be told)."""
    try:
        lines = read_text(mounts, errors="replace").splitlines()
        target = os.path.realpath(path)
    except OSError:
        return ""
    best, kind = "", ""
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[2]
    return kind


def remote_file_system(path: Path) -> str:
    """The type of ``path``'s file system when it is one whose changes inotify may miss
    (network, FUSE), else ""."""
    kind = file_system_type(path)
    return kind if kind.split(".")[0] in _REMOTE_FS else ""


def _watched_folder(name: str) -> bool:
    return name not in SKIP_DIRS and not name.startswith(".")


def _folder_changes() -> int:
    f = _flags
    return f.CREATE | f.DELETE | f.MOVED_FROM | f.MOVED_TO


def _page_name(name: str) -> bool:
    return not name.startswith(".") and name.lower().endswith(MARKDOWN_SUFFIXES)


# Each open watcher holds an inotify instance, of which a user has 128 by default
# (fs.inotify.max_user_instances) across every program.
_OPEN: "weakref.WeakSet[WikiWatcher]" = weakref.WeakSet()


def open_watchers() -> list["WikiWatcher"]:
    """This process's watchers that are not closed yet."""
    return list(_OPEN)


class WikiWatcher:
    """An inotify watch on every folder of a wiki that the page scan would visit."""

    def __init__(self, root: Path, inotify: "INotify"):
        self.root = root
        self._inotify = inotify
        self._folders: dict[int, str] = {}     # watch descriptor -> "" or "sub/folder/"
        self._broken = False
        _OPEN.add(self)

    @property
    def broken(self) -> bool:
        """True once the watch cannot be trusted any more (callers scan instead)."""
        return self._broken

    @classmethod
    def start(cls, root: str | Path) -> "WikiWatcher | None":
        """Watch ``root`` and its folders, or None where inotify cannot do it."""
        if INotify is None:
            return None
        if remote_file_system(Path(root)):
            return None
        try:
            watcher = cls(Path(root), INotify())
        except OSError:
            return None
        if not watcher._watch_tree():
            watcher.close()
            return None
        return watcher

    def changes(self) -> set[str] | None:
        """Relative paths of pages touched since the last call, or None: scan everything."""
        if self._broken:
            return None
        try:
            events = self._inotify.read(timeout=0)
        except OSError:
            self._broken = True
            return None
        touched: set[str] = set()
        rescan = False
        for event in events:
            folder = self._folders.get(event.wd)
            if event.mask & (_flags.Q_OVERFLOW | _flags.IGNORED | _flags.DELETE_SELF
                             | _flags.MOVE_SELF):
                rescan = True
            elif folder is None:
                continue
            elif event.mask & _flags.ISDIR:
                # a folder appearing, vanishing or moving; touching or chmod-ing one
                # (ATTRIB) changes no page
                rescan = rescan or bool(event.mask & _folder_changes() and event.name
                                        and _watched_folder(event.name))
            elif _page_name(event.name):
                touched.add(folder + event.name)
        if rescan:
            self._restart()
            return None
        return touched

    def close(self) -> None:
        """Stop watching (the descriptor is released); from here ``changes()`` answers None
        (scan), as a broken watcher's does."""
        _OPEN.discard(self)
        self._broken = True
        try:
            self._inotify.close()
        except OSError:  # pragma: no cover - already closed
            pass

    def _restart(self) -> None:
        """Drop every watch and watch the tree as it is now (or give up: scans from here)."""
        self.close()
        self._folders = {}
        try:
            self._inotify = INotify()
        except OSError:
            return
        self._broken = False
        _OPEN.add(self)
        if not self._watch_tree():
            self._broken = True
            self.close()        # its partial watches would hold the user's watch budget

    def _watch_tree(self) -> bool:
        """Add a watch to every folder the scan visits; False when the root cannot be watched
        or the kernel refuses more watches (fs.inotify.max_user_watches)."""
        stack = [(self.root, "")]
        while stack:
            path, rel = stack.pop()
            try:
                wd = self._inotify.add_watch(path, _mask())
            except FileNotFoundError:
                if not rel:
                    return False
                continue            # vanished meanwhile; its parent's event covers it
            except OSError:
                return False
            self._folders[wd] = rel
            try:
                entries = list(os.scandir(path))
            except OSError:
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and _watched_folder(entry.name):
                    stack.append((Path(entry.path), rel + entry.name + "/"))
        return True
