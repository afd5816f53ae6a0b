"""What `pull` removes: the raw notes of a remote adapter's items that the app no longer has.

A note app is the truth about its items: an item deleted there (the app answers 404, or its
listing no longer holds it) should leave raw/ as a deleted file does, so that `ingest` removes
its page. `pull` keeps a manifest per adapter, ``<state>/pulled/<adapter>.json``: each raw
path it filed and the SHA-256 it wrote there (owned.py overwrites only such files). A path in
a remote adapter's manifest that the adapter no longer returns is deleted only while its file
still holds those very bytes; a file someone edited in raw/ since is kept and reported.
The manifest is written ahead of the files: before an adapter's documents are filed it records,
as pending, the hash each may be about to give its path (and the copy beside it), and after
them the settled hashes. A pull killed midway leaves no file it wrote unrecorded: the next load
settles each pending path whose file holds those bytes.
Nothing else is ever deleted: not a file another adapter or a person put there, not anything
of an adapter that failed or rejected a document in this run, and nothing of fetch-only
adapters (the filesystem one, custom ones).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterable, Mapping

from ..fsutil import atomic_write_json, read_bytes
from .base import safe_target

MANIFEST_FOLDER = "pulled"
FILES, PENDING = "files", "pending"


def manifest_path(state_dir: Path, adapter: str) -> Path:
    """Where the manifest of ``adapter`` lives."""
    return Path(state_dir) / MANIFEST_FOLDER / f"{safe_target(adapter) or 'adapter'}.json"


def load_manifest(path: Path, raw_root: Path | None = None) -> dict[str, str]:
    """raw path → SHA-256 of what `pull` wrote there (empty when missing or unreadable).

    With ``raw_root``, the entries a pull recorded as pending (about to be written) and did
    not settle (it was killed) are settled here: a file that holds the bytes pull was about
    to write there is pull's, with that hash; one that holds anything else keeps the settled
    hash (the write did not happen, or someone edited the file since)."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    if not isinstance(data.get(FILES), dict):          # the flat form older versions wrote
        return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}
    owned = {str(k): str(v) for k, v in data[FILES].items() if isinstance(v, str)}
    pending = data.get(PENDING)
    if raw_root is not None and isinstance(pending, dict):
        for rel, hashes in pending.items():
            found = file_digest(raw_root / str(rel)) if isinstance(hashes, list) else None
            if found is not None and found in hashes:
                owned[str(rel)] = found
    return owned


def file_digest(path: Path) -> str | None:
    """SHA-256 of a regular file, None when it is not there (or not a plain file)."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return hashlib.sha256(read_bytes(path, follow_symlinks=False)).hexdigest()
    except OSError:
        return None


def gone(raw_root: Path, manifest: dict[str, str], current: set[str], dry_run: bool
         ) -> list[tuple[str, str, str]]:
    """Remove the manifest's files the adapter no longer returns: (raw path, status, reason)
    with status "removed" or "kept" (edited in raw/ since it was pulled)."""
    out = []
    for rel in sorted(set(manifest) - current):
        path = raw_root / rel
        digest = file_digest(path)
        if digest is None:
            continue                       # already gone
        if digest != manifest[rel]:
            out.append((rel, "kept", f"raw/{rel}: its item is gone from the app, but the file "
                                     f"was edited since it was pulled; delete it by hand if "
                                     f"it should go."))
            continue
        if not dry_run:
            path.unlink()
        out.append((rel, "removed", "its item is gone from the app"))
    return out


def save_manifest(path: Path, entries: dict[str, str],
                  pending: Mapping[str, Iterable[str]] | None = None) -> None:
    """Record the files the adapter now owns (raw path → SHA-256 pull wrote there) and, while
    a pull writes, ``pending``: raw path → the hashes it may be about to write there (written
    before the files, so that a pull killed midway leaves none of its files unrecorded)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {FILES: dict(sorted(entries.items())),
                             PENDING: {rel: sorted(set(hashes))
                                       for rel, hashes in sorted((pending or {}).items())}})
