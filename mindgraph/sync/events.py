"""The source of file-system events: native notifications through watchfiles, or stat scans.

watchfiles wraps the Rust ``notify`` crate: inotify on Linux, FSEvents on macOS,
ReadDirectoryChangesW on Windows (notify falls back to polling by itself when the native watch
cannot be set up). Where native events cannot be trusted — network and FUSE file systems accept
watches but never report changes made on another machine (see page/watch.py) — or when asked
(``--polling``), we scan instead: every ``poll_interval_ms`` each file's (mtime in ns, size,
inode) is compared with the last scan. Our own scan, not notify's poll watcher, which compares
whole-second modification times only and so missed a second save within the same second.

``EventSource.run`` blocks in its own thread and hands every batch of events to a callback as
``Change`` values; ``ready`` is set once the watches are in place (a change after that is never
missed), and ``run`` returns when ``stop`` is set.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ..fsutil import stamp_of
from ..ingest.scan import IGNORED_DIRS
from ..page.watch import remote_file_system
from .paths import Areas, Change

Stat = tuple[int, int, int, int]   # mtime_ns, ctime_ns, inode, size (fsutil.stamp_of)

# notify's grouping of events inside one call; the real debounce is pending.py's
_STEP_MS = 50
_GROUP_MS = 200


class EventSource:
    """Watches the workspace's raw/ and wiki/ folders."""

    def __init__(self, areas: Areas, sink: Callable[[list[Change]], None], *,
                 polling: bool = False, poll_interval_ms: int = 1000):
        self.areas = areas
        self.sink = sink
        remote = "" if polling else next(
            (f"{f} is on {kind}, which reports no changes made elsewhere"
             for f in areas.folders() if (kind := remote_file_system(f))), "")
        self.polling = polling or bool(remote)
        self.poll_interval_ms = poll_interval_ms
        self.reason = remote
        self.ready = threading.Event()
        self.error: str = ""

    @property
    def backend(self) -> str:
        """How changes are noticed, in words."""
        if self.polling:
            return (f"stat scans every {self.poll_interval_ms} ms"
                    + (f" ({self.reason})" if self.reason else ""))
        return "native events (watchfiles)"

    def run(self, stop: threading.Event) -> None:
        """Deliver events until ``stop`` is set (call in a thread of its own)."""
        if self.polling:
            self._scan_until(stop)
            return
        from watchfiles._rust_notify import RustNotify   # watchfiles' documented backend

        folders = [str(f) for f in self.areas.folders()]
        try:
            with RustNotify(folders, False, self.polling, self.poll_interval_ms, True,
                            True) as notify:
                self.ready.set()
                while not stop.is_set():
                    events = notify.watch(_GROUP_MS, _STEP_MS, 0, stop)
                    if isinstance(events, str):      # "stop" (or a signal: main thread's)
                        continue
                    changes = [c for _, path in events
                               if (c := self.areas.change_of(path)) is not None]
                    if changes:
                        self.sink(changes)
        except Exception as exc:  # noqa: BLE001 - reported in the status, not a traceback
            self.error = (f"watching {', '.join(folders)} stopped ({type(exc).__name__}: "
                          f"{exc}); restart the watcher, or try --polling")
        finally:
            self.ready.set()

    def _scan_until(self, stop: threading.Event) -> None:
        before = self._scan()
        self.ready.set()
        while not stop.wait(self.poll_interval_ms / 1000):
            now = self._scan()
            touched = {p for p in now.keys() ^ before.keys()}
            touched |= {p for p, info in now.items() if before.get(p, info) != info}
            before = now
            changes = [c for p in sorted(touched) if (c := self.areas.change_of(p)) is not None]
            if changes:
                self.sink(changes)

    def _scan(self) -> dict[str, Stat]:
        """Every file and folder the watcher cares about, with its stat."""
        seen: dict[str, Stat] = {}
        stack = [str(f) for f in self.areas.folders()]
        state = str(self.areas.state_dir)
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or entry.name in IGNORED_DIRS \
                        or entry.path == state:
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                    is_folder = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                seen[entry.path] = stamp_of(info)
                if is_folder:
                    stack.append(entry.path)
        return seen
