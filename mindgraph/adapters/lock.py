"""One `pull` at a time per workspace: an advisory lock on a file in the state folder.

Two pulls of one workspace at once would each read the manifests, write raw/ and save their
own view of the manifests over the other's (owned.py, mirror.py). The second refuses at once,
naming the lock, instead of waiting behind a pull that may take minutes (a dry run writes
nothing and takes no lock).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from ..errors import AdapterError

LOCK_FILENAME = "pull.lock"


@contextlib.contextmanager
def pull_lock(state_dir: Path, dry_run: bool) -> Iterator[None]:
    """Hold the workspace's pull lock (a dry run takes none); AdapterError when another
    `mindgraph pull` holds it."""
    if dry_run:
        yield
        return
    try:
        import fcntl
    except ImportError:      # pragma: no cover - Windows: no advisory locks
        yield
        return
    lock_file = Path(state_dir) / LOCK_FILENAME
    try:
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock_file, "a+b")
    except OSError as exc:
        raise AdapterError(f"cannot write the state folder {lock_file.parent} "
                           f"({exc.strerror}): pull keeps its lock and manifests there. Make "
                           f"it a folder you can write to (`--dry-run` writes nothing).") from exc
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise AdapterError(f"another `mindgraph pull` of this workspace is running (it "
                               f"holds the lock {lock_file}); nothing was pulled. Wait for it "
                               f"to finish, then pull again.") from exc
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
