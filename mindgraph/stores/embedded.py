"""The no-server vector store: numpy arrays on disk, exact cosine or an HNSW graph when large.

Layout: ``<state>/vectors/<tenant>/<model>.npz``, one file per model_version, holding the
float32 matrix ``vectors`` (unit rows) and ``meta`` (UTF-8 JSON: model_version, dimension, a
generation and one [page, chunk_id, section_id, content_hash, scope] row per vector), and
``<model>.log``, the changes made since that file was written (stores/vector_log.py). The
.npz is replaced atomically (fsutil.atomic_write_bytes), so a crash leaves the previous file
or the new one; the log's entries are checksummed, so a torn one is ignored.

Changes are kept in memory and written by ``flush()``/``close()``: a flush appends them to the
log (a batch of 64 rows costs ~100 kB whatever the table's size) and rewrites the .npz only
when the log has grown as large as it. A reader notices what another process wrote (mtime and
size of the .npz, inode and size of the log) before answering: it reads only the new log
entries, or the files again after a compaction. Two writers (a server embedding changed
pages, `mindgraph embed` in a terminal) never lose each other's work: each table keeps a
journal of its changes since it was loaded, and ``flush`` — under an exclusive lock on
``<folder>/.lock`` — replays that journal onto the files as they are now when another process
wrote them meanwhile, instead of overwriting them.

Search is a matrix-vector product over every row of the model (exact) below
``ann.EXACT_BELOW`` (200,000) rows: median 0.14 ms at 10k and 3.6 ms at 100k vectors of 384
dimensions on 2 cores. From
there on a table keeps an HNSW graph (stores/ann.py, usearch) in step with every change and
saved beside its file (``<model>.usearch``, at compactions and once a tenth of the rows
changed), and its candidates are re-scored exactly; a query whose best candidate scores
low (``ann.EXACT_WHEN_BEST_BELOW``) is searched exactly instead.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import re
import threading
import time
import zipfile
from pathlib import Path
from typing import Callable, Collection, Iterator, Sequence

import numpy as np

from ..errors import StoreError
from ..fsutil import (Stamp, atomic_write_bytes, clean_temp_files, exclusive_lock, file_stamp,
                      open_regular, stamp_of)
from .ann import EXACT_BELOW, AnnIndex, index_path, nearest_rows, remove_index
from . import vector_log
from .base import ChunkMove, VectorHit, VectorRecord, as_query_vector, prepared_matrix
from .row_matrix import RowMatrix
from .vector_log import Op

FORMAT = 2          # 2: the .npz names its generation and may have a log (vector_log.py)
READABLE = {1, 2}


def model_file_name(model_version: str) -> str:
    """A safe, collision-free file name for a model_version."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", model_version).strip("_")[:80]
    digest = hashlib.sha256(model_version.encode("utf-8")).hexdigest()[:8]
    return f"{readable}-{digest}.npz"


class _Table:
    """The rows of one model in memory: a growable matrix plus key → row maps."""

    def __init__(self, model_version: str, dimension: int):
        self.model_version = model_version
        self.dimension = dimension
        # the rows' unit vectors: read from the model file as needed for a table searched
        # through its graph (row_matrix.py), in memory otherwise
        self.vectors = RowMatrix(dimension)
        self.rows: list[list[str]] = []            # [page, chunk_id, section_id, hash, scope]
        self.index: dict[tuple[str, str], int] = {}
        self.by_page: dict[str, set[str]] = {}
        self.dirty = False
        self.stamp: Stamp | None = None  # (mtime_ns, ctime_ns, inode, size) of the file we loaded
        self.generation: bytes | None = None       # the .npz's (None: format 1, no log)
        self.log_seen: tuple[int, int] | None = None  # (inode, size) of the log as last read
        self.log_end = 0                           # end of its last whole entry we applied
        self._scopes: np.ndarray | None = None     # row → scope, rebuilt after changes
        self.rebuilding = ""                       # why the file on disk was not usable
        self.unreadable = ""                       # that, said to the user (kept, reported)
        # (pages, scopes) → the rows inside them, until the next change
        self._filters: dict[tuple[object, object], np.ndarray] = {}
        self.ann: AnnIndex | None = None           # from EXACT_BELOW rows on (stores/ann.py)
        self.damaged = ""                          # what a damaged log tail lost, if it did
        self.tail_cut = False                      # that tail cut off by this process
        # upserts (rows, matrix) and removals (page, chunk_ids) since the last load/flush
        self.journal: list[Op] = []

    def __len__(self) -> int:
        return len(self.rows)

    def scopes(self) -> np.ndarray:
        """Every row's scope as an array, so a scope filter is one vectorised comparison."""
        if self._scopes is None:
            self._scopes = np.asarray([row[4] for row in self.rows], dtype=object)
        return self._scopes

    def changed(self) -> None:
        self.dirty = True
        self._scopes = None
        self._filters = {}

    def upsert(self, records: Sequence[VectorRecord], matrix: np.ndarray) -> None:
        self.put([[r.page, r.chunk_id, r.section_id, r.content_hash, r.scope]
                  for r in records], matrix)

    def put(self, metas: list[list[str]], matrix: np.ndarray) -> None:
        """Write rows [page, chunk_id, section_id, hash, scope] with their unit vectors."""
        self.journal.append(("upsert", metas, matrix))
        new = [i for i, m in enumerate(metas) if (m[0], m[1]) not in self.index]
        self.vectors.reserve(len(self.rows) + len(new))
        written = []
        for i, meta in enumerate(metas):
            key = (meta[0], meta[1])
            row = self.index.get(key)
            if row is None:
                row = len(self.rows)
                self.rows.append(meta)
                self.index[key] = row
                self.by_page.setdefault(meta[0], set()).add(meta[1])
            else:
                self.rows[row] = meta
            self.vectors[row] = matrix[i]
            written.append(row)
        if self.ann is not None:
            self.ann.put(written, self.vectors[written], [self.rows[j] for j in written])
        self.changed()

    def remove(self, page: str, chunk_ids: Collection[str] | None) -> int:
        held = self.by_page.get(page)
        if not held:
            return 0
        doomed = set(held) if chunk_ids is None else held & set(chunk_ids)
        if not doomed:
            return 0
        # journaled as asked for a whole page (so a merge also drops what another process
        # added to it), else as the chunks actually removed
        self.journal.append(("remove", page, None if chunk_ids is None else set(doomed)))
        for chunk_id in doomed:
            # Swap-remove keeps the matrix dense without shifting every later row.
            row = self.index.pop((page, chunk_id))
            last = len(self.rows) - 1
            if row != last:
                moved = self.rows[last]
                self.rows[row] = moved
                self.vectors[row] = self.vectors[last]
                self.index[(moved[0], moved[1])] = row
                if self.ann is not None:
                    self.ann.put([row], self.vectors[row:row + 1], [moved])
            self.rows.pop()
            if self.ann is not None:
                self.ann.drop(last)
            held.discard(chunk_id)
        if not held:
            del self.by_page[page]
        self.changed()
        return len(doomed)

    def move(self, moves: Sequence[ChunkMove]) -> int:
        """Re-key rows to their new page and hash (journaled as an upsert and removals)."""
        metas, found = [], []
        for m in moves:
            row = self.index.get((m.old_page, m.chunk_id))
            if row is not None:
                meta = self.rows[row]
                metas.append([m.new_page, m.chunk_id, meta[2], m.content_hash, meta[4]])
                found.append(row)
        if not metas:
            return 0
        self.put(metas, self.vectors[found].copy())
        by_page: dict[str, set[str]] = {}
        for m in moves:
            by_page.setdefault(m.old_page, set()).add(m.chunk_id)
        for page, chunk_ids in by_page.items():
            self.remove(page, chunk_ids)
        return len(metas)

    def allowed(self, scopes: Collection[str] | None,
                pages: Collection[str] | None) -> np.ndarray | None:
        """The sorted rows inside the filters, or None for every row. A view's filter (a
        frozenset of pages, the same for each of its queries) is kept until a change."""
        if pages is None and scopes is None:
            return None
        key = (pages if isinstance(pages, frozenset) else None,
               None if scopes is None else frozenset(scopes))
        if key[0] is None and pages is not None:
            return self._filter(scopes, pages)
        rows = self._filters.get(key)
        if rows is None:
            if len(self._filters) > 16:
                self._filters.clear()
            rows = self._filters[key] = self._filter(scopes, pages)
        return rows

    def _filter(self, scopes: Collection[str] | None,
                pages: Collection[str] | None) -> np.ndarray:
        if pages is None:
            return np.flatnonzero(np.isin(self.scopes(), list(scopes or ())))
        # sorted: when the pages cover every row this must be the table's own order
        candidates = np.sort(np.fromiter(
            (self.index[(p, c)] for p in set(pages) for c in self.by_page.get(p, ())),
            dtype=np.int64))
        if scopes is not None and candidates.size:
            candidates = candidates[np.isin(self.scopes()[candidates], list(scopes))]
        return candidates

    def nearest(self, q: np.ndarray, k: int, candidates: np.ndarray | None,
                exact_below: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, exact cosines) of the ``k`` best rows among ``candidates`` (None: all)."""
        return nearest_rows(self.live_vectors(), self.ann, q, k, candidates,
                            exact_below=exact_below)

    def live_vectors(self) -> "np.ndarray | RowMatrix":
        """The vectors of the table's rows (not copied)."""
        return self.vectors.first(len(self.rows))

    def replay(self, journal: Sequence[Op]) -> None:
        """Apply another table's journal (or a log's entries) to this one, on top."""
        for op, a, b in journal:
            if op == "upsert":
                self.put(a, b)  # type: ignore[arg-type]
            else:
                self.remove(a, b)  # type: ignore[arg-type]

    def catch_up(self, path: Path) -> bool:
        """Apply what the log gained since this table read it; False when the log is not
        one this table can continue (replaced by a compaction: reload the table)."""
        if self.generation is None:
            return self.log_seen is None
        read = vector_log.read(vector_log.log_path(path), self.generation, self.dimension,
                               self.log_end if self.log_seen is not None else 0)
        if read is None:
            return self.log_seen is None
        ops, end, seen, damaged = read
        if damaged:
            self.damaged = (f"{vector_log.log_path(path)}: {damaged} bytes after the last "
                            f"whole entry are not readable (a write cut short by a crash, or "
                            f"damage) and were left out; `mindgraph embed` embeds again what "
                            f"they held")
        if self.log_seen is not None and (seen[0] != self.log_seen[0] or seen[1] < end):
            # another log, or this one cut below what we applied (our next append would
            # leave a hole of zeros before it): read the files again
            return False
        self.replay(ops)
        self.journal, self.dirty = [], False
        self.log_end, self.log_seen = end, seen
        return True

    def to_bytes(self) -> bytes:
        meta = {"format": FORMAT, "model_version": self.model_version,
                "dimension": self.dimension, "rows": self.rows,
                "generation": (self.generation or b"").hex()}
        buffer = io.BytesIO()
        np.savez(buffer, vectors=np.asarray(self.live_vectors()),
                 meta=np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"),
                                    dtype=np.uint8))
        return buffer.getvalue()

    @classmethod
    def from_file(cls, path: Path, in_file_from: int = EXACT_BELOW) -> "_Table":
        """The table in ``path``; from ``in_file_from`` rows (the store's graph threshold) its
        matrix stays in the file, read as queries need it."""
        try:
            with open_regular(path) as handle, np.load(handle, allow_pickle=False) as data:
                meta = json.loads(data["meta"].tobytes().decode("utf-8"))
                if meta.get("format") not in READABLE:
                    raise ValueError(f"format {meta.get('format')!r} of another mindgraph; "
                                     f"this one reads formats {sorted(READABLE)}")
                generation = bytes.fromhex(meta.get("generation") or "") or None
                table = cls(meta["model_version"], int(meta["dimension"]))
                rows = _rows_of(meta.pop("rows"))
                # a table searched through its graph reads a few hundred rows a query: read
                # from this file when asked for (row_matrix.py), not loaded (705 MB at
                # 459,000 MiniLM rows); a matrix that cannot be (compressed) is loaded
                in_file = RowMatrix.from_file(handle) if len(rows) >= in_file_from else None
                matrix = in_file if in_file is not None else RowMatrix(
                    table.dimension, tail=np.asarray(data["vectors"], dtype=np.float32))
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
            raise StoreError(f"Vector file {path} is unreadable ({exc}). Delete it and run "
                             f"`mindgraph embed` to rebuild it from the wiki.") from exc
        if matrix.shape != (len(rows), table.dimension):
            raise StoreError(f"Vector file {path} is inconsistent ({matrix.shape[0]} vectors, "
                             f"{len(rows)} rows). Delete it and run `mindgraph embed`.")
        table.vectors, table.rows = matrix, rows
        for i, row in enumerate(rows):
            table.index[(row[0], row[1])] = i
            table.by_page.setdefault(row[0], set()).add(row[1])
        table.stamp = stamp_of(path.stat())
        table.generation = generation
        table.catch_up(path)
        return table

    @classmethod
    def load_or_rebuild(cls, path: Path, model_version: str, dimension: int = 0,
                        in_file_from: int = EXACT_BELOW) -> "_Table":
        """The table in ``path``; a file of another format, truncated or garbage reads as an
        empty table that the next flush replaces, so `mindgraph embed` (or the watcher)
        re-embeds the model's sections: derived data is rebuilt, never a traceback."""
        try:
            return cls.from_file(path, in_file_from)
        except StoreError as exc:
            table = cls(model_version, dimension)   # 0: set by the first upsert
            table.rebuilding = str(exc)
            table.unreadable = (f"{path} is damaged ({exc.__cause__ or exc}): none of its "
                                f"vectors of {model_version} could be read; `mindgraph embed` "
                                f"embeds them again and replaces the file")
            try:
                table.stamp = stamp_of(path.stat())
            except OSError:
                pass
            return table


class EmbeddedStore:
    """Vectors in .npz files under ``folder`` (normally ``<state_dir>/vectors/<tenant>``)."""

    def __init__(self, folder: Path, *, exact_below: int | None = None):
        """``exact_below``: the rows from which a model gets an HNSW graph (None:
        stores/ann.py's EXACT_BELOW, 200,000; tests lower it to run the graph path)."""
        self.folder = Path(folder)
        self._exact_below = exact_below
        self._tables: dict[str, _Table] = {}
        self._lock = threading.RLock()
        self._opened_at = time.time()       # temp files older than this are a killed write's
        self._cleaned = False               # (deleted at the first flush)
        self._unknown: dict[Path, str] = {}  # unreadable files of no model known: why

    @classmethod
    def for_state_dir(cls, state_dir: Path, tenant: str = "default") -> "EmbeddedStore":
        """The store of ``tenant`` under a workspace's state folder."""
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", tenant) or "default"
        return cls(Path(state_dir) / "vectors" / safe)

    @property
    def exact_below(self) -> int:
        """The rows from which a model is searched through its HNSW graph."""
        return EXACT_BELOW if self._exact_below is None else self._exact_below

    @property
    def description(self) -> str:
        """"embedded store at <folder>"."""
        return f"embedded store at {self.folder}"

    def repairs(self) -> list[str]:
        """What was left out of damaged files when they were read (for the embed report and
        the note of a search that has no vectors because of it), each naming the file and
        the fix: a log's damaged tail, a model file that could not be read at all (truncated,
        garbage; it reads as empty until `mindgraph embed` replaces it)."""
        with self._lock:
            tables = [t for _, t in sorted(self._tables.items())]
            return ([t.unreadable for t in tables if t.unreadable]
                    + [t.damaged for t in tables if t.damaged]
                    + [message for path, message in sorted(self._unknown.items())
                       if path.name not in {model_file_name(t.model_version) for t in tables}])

    def index_warnings(self, model_version: str) -> list[str]:
        """Why a loaded model's HNSW graph differs from stores/ann.py's settings (none when
        it is not loaded or searched exactly)."""
        with self._lock:
            table = self._tables.get(model_version)
            return [] if table is None or table.ann is None else table.ann.warnings()

    def rebuild_index(self, model_version: str,
                      notice: Callable[[str], None] | None = None) -> str:
        """Build the model's HNSW graph again from its rows and save it (another process's
        write to the folder is waited for on its lock, as every write is)."""
        with self._lock:
            table = self._table(model_version)
            if table is None or not len(table):
                return f"no vectors of {model_version} in {self.description}: no graph to build"
            if len(table) < self.exact_below:
                # a word first: the CLI capitalises it ("Local:all-MiniLM…" it was)
                return (f"no graph to build: {model_version} has {len(table)} vectors, "
                        f"searched exactly below {self.exact_below}")
            path = self.folder / model_file_name(model_version)
            with exclusive_lock(self.folder / ".lock"):
                table.ann = AnnIndex.build(table.live_vectors(), table.rows)
                table.ann.save(index_path(path))
            return (f"rebuilt the HNSW graph of {model_version} over {len(table)} vectors "
                    f"({table.ann.settings()})")

    def upsert(self, model_version: str, records: Sequence[VectorRecord]) -> int:
        """Insert or replace records (in memory until flush)."""
        if not records:
            return 0
        matrix = prepared_matrix(records, model_version, self.description)
        with self._lock:
            table = self._table(model_version)
            if table is None or (table.rebuilding and not len(table)):
                stamp = table.stamp if table is not None else None
                table = _Table(model_version, matrix.shape[1])
                table.stamp = stamp           # the unusable file on disk is ours to replace
                self._tables[model_version] = table
            elif table.dimension != matrix.shape[1]:
                raise StoreError(f"{self.description}: {model_version} holds vectors of "
                                 f"{table.dimension} dimensions, not {matrix.shape[1]}. "
                                 f"A model_version must name its dimension.")
            table.upsert(records, matrix)
        return len(records)

    def delete(self, page: str, chunk_ids: Collection[str] | None = None, *,
               model_version: str | None = None) -> int:
        """Remove a page's chunks of one model or of every model."""
        with self._lock:
            names = [model_version] if model_version else self._known_models()
            removed = 0
            for name in names:
                # refreshed: chunks another process stored since we loaded must go too
                table = self._table(name, refresh=True)
                if table is not None:
                    removed += table.remove(page, chunk_ids)
            return removed

    def query(self, vector: np.ndarray, k: int, model_version: str, *,
              scopes: Collection[str] | None = None,
              pages: Collection[str] | None = None) -> list[VectorHit]:
        """The top-k by exact cosine among the model's rows that pass the filters (from
        ``exact_below`` rows, of the HNSW graph's candidates or, for a query far from every
        row, of all: stores/ann.py)."""
        with self._lock:
            table = self._table(model_version, refresh=True)
            if table is None or not len(table) or k <= 0:
                return []
            q = as_query_vector(vector, table.dimension, model_version, self.description)
            rows, scores = table.nearest(q, k, table.allowed(scopes, pages), self.exact_below)
            hits = []
            for j, score in zip(rows.tolist(), scores.tolist()):
                row = table.rows[j]
                hits.append(VectorHit(page=row[0], chunk_id=row[1], section_id=row[2],
                                      score=float(score), scope=row[4]))
        hits.sort(key=lambda h: (-h.score, h.page, h.chunk_id))
        return hits

    def hashes(self, model_version: str) -> dict[str, dict[str, str]]:
        """page → chunk_id → content hash, for one model."""
        with self._lock:
            table = self._table(model_version, refresh=True)
            out: dict[str, dict[str, str]] = {}
            if table is not None:
                for page, chunk_id, _section, digest, _scope in table.rows:
                    out.setdefault(page, {})[chunk_id] = digest
            return out

    def count(self, model_version: str | None = None) -> int:
        """Stored chunks of one model, or of all."""
        if model_version is not None:
            with self._lock:
                table = self._table(model_version, refresh=True)
                return len(table) if table is not None else 0
        return sum(self.model_versions().values())

    def count_within(self, model_version: str, *, scopes: Collection[str] | None = None,
                     pages: Collection[str] | None = None) -> int:
        """Stored chunks of one model inside the filters (as ``query`` applies them)."""
        with self._lock:
            table = self._table(model_version, refresh=True)
            if table is None:
                return 0
            rows = table.allowed(scopes, pages)
            return len(table) if rows is None else int(rows.size)

    def model_versions(self) -> dict[str, int]:
        """Every model with at least one stored vector."""
        with self._lock:
            out = {}
            for name in self._known_models():
                table = self._table(name, refresh=True)
                if table is not None and len(table):
                    out[name] = len(table)
            return out

    def drop_model(self, model_version: str) -> int:
        """Forget a model and delete its file at once."""
        with self._lock, exclusive_lock(self.folder / ".lock"):
            table = self._table(model_version, refresh=True)
            removed = len(table) if table is not None else 0
            self._tables.pop(model_version, None)
            path = self.folder / model_file_name(model_version)
            path.unlink(missing_ok=True)
            vector_log.log_path(path).unlink(missing_ok=True)
            remove_index(path)
            return removed

    def move_chunks(self, model_version: str, moves: Sequence[ChunkMove]) -> int:
        """Give stored chunks to another page, vectors untouched (in memory until flush)."""
        with self._lock:
            table = self._table(model_version, refresh=True)
            return table.move(moves) if table is not None else 0

    def records(self, model_version: str,
                batch_size: int = 2000) -> Iterator[list[VectorRecord]]:
        """The model's records in batches: the chunks stored when it starts, each batch's
        rows read as they are then, under the lock (one removed meanwhile is left out); only
        a batch's vectors are copied at a time (at 459,000 rows of 896 floats all of them
        would be 1.6 GB)."""
        with self._lock:
            table = self._table(model_version, refresh=True)
            keys = [(row[0], row[1]) for row in table.rows] if table is not None else []
        for start in range(0, len(keys), batch_size):
            with self._lock:
                table = self._table(model_version)
                if table is None:
                    return
                found = np.asarray([table.index[k] for k in keys[start:start + batch_size]
                                    if k in table.index], dtype=np.int64)
                metas = [table.rows[j] for j in found.tolist()]
                matrix = np.array(table.vectors[found]) if found.size else []
            if metas:
                yield [VectorRecord(page=m[0], chunk_id=m[1], section_id=m[2],
                                    content_hash=m[3], vector=v, scope=m[4])
                       for m, v in zip(metas, matrix)]

    def flush(self) -> None:
        """Write every changed model file atomically, merged with what another process wrote
        since this one loaded it."""
        with self._lock:
            dirty = [name for name, table in self._tables.items()
                     if table.dirty or (table.damaged and not table.tail_cut)]
            if not dirty and (self._cleaned or not self.folder.is_dir()):
                return
            if not dirty:
                self._clean_temp_files()
                return
            with exclusive_lock(self.folder / ".lock"):
                if not self._cleaned:
                    # every write holds this lock: a temp file here is a killed write's
                    clean_temp_files(self.folder, older_than=self._opened_at)
                    self._cleaned = True
                for name in dirty:
                    self._write(name)

    def _clean_temp_files(self) -> None:
        """Remove killed writes' temp files when nothing is to be written: housekeeping only,
        skipped when the folder cannot be written (a read-only one, read by a dry run)."""
        try:
            with exclusive_lock(self.folder / ".lock"):
                clean_temp_files(self.folder, older_than=self._opened_at)
        except OSError:
            pass
        self._cleaned = True

    def _write(self, name: str) -> None:
        table = self._tables[name]
        path = self.folder / model_file_name(name)
        log = vector_log.log_path(path)
        on_disk = _stamp(path)
        if table.damaged and not table.journal and on_disk == table.stamp and \
                _inode_and_size(log) == table.log_seen:
            # nothing to add: cut the damaged tail off, so the next reader finds a whole log
            try:
                with open(log, "r+b") as handle:
                    handle.truncate(table.log_end)
                    os.fsync(handle.fileno())
            except OSError as exc:
                raise StoreError(f"Cannot write {log}: {exc}. Check that the state folder "
                                 f"is writable and the disk has space.") from exc
            table.log_seen, table.tail_cut, table.dirty = _inode_and_size(log), True, False
            return
        if on_disk != table.stamp or _inode_and_size(log) != table.log_seen:
            # Another process wrote (or emptied and deleted) the files since we loaded them:
            # our changes go on top of what it left, not over it.
            merged = self._load(path, name, table.dimension) if on_disk is not None else \
                _Table(table.model_version, table.dimension)
            merged.replay(table.journal)
            self._tables[name] = table = merged
        try:
            if not len(table):
                path.unlink(missing_ok=True)
                log.unlink(missing_ok=True)
                table.stamp, table.generation, table.log_seen = None, None, None
                self._save_index(table, path)
            else:
                entry = vector_log.encode(table.journal)
                if table.generation is None or table.log_seen is None or table.rebuilding or \
                        table.log_end + len(entry) > max(vector_log.COMPACT_FLOOR,
                                                         table.stamp[3] if table.stamp else 0):
                    self._compact(table, path)
                else:
                    table.log_end, table.log_seen = vector_log.append(log, entry,
                                                                      table.log_end)
                    self._save_index(table, path, force=False)
        except OSError as exc:
            raise StoreError(f"Cannot write {path}: {exc}. Check that the state folder "
                             f"is writable and the disk has space.") from exc
        table.dirty = False
        table.journal = []

    def _compact(self, table: _Table, path: Path) -> None:
        """Rewrite the model file with every row (a new generation) and start its log."""
        table.generation = vector_log.new_generation()
        atomic_write_bytes(path, table.to_bytes())
        table.stamp = _stamp(path)
        log = vector_log.log_path(path)
        table.log_end = vector_log.start(log, table.generation)
        table.log_seen = _inode_and_size(log)
        table.rebuilding = ""
        self._save_index(table, path)

    def close(self) -> None:
        """Flush; nothing else is held open."""
        self.flush()

    def __enter__(self) -> "EmbeddedStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _load(self, path: Path, model_version: str | None = None, dimension: int = 0) -> _Table:
        """A model file, with its HNSW graph when it is large enough to need one; an unusable
        file of a known model reads as empty (rebuilt), of an unknown one raises StoreError."""
        table = (_Table.from_file(path, self.exact_below) if model_version is None
                 else _Table.load_or_rebuild(path, model_version, dimension, self.exact_below))
        if len(table) >= self.exact_below:
            table.ann = AnnIndex.load(index_path(path), table.dimension)
            if table.ann is not None:
                table.ann.reconcile(table.live_vectors(), table.rows)
            else:   # none yet (an older store) or unusable: built once, kept from now on
                table.ann = AnnIndex.build(table.live_vectors(), table.rows)
                with contextlib.suppress(OSError):
                    table.ann.save(index_path(path))
        return table

    def _save_index(self, table: _Table, path: Path, force: bool = True) -> None:
        """Keep the graph of a large table beside its file (a restart need not rebuild it):
        saved at a compaction, and after a flush once a tenth of its rows changed since it
        was saved (a reader re-adds the rows that changed since, ann.reconcile)."""
        if len(table) < self.exact_below:
            if table.ann is not None or force:
                table.ann = None
                remove_index(path)
            return
        if table.ann is None:
            table.ann = AnnIndex.build(table.live_vectors(), table.rows)
        elif not force and table.ann.unsaved < len(table) // 10:
            return
        table.ann.save(index_path(path))

    def _known_models(self) -> list[str]:
        names = set(self._tables)
        if self.folder.is_dir():
            for path in self.folder.glob("*.npz"):
                try:
                    names.add(self._model_of_file(path))
                except StoreError as exc:     # its model is written inside: which is unknown
                    self._unknown[path] = (
                        f"{path} is damaged ({exc.__cause__ or exc}): neither its model nor "
                        f"its vectors could be read, so it is left out; delete it (`mindgraph "
                        f"embed` embeds the configured model's vectors again if they were "
                        f"these)")
                else:
                    self._unknown.pop(path, None)
        return sorted(names)

    def _model_of_file(self, path: Path) -> str:
        for name, table in self._tables.items():
            if model_file_name(name) == path.name:
                return name
        table = self._load(path)
        self._tables[table.model_version] = table
        return table.model_version

    def _table(self, model_version: str, refresh: bool = False) -> _Table | None:
        table = self._tables.get(model_version)
        path = self.folder / model_file_name(model_version)
        if table is not None:
            if refresh and not table.dirty:
                table = self._reload_if_changed(table, path)
            return table
        if path.is_file():
            table = self._load(path, model_version)
            self._tables[model_version] = table
        return table

    def _reload_if_changed(self, table: _Table, path: Path) -> _Table | None:
        """The table as the files are now: unchanged, caught up with what another process
        appended to the log (only the new entries are read), or loaded again."""
        stamp = _stamp(path)
        if stamp is None:
            if table.stamp is not None:  # another process dropped the model
                self._tables.pop(table.model_version, None)
                return None
            return table
        if table.stamp == stamp:
            seen = _inode_and_size(vector_log.log_path(path))
            if seen == table.log_seen or (seen is not None and table.catch_up(path)):
                return table
        table = self._load(path, table.model_version)
        self._tables[table.model_version] = table
        return table


def _rows_of(listed: list) -> list[list[str]]:
    """The metadata rows read from a file, each distinct string held once: a page's path is
    in each of its chunks' rows, and a chunk id is mostly its section id (at 459,000 rows the
    rows took 240 MB with a string per field read)."""
    held: dict[str, str] = {}
    one = held.setdefault
    rows = [[one(a, a), one(b, b), one(c, c), d, one(e, e)] for a, b, c, d, e in listed]
    if not set(map(type, itertools.chain.from_iterable(rows))) <= {str}:
        raise ValueError("a metadata row holds something else than text")
    return rows


def _stamp(path: Path) -> Stamp | None:
    """(mtime_ns, ctime_ns, inode, size) of a file, or None when it is missing."""
    return file_stamp(path)


def _inode_and_size(path: Path) -> tuple[int, int] | None:
    """(inode, size) of a file, or None when it is missing."""
    return _fields(path, "st_ino", "st_size")


def _fields(path: Path, *names: str) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return tuple(getattr(stat, name) for name in names)  # type: ignore[return-value]
