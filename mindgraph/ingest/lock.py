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
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / LOCK_FILENAME, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise IngestError(f"another `mindgraph ingest` is running on {state_dir.parent} "
                              f"(it holds {handle.name}). Wait for it to finish.") from exc
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
