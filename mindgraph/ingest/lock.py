"""One ingest at a time per workspace: an advisory lock on a file in the state folder."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from ..errors import IngestError

LOCK_FILENAME = "ingest.lock"


@contextlib.contextmanager
def ingest_lock(state_dir: Path, dry_run: bool) -> Iterator[None]:
    """Hold the workspace's ingest lock (a dry run only reads, so it takes none)."""
    if dry_run:
        yield
        return
    try:
        import fcntl
    except ImportError:      # Windows: no advisory locks; run one ingest at a time
        yield
        return
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        handle = open(state_dir / LOCK_FILENAME, "a+")
    except OSError as exc:      # a read-only state folder, or a file where it belongs
        raise IngestError(f"cannot write the state folder {state_dir} ({exc.strerror}): "
                          f"ingest keeps its lock and state there. Make it a folder you can "
                          f"write to (`--dry-run` writes nothing there).") from exc
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise IngestError(f"another `mindgraph ingest` is running on {state_dir.parent} "
                              f"(it holds {handle.name}). Wait for it to finish.") from exc
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
