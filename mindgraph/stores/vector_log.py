"""The append-only change log beside an embedded model file: ``<model>.log``.

A flush appends what changed since the last one as one entry instead of rewriting the whole
``<model>.npz`` (at 500,000 sections that file is ~0.9 GB: rewriting it per batch of 64
cost more than embedding the batch). The .npz is rewritten — compacted, with the log folded
in — only when the log has grown as large as it (and at least ``COMPACT_FLOOR`` bytes), so
every row is written a bounded number of times however long `embed` runs.

Layout: ``MAGIC`` and the 16-byte generation of the .npz the log belongs to; then entries,
each ``<u64 length><u32 crc32><payload>``, the payload being ``<u32 n><n bytes of UTF-8 JSON
ops><float32 rows of every upsert, in order>``. An op is ``["u", [[page, chunk_id,
section_id, hash, scope], ...]]`` (its vectors follow in the float32 part) or ``["r", page,
chunk_ids or null]`` (null: the whole page).

Crash safety: a compaction writes the new .npz (new generation) first, then a new empty log
(both atomically): a log of another generation is one already folded in and is ignored. An
entry is appended and fsync'ed before the flush returns; one torn by a kill fails its length
or checksum, ends the log there, and the next writer (under the folder's lock) cuts it off
before appending. Entries are replayed in order onto the .npz's rows, so a reader that has
seen part of the log reads only the rest.
"""

from __future__ import annotations

import json
import os
import struct
import time
import zlib
from pathlib import Path
from typing import NamedTuple
from typing import Sequence

import numpy as np

from ..fsutil import atomic_write_bytes, open_regular

MAGIC = b"MGVLOG1\n"
HEADER = len(MAGIC) + 16
COMPACT_FLOOR = 32 * 1024 * 1024   # below this the log is never compacted into the .npz
WRITING_S = 5.0
_FRAME = struct.Struct("<QI")
_COUNT = struct.Struct("<I")

# ("upsert", rows, matrix) or ("remove", page, chunk ids or None)
Op = tuple[str, object, object]


def log_path(npz_path: Path) -> Path:
    """Where the log of a model file lives."""
    return npz_path.with_suffix(".log")


def encode(ops: Sequence[Op]) -> bytes:
    """One log entry holding ``ops`` (framed, with its checksum)."""
    listed: list[list[object]] = []
    matrices: list[bytes] = []
    for op, a, b in ops:
        if op == "upsert":
            listed.append(["u", a])
            matrices.append(np.ascontiguousarray(b, dtype="<f4").tobytes())
        else:
            listed.append(["r", a, None if b is None else sorted(b)])  # type: ignore[arg-type]
    text = json.dumps(listed, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    payload = b"".join([_COUNT.pack(len(text)), text, *matrices])
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


def decode(payload: bytes, dimension: int) -> list[Op]:
    """The ops of one entry's payload (checked by its checksum already)."""
    (n,) = _COUNT.unpack_from(payload)
    listed = json.loads(payload[_COUNT.size:_COUNT.size + n].decode("utf-8"))
    vectors = np.frombuffer(payload, dtype="<f4", offset=_COUNT.size + n).astype(np.float32)
    vectors = vectors.reshape(-1, dimension) if dimension else vectors.reshape(0, 0)
    ops: list[Op] = []
    at = 0
    for item in listed:
        if item[0] == "u":
            rows = [[str(field) for field in row] for row in item[1]]
            ops.append(("upsert", rows, vectors[at:at + len(rows)]))
            at += len(rows)
        else:
            ops.append(("remove", str(item[1]), None if item[2] is None else set(item[2])))
    if at != vectors.shape[0]:
        raise ValueError(f"{vectors.shape[0]} vectors for {at} rows")
    return ops


class LogRead(NamedTuple):
    """What a read of the log found."""

    ops: list[Op]
    end: int                  # end of the last whole entry
    seen: tuple[int, int]     # (inode, size) of the file
    damaged: int              # bytes after ``end`` that are no entry (0: none, or in progress)


def read(path: Path, generation: bytes, dimension: int, offset: int = 0) -> LogRead | None:
    """The log from ``offset`` (0: from the start), or None when there is no log of this
    generation (missing, another generation's, not a log). A torn or damaged entry ends the
    log where it starts (``damaged`` counts the bytes from there); one written in the last
    ``WRITING_S`` seconds may be another process's append in progress, so the size reported
    is then where it starts (the caller reads again once the size changes)."""
    ops: list[Op] = []
    try:
        with open_regular(path) as handle:
            info = os.fstat(handle.fileno())
            if handle.read(HEADER) != MAGIC + generation:
                return None
            end = max(offset, HEADER)
            handle.seek(end)
            while True:   # entry by entry: a large log is never all in memory at once
                frame = handle.read(_FRAME.size)
                if len(frame) < _FRAME.size:
                    break
                length, crc = _FRAME.unpack(frame)
                # zeros (a hole, a tail the disk never wrote) frame an empty payload whose
                # checksum is zero too: no entry is that short, so the log ends there
                if length < _COUNT.size or length > info.st_size:
                    break
                payload = handle.read(length)
                if len(payload) != length or zlib.crc32(payload) != crc:
                    break
                try:
                    ops.extend(decode(payload, dimension))
                except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError,
                        struct.error):
                    break
                end += _FRAME.size + length
            tail = handle.seek(0, os.SEEK_END) > end
    except OSError:
        return None
    size = info.st_size
    if tail and time.time() - info.st_mtime < WRITING_S:
        size = end    # maybe an entry being written: look again at the next refresh
    return LogRead(ops, end, (info.st_ino, size), size - end)


def start(path: Path, generation: bytes) -> int:
    """A new empty log of ``generation`` (replacing any); its size."""
    atomic_write_bytes(path, MAGIC + generation)
    return HEADER


def append(path: Path, entry: bytes, valid_end: int) -> tuple[int, tuple[int, int]]:
    """Append ``entry`` after the last whole entry (cutting off a killed writer's torn
    tail) and make it durable; (the new end, (inode, size) of the file). Call under the
    folder's lock."""
    with open(path, "r+b") as handle:
        handle.truncate(valid_end)
        handle.seek(valid_end)
        handle.write(entry)
        handle.flush()
        os.fsync(handle.fileno())
        info = os.fstat(handle.fileno())
        return valid_end + len(entry), (info.st_ino, info.st_size)


def new_generation() -> bytes:
    """A fresh random generation for a compacted .npz and its log."""
    return os.urandom(16)
