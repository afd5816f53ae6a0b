"""An approximate nearest-neighbour index over one embedded table's rows (usearch HNSW).

Below ``EXACT_BELOW`` rows the embedded store multiplies every row (exact and fast enough);
from there on a table keeps an HNSW graph beside its float32 matrix. The graph stores half
precision copies (f16: recall is that of float32 to three decimals, half the memory); a
query asks it for ``CANDIDATES_PER_HIT`` times the hits wanted and re-scores those rows
exactly from the float32 matrix, so scores are the exact cosines and only the candidate set
is approximate (recall@10 against exact search: bench/bench_ann.py). A query whose best
cosine among those candidates is below ``EXACT_WHEN_BEST_BELOW`` lies far from every row,
among many near-ties the graph misses (recall@10 0.64 below 0.30 against 0.95 above at
459,000 chunks), and is searched exactly instead (bench/bench_ann_adaptive.py calibrates it).

Keys are the table's row numbers. A change to the table (a row written, a row moved by the
swap-remove, a row dropped) is applied to the graph at once, so the index never lags the rows.

Persistence: ``<model>.usearch`` beside the model's .npz, with ``<model>.usearch.json``
holding one 64-bit digest of (page, chunk_id, content hash) per key the graph holds. A
reader that loads the file reconciles it with the rows it has (a row whose digest differs is
re-added, extra keys removed), so an index saved before the latest flush — a writer killed
between the two files, another process's write — is brought in step instead of rebuilt.
usearch is imported only here and only for tables this large (its import costs ~0.5 s).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..fsutil import atomic_write_bytes

# rows: below, exact search is fast enough (~36 ns a row: 7 ms at 200k on 2 cores) and
# perfect; above, the graph answers in ~1-2 ms at recall@10 >= 0.95 (bench_ann.py)
EXACT_BELOW = 200_000
DTYPE = "f16"               # what the graph stores (scores come from the float32 rows)
CONNECTIVITY = 16           # HNSW M
EXPANSION_ADD = 128         # ef_construction
# ef_search: 128 gave recall@10 0.91 on the vault's MiniLM vectors, 256 0.97; on 20,000
# vectors with many near-duplicates (like notes that share sentences) 256 gave 0.94, 512 0.98
EXPANSION_SEARCH = 512
CANDIDATES_PER_HIT = 4      # approximate candidates re-scored exactly, per hit asked for
# best cosine (MiniLM) under which the graph's answer is replaced by exact search: calibrated
# by bench/bench_ann_adaptive.py on workspace queries and SciFact claims (not the held-out
# ones it evaluates on) as the lowest threshold that keeps recall@10 >= 0.96 on each. A model
# whose cosines run higher (e5) falls back less often, one whose run lower more: 0 turns it off
EXACT_WHEN_BEST_BELOW = 0.31
FORMAT = 1


def configured() -> dict[str, Any]:
    """The build settings a new graph gets."""
    return {"connectivity": CONNECTIVITY, "expansion_add": EXPANSION_ADD, "dtype": DTYPE}


def describe(built: dict[str, Any]) -> str:
    """"connectivity 16, expansion_add 128, f16"."""
    return (f"connectivity {built.get('connectivity')}, expansion_add "
            f"{built.get('expansion_add')}, {built.get('dtype')}")


def row_digest(row: Sequence[str]) -> int:
    """A stable 63-bit digest of a row's page, chunk_id and content hash."""
    text = f"{row[0]}\0{row[1]}\0{row[3]}".encode("utf-8")
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 1


class AnnIndex:
    """An HNSW graph whose keys are row numbers of one table."""

    def __init__(self, dimension: int, index: Any = None,
                 digests: dict[int, int] | None = None, built: dict[str, Any] | None = None):
        Index = usearch_index()
        self.dimension = dimension
        self._index = index if index is not None else Index(
            ndim=dimension, metric="cos", dtype=DTYPE, connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)
        self._index.expansion_search = EXPANSION_SEARCH
        # what the graph was built with (a saved graph keeps its own until rebuilt)
        self.built = built if built is not None else configured()
        self.digests: dict[int, int] = digests if digests is not None else {}
        self.unsaved = 0                 # rows written or dropped since the last save

    def __len__(self) -> int:
        return len(self._index)

    def settings(self) -> str:
        """The graph's build settings, for messages."""
        return describe(self.built)

    def warnings(self) -> list[str]:
        """A warning when the graph was built with other settings than this version's."""
        if self.built == configured():
            return []
        return [f"the HNSW graph was built with {describe(self.built)}, not "
                f"{describe(configured())}; its recall is that of the old settings until "
                f"`mindgraph embed --rebuild-index` builds it again"]

    @classmethod
    def build(cls, vectors: np.ndarray, rows: Sequence[Sequence[str]]) -> "AnnIndex":
        """A new graph over every row."""
        index = cls(vectors.shape[1])
        index.put(range(len(rows)), vectors[:len(rows)], rows)
        return index

    def put(self, row_numbers: Sequence[int] | range, vectors: np.ndarray,
            rows: Sequence[Sequence[str]]) -> None:
        """Write (or replace) the given rows with their vectors and metadata rows."""
        keys = np.asarray(list(row_numbers), dtype=np.uint64)
        if not keys.size:
            return
        held = [int(k) for k in keys if int(k) in self.digests]
        if held:
            self._index.remove(np.asarray(held, dtype=np.uint64))
        self._index.add(keys, np.ascontiguousarray(vectors, dtype=np.float32),
                        threads=_threads())
        for key, row in zip(keys.tolist(), rows):
            self.digests[key] = row_digest(row)
        self.unsaved += len(keys)

    def drop(self, row_number: int) -> None:
        """Forget a row number (the table shrank past it)."""
        if self.digests.pop(row_number, None) is not None:
            self._index.remove(row_number)
            self.unsaved += 1

    def search(self, query: np.ndarray, count: int) -> np.ndarray:
        """Row numbers of about the ``count`` nearest rows (approximate order)."""
        count = min(count, len(self._index))
        if count <= 0:
            return np.zeros(0, dtype=np.int64)
        self._index.expansion_search = max(EXPANSION_SEARCH, count)
        found = self._index.search(query, count, threads=1)
        return np.asarray(found.keys, dtype=np.int64)

    def reconcile(self, vectors: np.ndarray, rows: Sequence[Sequence[str]]) -> int:
        """Bring a loaded graph in step with the table's rows; return the rows re-added."""
        stale = [i for i, row in enumerate(rows) if self.digests.get(i) != row_digest(row)]
        for key in [k for k in self.digests if k >= len(rows)]:
            self.drop(key)
        if stale:
            self.put(stale, vectors[np.asarray(stale, dtype=np.int64)],
                     [rows[i] for i in stale])
        return len(stale)

    def save(self, path: Path) -> None:
        """Write the graph and its digests atomically (the .json is written last)."""
        atomic_write_bytes(path, bytes(self._index.save()))
        digests = np.zeros(max(self.digests, default=-1) + 1, dtype=np.int64) - 1
        for key, digest in self.digests.items():
            digests[key] = digest
        meta = {"format": FORMAT, "dimension": self.dimension, "built": self.built,
                "graph_bytes": path.stat().st_size, "digests": digests.tolist()}
        atomic_write_bytes(_meta_path(path), json.dumps(meta).encode("utf-8"))
        self.unsaved = 0

    @classmethod
    def load(cls, path: Path, dimension: int) -> "AnnIndex | None":
        """The saved graph, or None when it is missing, torn or of another shape."""
        try:
            meta = json.loads(_meta_path(path).read_bytes())
            if meta.get("format") != FORMAT or meta.get("dimension") != dimension or \
                    meta.get("graph_bytes") != path.stat().st_size:
                return None
            index = usearch_index().restore(str(path))
        except (OSError, ValueError, TypeError, RuntimeError):
            return None
        if index is None or index.ndim != dimension:
            return None
        digests = {i: int(d) for i, d in enumerate(meta["digests"]) if d >= 0}
        if len(digests) != len(index):
            return None
        # a graph saved before its settings were: every earlier version built f16 graphs
        # with expansion_add 128
        built = meta.get("built") or {"connectivity": int(index.connectivity),
                                      "expansion_add": 128, "dtype": "f16"}
        return cls(dimension, index, digests, built)


def nearest_rows(vectors: np.ndarray, ann: AnnIndex | None, q: np.ndarray, k: int,
                 candidates: np.ndarray | None, *, exact_below: int | None = None,
                 exact_when_best_below: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, exact cosines) of the ``k`` best of ``vectors`` among ``candidates`` (None:
    every row), unordered.

    Exact below ``exact_below`` (EXACT_BELOW) rows or candidates, or without a graph. Above,
    the graph proposes rows, those outside the filters are dropped, and it is asked for more
    until enough pass (or exact search over the candidates is cheaper than asking again): a
    filtered query still gets ``k`` hits inside its view. When the best of them scores below
    ``exact_when_best_below`` (EXACT_WHEN_BEST_BELOW) the query is searched exactly."""
    n = vectors.shape[0]
    size = n if candidates is None else int(candidates.size)
    if not size or k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    if ann is None or size < (EXACT_BELOW if exact_below is None else exact_below):
        return _exact(vectors, q, k, candidates)
    floor = EXACT_WHEN_BEST_BELOW if exact_when_best_below is None else exact_when_best_below
    rows, scores, exact = _approximate(vectors, ann, q, k, candidates, size)
    if exact or (scores.size and float(scores.max()) >= floor):
        return rows, scores
    return _exact(vectors, q, k, candidates)


def _exact(vectors: np.ndarray, q: np.ndarray, k: int,
           candidates: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if candidates is None:
        return _best(np.arange(vectors.shape[0], dtype=np.int64), cosines(vectors, q), k)
    return _best(candidates, cosines(vectors[candidates], q), k)


def _approximate(vectors: np.ndarray, ann: AnnIndex, q: np.ndarray, k: int,
                 candidates: np.ndarray | None,
                 size: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """The graph's answer re-scored exactly, and whether it was found exactly (a view of
    few rows, cheaper to search than to ask the graph again)."""
    n = vectors.shape[0]
    inside = None
    if candidates is not None:
        inside = np.zeros(n, dtype=bool)
        inside[candidates] = True
    want = min(k, size)
    count = int(CANDIDATES_PER_HIT * want * n / size)
    while True:
        proposed = ann.search(q, count)
        if inside is not None:
            proposed = proposed[inside[proposed]]
        if proposed.size >= CANDIDATES_PER_HIT * want or count >= n:
            return (*_best(proposed, cosines(vectors[proposed], q), k), False)
        if candidates is not None and 2 * count >= size:
            return (*_exact(vectors, q, k, candidates), True)
        count *= 2


# elements of one product: OpenBLAS splits a larger matrix-vector product over a thread per
# core (384 dimensions: 1,024 rows are not split, 2,048 are), whose workers spin waiting for
# each other; on the shared 2-core machine (load 20) 47,000 × 384 rows took 56 ms wall and
# 8.0 ms CPU in one product, 2.8 / 2.7 ms in blocks (6,735 rows: 48 / 8.0 against 0.2 / 0.2)
BLOCK_ELEMENTS = 1024 * 384


def cosines(vectors: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``vectors @ q`` (unit rows and query: their cosines), in blocks that BLAS does not
    split over threads: one query is one core's work, and queries are the parallelism (the
    REST server runs on one BLAS thread already). Each row's value is the same as in one
    product: the same kernel computes it."""
    rows = max(1, BLOCK_ELEMENTS // max(1, vectors.shape[1]))
    if vectors.shape[0] <= rows:
        return vectors @ q
    return np.concatenate([vectors[i:i + rows] @ q for i in range(0, vectors.shape[0], rows)])


def _best(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` highest-scoring of ``rows`` (unordered), with their scores."""
    if k < scores.shape[0]:
        top = np.argpartition(-scores, k - 1)[:k]
        return rows[top], scores[top]
    return rows, scores


def usearch_index() -> Any:
    """usearch's Index class, imported after onnxruntime: usearch 2.26's compiled module
    loaded first makes the later import of onnxruntime (the local embedding model) crash
    the process with a segmentation fault; the other order is fine."""
    import onnxruntime  # noqa: F401
    from usearch.index import Index

    return Index


def index_path(npz_path: Path) -> Path:
    """Where the graph of a model file lives."""
    return npz_path.with_suffix(".usearch")


def remove_index(npz_path: Path) -> None:
    """Delete a model file's graph and its digests, if any."""
    graph = index_path(npz_path)
    for path in (graph, _meta_path(graph)):
        path.unlink(missing_ok=True)


def _meta_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def _threads() -> int:
    return max(1, min(2, os.cpu_count() or 1))
