"""The float32 rows of one embedded table: those of its model file read from the file when a
query needs them, the rows added since in memory.

A table searched through its HNSW graph (stores/ann.py, from ``EXACT_BELOW`` rows) reads
only the few hundred rows a query re-scores exactly, so its matrix need not be in the
process's memory: at 100,000 notes (459,000 MiniLM chunks) it is 705 MB that every `serve`
would hold. ``RowMatrix.from_file`` keeps the ``vectors`` member of the model's .npz where it
lies in the file (``np.savez`` stores members uncompressed) and reads the rows asked for with
``os.pread`` (from the kernel's page cache once read: shared by every process, given back
under memory pressure). A memory mapping was tried first: the kernel maps 16 pages around
each one touched, so 20 hybrid queries at 100,000 notes made 340 MB of the file resident in
the process and a few hundred all of it. A row written changes this process's copy of it
only (kept in memory, never written to the file); a row appended goes to the in-memory tail.
Rows come out as ordinary arrays, so the cosines computed from them are bit for bit those of
the matrix loaded into memory. A compaction replaces the file by a rename, so the open file
keeps the version the table was read from.
"""

from __future__ import annotations

import os
import struct
import weakref
import zipfile
from typing import BinaryIO

import numpy as np

_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")   # a zip member's local file header
_LOCAL_MAGIC = b"PK\x03\x04"


class FileRows:
    """A C-ordered float32 matrix at ``offset`` in an open file, read row by row on demand;
    rows written are kept in memory (``written``) and read from there."""

    def __init__(self, fd: int, offset: int, shape: tuple[int, int]):
        self.fd = fd
        self.offset = offset
        self.shape = shape
        self.row_bytes = 4 * shape[1]
        self.written: dict[int, np.ndarray] = {}
        weakref.finalize(self, os.close, fd)

    def __len__(self) -> int:
        return self.shape[0]

    def gather(self, rows: np.ndarray) -> np.ndarray:
        """The given rows (any order, repeats allowed) as a new array: one read per run of
        consecutive rows (a page's chunks are neighbours)."""
        wanted, where = np.unique(rows, return_inverse=True)
        found = np.empty((wanted.size, self.shape[1]), dtype=np.float32)
        if wanted.size:
            breaks = np.flatnonzero(np.diff(wanted) != 1) + 1
            starts = np.concatenate([[0], breaks]).tolist()
            ends = np.concatenate([breaks, [wanted.size]]).tolist()
            for a, b in zip(starts, ends):
                first = int(wanted[a])
                found[a:b] = self._read(first, first + b - a)
            if self.written:
                keys = np.fromiter(self.written, dtype=np.int64, count=len(self.written))
                at = np.searchsorted(wanted, keys)
                for key, i in zip(keys.tolist(), at.tolist()):
                    if i < wanted.size and wanted[i] == key:
                        found[i] = self.written[key]
        return found[where.reshape(-1)]

    def _read(self, start: int, stop: int) -> np.ndarray:
        size = self.row_bytes * (stop - start)
        data = os.pread(self.fd, size, self.offset + start * self.row_bytes) if size else b""
        if len(data) != size:
            raise OSError(f"the vector file ended before row {stop}")
        return np.frombuffer(data, dtype="<f4").reshape(stop - start, self.shape[1])

    def range(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start`` to ``stop`` as a new array (one read)."""
        out = self._read(start, stop).copy()
        for row, vector in self.written.items():
            if start <= row < stop:
                out[row - start] = vector
        return out


class RowMatrix:
    """Rows ``[0, len(base))`` in ``base`` (read from a file on demand), the rows after them in
    ``tail`` (grown by half when full). ``first(n)`` is the table's ``n`` live rows: the
    tail's when nothing is in a file, else a view of both parts. Every read of file rows
    (``matrix[rows]``, ``matrix[i:j]``, ``matrix[i]``) returns a new array."""

    def __init__(self, dimension: int, base: FileRows | None = None, count: int | None = None,
                 tail: np.ndarray | None = None):
        self.dimension = dimension
        self.base = base
        self.tail = tail if tail is not None else np.zeros((0, dimension), dtype=np.float32)
        self._count = count                   # rows a view shows (None: every row held)

    @classmethod
    def from_file(cls, handle: BinaryIO, member: str = "vectors.npy") -> "RowMatrix | None":
        """The float32 matrix stored as ``member`` of the .npz open as ``handle``, read on
        demand (through a duplicate of its descriptor); None when it cannot be (compressed,
        another dtype or layout, not a 2-D matrix): load it then."""
        try:
            offset, shape = _member_array(handle, member)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, struct.error):
            return None
        if len(shape) != 2:
            return None
        return cls(int(shape[1]), FileRows(os.dup(handle.fileno()), offset,
                                           (int(shape[0]), int(shape[1]))))

    @property
    def split(self) -> int:
        """Rows in the file."""
        return 0 if self.base is None else len(self.base)

    @property
    def shape(self) -> tuple[int, int]:
        held = self.split + self.tail.shape[0]
        return (held if self._count is None else self._count, self.dimension)

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def in_file(self) -> bool:
        """True when some rows are read from the file."""
        return self.split > 0

    def reserve(self, needed: int) -> None:
        """Room for ``needed`` rows (the tail grown by half, so appends stay amortised)."""
        held = self.split + self.tail.shape[0]
        if needed <= held:
            return
        # grown by half: a 500k-row matrix doubled would hold 0.8 GB it never uses
        size = max(needed - self.split, self.tail.shape[0] * 3 // 2, 64)
        grown = np.zeros((size, self.dimension), dtype=np.float32)
        grown[:self.tail.shape[0]] = self.tail
        self.tail = grown

    def first(self, n: int) -> "np.ndarray | RowMatrix":
        """The first ``n`` rows, without reading them."""
        if self.base is None:
            return self.tail[:n]
        return RowMatrix(self.dimension, self.base, n, self.tail)

    def __getitem__(self, key: object) -> np.ndarray:
        split = self.split
        if isinstance(key, (int, np.integer)):
            row = int(key)
            if not 0 <= row < len(self):
                raise IndexError(f"row {row} of {len(self)}")
            if row >= split:
                return self.tail[row - split]
            return self.base.gather(np.asarray([row]))[0]  # type: ignore[union-attr]
        if isinstance(key, slice):
            start, stop, step = key.indices(len(self))
            if step != 1:
                raise ValueError("a RowMatrix slice takes every row")
            stop = max(start, stop)
            if start >= split:
                return self.tail[start - split:stop - split]
            if stop <= split:
                return self.base.range(start, stop)  # type: ignore[union-attr]
            return np.concatenate([self.base.range(start, split),  # type: ignore[union-attr]
                                   self.tail[:stop - split]])
        rows = np.asarray(key, dtype=np.int64).reshape(-1)
        if rows.size and (rows.min() < 0 or rows.max() >= len(self)):
            raise IndexError(f"rows outside 0..{len(self) - 1}")
        if self.base is None:
            return self.tail[rows]
        out = np.empty((rows.size, self.dimension), dtype=np.float32)
        inside = rows < split
        out[inside] = self.base.gather(rows[inside])
        out[~inside] = self.tail[rows[~inside] - split]
        return out

    def __setitem__(self, key: object, value: np.ndarray) -> None:
        if not isinstance(key, (int, np.integer)):
            raise TypeError("a RowMatrix is written one row at a time")
        row = int(key)
        split = self.split
        if not 0 <= row < split + self.tail.shape[0]:
            raise IndexError(f"row {row} outside the matrix")
        if row < split:
            self.base.written[row] = np.array(value, dtype=np.float32)  # type: ignore[union-attr]
        else:
            self.tail[row - split] = value

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        whole = self[0:len(self)]
        return whole if dtype is None else whole.astype(dtype)

    def __matmul__(self, other: np.ndarray) -> np.ndarray:
        return np.asarray(self) @ other


def _member_array(handle: BinaryIO, member: str) -> tuple[int, tuple[int, ...]]:
    """(offset in the file, shape) of the C-ordered little-endian float32 array stored
    uncompressed as ``member`` of the zip (.npz) open as ``handle``; ValueError otherwise."""
    with zipfile.ZipFile(handle) as archive:
        info = archive.getinfo(member)
    if info.compress_type != zipfile.ZIP_STORED:
        raise ValueError(f"{member} is compressed")
    handle.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
    if fields[0] != _LOCAL_MAGIC:
        raise ValueError(f"no local header for {member}")
    start = info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10]
    handle.seek(start)
    version = np.lib.format.read_magic(handle)
    read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                   (2, 0): np.lib.format.read_array_header_2_0}.get(version)
    if read_header is None:
        raise ValueError(f"{member}: .npy version {version}")
    shape, fortran, dtype = read_header(handle)
    if fortran or dtype != np.dtype("<f4"):
        raise ValueError(f"{member} is not a C-ordered float32 array")
    offset = handle.tell()
    if offset - start + 4 * int(np.prod(shape)) > info.file_size:
        raise ValueError(f"{member} is shorter than its header says")
    return offset, tuple(int(n) for n in shape)
