"""Small file-system helpers shared by every stage: hashing and crash-safe writes."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of raw bytes."""
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    """Hex SHA-256 of text encoded as UTF-8."""
    return sha256_bytes(text.encode("utf-8"))


def _umask() -> int:
    mask = os.umask(0o022)    # the only way to read it before Python 3.13: set and restore
    os.umask(mask)
    return mask


_UMASK = _umask()       # read once, at import, before any thread could race the two calls


def atomic_write_bytes(path: Path, data: bytes, durable: bool = True,
                       shared: bool = False) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new file.

    A temp file in the same folder is written, flushed, fsync'ed and renamed over the target
    with os.replace (atomic on POSIX); the folder is fsync'ed so the rename itself is durable.
    ``durable=False`` skips both fsyncs (still atomic, not yet on disk after a power loss), for
    callers that make many files durable at once later.

    The temp file is private (0600), right for state. ``shared``: a file people and other
    programs read (wiki pages, pulled notes) gets the mode of the file it replaces, or the
    one ``open()`` would give a new file (0666 minus the umask).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if shared and hasattr(os, "fchmod"):
            try:
                mode = stat.S_IMODE(os.stat(path).st_mode)
            except FileNotFoundError:
                mode = 0o666 & ~_UMASK
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    """Atomically write UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value: Any) -> None:
    """Atomically write a JSON document (sorted keys, so equal states give equal bytes)."""
    atomic_write_text(path, json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
