"""An incremental BM25 index over sparse matrices: add and remove documents, score queries.

Each document is one row of weighted term frequencies. Rows live in a compacted *base*
segment (a SciPy CSC matrix, so a query reads only the columns of its terms) and a small
*delta* segment of rows added since the last compaction; a removed row is only marked dead.
The collection statistics (document count, average length, document frequencies) are kept
exact on every change, and BM25 is computed at query time from the raw frequencies of the
query's columns only, so an incremental index scores exactly like one built from scratch.
No Python loop runs over documents at query time: only over the query's terms.

Scoring is Lucene's BM25: idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
tf·(k1 + 1) / (tf + k1·(1 - b + b·len/avglen)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class BM25Params:
    """BM25 saturation (k1) and length normalisation (b)."""

    k1: float = 1.2
    b: float = 0.75


class Vocabulary:
    """Term → column id; grows as new terms arrive (ids are never reused)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, term: str) -> int:
        """The id of ``term``, allocating one if it is new."""
        term_id = self.ids.get(term)
        if term_id is None:
            term_id = self.ids[term] = len(self.ids)
        return term_id

    def lookup(self, terms: list[str]) -> np.ndarray:
        """Ids of the known terms among ``terms`` (unknown terms match nothing)."""
        get = self.ids.get
        return np.fromiter((i for i in (get(t) for t in terms) if i is not None), dtype=np.int64)


class SparseBM25:
    """BM25 over rows of weighted term frequencies, each row tagged with a key and a group.

    The group is a caller's integer (here: the page a section belongs to), so scores can be
    aggregated per group with array operations.
    """

    def __init__(self, params: BM25Params = BM25Params(), compact_min: int = 2048,
                 compact_share: float = 0.1):
        self.params = params
        self._compact_min = compact_min
        self._compact_share = compact_share
        self._keys: list[Hashable | None] = []
        self._row_of: dict[Hashable, int] = {}
        self._lengths = np.zeros(0, dtype=np.float64)
        self._groups = np.zeros(0, dtype=np.int64)
        self._alive = np.zeros(0, dtype=bool)
        self._df = np.zeros(0, dtype=np.float64)
        self._n_alive = 0
        self._total_len = 0.0
        self._base_csc = sparse.csc_matrix((0, 0), dtype=np.float32)
        self._base_csr_indptr = np.zeros(1, dtype=np.int64)
        self._base_csr_indices = np.zeros(0, dtype=np.int32)
        self._delta: list[tuple[np.ndarray, np.ndarray]] = []
        self._delta_csc: sparse.csc_matrix | None = None

    # -- state --------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n_alive

    def __contains__(self, key: Hashable) -> bool:
        return key in self._row_of

    @property
    def n_rows(self) -> int:
        """Rows allocated, dead ones included (the length of score vectors)."""
        return len(self._keys)

    @property
    def groups(self) -> np.ndarray:
        """Group id of every row."""
        return self._groups[: self.n_rows]

    def key(self, row: int) -> Hashable | None:
        """The key of a row (None for a dead row)."""
        return self._keys[row]

    def keys(self) -> list[Hashable]:
        """Keys of the live rows."""
        return [k for k in self._keys if k is not None]

    def document_frequency(self, term_id: int) -> int:
        """How many live rows contain the term."""
        return int(self._df[term_id]) if term_id < len(self._df) else 0

    # -- changes ------------------------------------------------------------------------
    def add(self, key: Hashable, counts: Mapping[int, float], group: int = 0) -> None:
        """Add (or replace) the row ``key`` with term-id → weighted frequency ``counts``."""
        if key in self._row_of:
            self.remove(key)
        ids = np.fromiter(counts.keys(), dtype=np.int32, count=len(counts))
        tfs = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
        row = len(self._keys)
        self._grow(row + 1, int(ids.max()) + 1 if len(ids) else 0)
        self._keys.append(key)
        self._row_of[key] = row
        length = float(tfs.sum(dtype=np.float64))
        self._lengths[row] = length
        self._groups[row] = group
        self._alive[row] = True
        self._df[ids] += 1
        self._n_alive += 1
        self._total_len += length
        self._delta.append((ids, tfs))
        self._delta_csc = None

    def remove(self, key: Hashable) -> bool:
        """Remove the row ``key``; False when it was not there."""
        row = self._row_of.pop(key, None)
        if row is None:
            return False
        self._df[self._row_terms(row)] -= 1
        self._alive[row] = False
        self._keys[row] = None
        self._n_alive -= 1
        self._total_len -= self._lengths[row]
        if self._n_alive == 0:
            self._total_len = 0.0
        return True

    def compact(self) -> None:
        """Rewrite live rows into one base segment (row numbers change; keys do not)."""
        n_base = self._base_csc.shape[0]
        live = np.flatnonzero(self._alive[: self.n_rows])
        vocab = len(self._df)
        base = self._base_csc.tocsr()
        base.resize((n_base, vocab))
        parts = [base]
        if self._delta:
            parts.append(_rows_to_csr(self._delta, vocab))
        merged = sparse.vstack(parts, format="csr")[live]
        merged.sort_indices()
        self._keys = [self._keys[r] for r in live]
        self._row_of = {k: i for i, k in enumerate(self._keys)}
        n = len(live)
        self._lengths = self._lengths[live].copy()
        self._groups = self._groups[live].copy()
        self._alive = np.ones(n, dtype=bool)
        self._base_csc = merged.tocsc()
        self._base_csr_indptr = merged.indptr.astype(np.int64)
        self._base_csr_indices = merged.indices.astype(np.int32)
        self._delta = []
        self._delta_csc = None

    # -- scoring ------------------------------------------------------------------------
    def idf(self, term_ids: np.ndarray) -> np.ndarray:
        """Lucene's BM25 idf of each term (0 for a term no live row contains)."""
        df = np.zeros(len(term_ids), dtype=np.float64)
        inside = term_ids < len(self._df)
        df[inside] = self._df[term_ids[inside]]
        n = self._n_alive
        return np.where(df > 0, np.log1p((n - df + 0.5) / (df + 0.5)), 0.0)

    def scores(self, term_ids: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """BM25 score of every row (dead rows score 0) for the query terms ``term_ids``."""
        if self._needs_compaction():
            self.compact()
        out = np.zeros(self.n_rows, dtype=np.float64)
        if self._n_alive == 0 or len(term_ids) == 0:
            return out
        term_ids = np.asarray(term_ids, dtype=np.int64)
        weights = np.ones(len(term_ids)) if weights is None else np.asarray(weights, float)
        qw = self.idf(term_ids) * weights
        keep = qw > 0
        term_ids, qw = term_ids[keep], qw[keep]
        if len(term_ids) == 0:
            return out
        k1, b = self.params.k1, self.params.b
        avglen = self._total_len / self._n_alive
        offset = 0
        for segment in (self._base_csc, self._delta_matrix()):
            if segment.shape[0]:
                cols = term_ids < segment.shape[1]
                sub = segment[:, term_ids[cols]]
                rows = sub.indices.astype(np.int64) + offset
                tf = sub.data.astype(np.float64)
                which = np.repeat(qw[cols], np.diff(sub.indptr))
                norm = k1 * (1.0 - b + b * self._lengths[rows] / avglen)
                contrib = which * tf * (k1 + 1.0) / (tf + norm)
                out += np.bincount(rows, contrib, minlength=self.n_rows)
            offset += segment.shape[0]
        out[~self._alive[: self.n_rows]] = 0.0
        return out

    # -- internals ----------------------------------------------------------------------
    def _delta_matrix(self) -> sparse.csc_matrix:
        if self._delta_csc is None:
            self._delta_csc = _rows_to_csr(self._delta, len(self._df)).tocsc()
        return self._delta_csc

    def _row_terms(self, row: int) -> np.ndarray:
        n_base = self._base_csc.shape[0]
        if row < n_base:
            start, end = self._base_csr_indptr[row], self._base_csr_indptr[row + 1]
            return self._base_csr_indices[start:end]
        return self._delta[row - n_base][0]

    def needs_compaction(self) -> bool:
        """True when enough rows were added or removed that a compaction pays off."""
        return self._needs_compaction()

    def _needs_compaction(self) -> bool:
        dead = self.n_rows - self._n_alive
        return (len(self._delta) > max(self._compact_min, self._compact_share * self.n_rows)
                or dead > max(self._compact_min, self._compact_share * self.n_rows))

    def _grow(self, rows: int, vocab: int) -> None:
        if rows > len(self._lengths):
            size = max(rows, int(len(self._lengths) * 1.5) + 16)
            self._lengths = _resize(self._lengths, size)
            self._groups = _resize(self._groups, size)
            self._alive = _resize(self._alive, size)
        if vocab > len(self._df):
            self._df = _resize(self._df, max(vocab, int(len(self._df) * 1.5) + 64))


def _resize(array: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size, dtype=array.dtype)
    out[: len(array)] = array
    return out


def _rows_to_csr(rows: list[tuple[np.ndarray, np.ndarray]], vocab: int) -> sparse.csr_matrix:
    if not rows:
        return sparse.csr_matrix((0, vocab), dtype=np.float32)
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(ids) for ids, _ in rows], out=indptr[1:])
    indices = np.concatenate([ids for ids, _ in rows])
    data = np.concatenate([tfs for _, tfs in rows])
    matrix = sparse.csr_matrix((data, indices, indptr), shape=(len(rows), vocab))
    matrix.sum_duplicates()
    return matrix
