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
from ..fsutil import sole_holder

LOCK_FILENAME = "pull.lock"


@contextlib.contextmanager
def pull_lock(state_dir: Path, dry_run: bool) -> Iterator[None]:
    """Hold the workspace's pull lock (a dry run takes none); AdapterError when another
    `mindgraph pull` holds it."""
    if dry_run:
        yield
        return
    lock_file = Path(state_dir) / LOCK_FILENAME
    with sole_holder(
            lock_file,
            cannot_open=lambda exc: AdapterError(
                f"cannot write the state folder {lock_file.parent} ({exc.strerror}): pull keeps "
                f"its lock and manifests there. Make it a folder you can write to (`--dry-run` "
                f"writes nothing)."),
            busy=lambda exc: AdapterError(
                f"another `mindgraph pull` of this workspace is running (it holds the lock "
                f"{lock_file}); nothing was pulled. Wait for it to finish, then pull again.")):
        yield
