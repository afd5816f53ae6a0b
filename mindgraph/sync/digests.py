"""Real changes or touches: a path counts only when its content differs from what was synced.

A raw note is compared (SHA-256) with the hash its ingest record holds — what the wiki was
compiled from; a wiki page with the hash of the bytes the watcher last indexed and embedded.
So touching a file, saving it unchanged, an editor's delete-and-recreate of the same bytes, a
temp file that came and went, and the pages our own ingest just wrote are not changes. A
folder counts when it appeared or went (it exists, and nothing synced lies under it, or the
other way round): a folder moved or deleted reports no event for the notes inside it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

from ..fsutil import read_bytes, sha256_bytes
from .paths import RAW, Change

EMPTY = sha256_bytes(b"")
GONE = ""


def file_digest(path: Path, max_bytes: int) -> str | None:
    """SHA-256 of a file, GONE when it does not exist, None when it cannot be read (then
    only a run can tell what it is: ingest reports it)."""
    try:
        return sha256_bytes(read_bytes(path, max_bytes=max_bytes, follow_symlinks=False))
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return GONE
    except OSError:
        return None


def real_changes(batch: Iterable[Change], roots: Mapping[str, Path],
                 synced: Mapping[str, Mapping[str, str]], max_bytes: Mapping[str, int]
                 ) -> tuple[list[Change], int]:
    """The changes of ``batch`` whose content differs from ``synced`` (area → path → hash),
    and how many were mere touches."""
    real: list[Change] = []
    touches = 0
    for change in sorted(batch):
        known = synced[change.area]
        root = roots[change.area]
        if change.folder:
            is_folder = (root / change.path).is_dir()
            if is_folder != _holds_any(known, change.path):
                real.append(change)
            else:
                touches += 1
            continue
        now = file_digest(root / change.path, max_bytes[change.area])
        before = known.get(change.path, GONE)
        if now is not None and (now == before or (change.area == RAW and now == EMPTY
                                                  and before == GONE)):
            touches += 1        # same bytes, or an empty note that was never compiled
        else:
            real.append(change)
    return real, touches


def _holds_any(known: Collection[str], folder: str) -> bool:
    prefix = folder.rstrip("/") + "/"
    return any(p.startswith(prefix) for p in known)
