"""One ingest at a time per workspace: an advisory lock on a file in the state folder."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

from ..errors import IngestBusy, IngestError
from ..fsutil import sole_holder

LOCK_FILENAME = "ingest.lock"


@contextlib.contextmanager
def ingest_lock(state_dir: Path, dry_run: bool) -> Iterator[None]:
    """Hold the workspace's ingest lock (a dry run only reads, so it takes none)."""
    if dry_run:
        yield
        return
    lock_file = Path(state_dir) / LOCK_FILENAME
    with sole_holder(
            lock_file,
            cannot_open=lambda exc: IngestError(
                f"cannot write the state folder {state_dir} ({exc.strerror}): ingest keeps its "
                f"lock and state there. Make it a folder you can write to (`--dry-run` writes "
                f"nothing there)."),
            busy=lambda exc: IngestBusy(
                f"another `mindgraph ingest` is running on {Path(state_dir).parent} (it holds "
                f"{lock_file}). Wait for it to finish.")):
        yield
