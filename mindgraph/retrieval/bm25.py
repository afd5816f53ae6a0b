"""An incremental BM25 index over sparse matrices: add and remove documents, score queries.

Each document is one row of weighted term frequencies. Rows live in a compacted *base*
segment (stored by column, as a CSC matrix is, so a query reads only the columns of its terms)
and a small *delta* segment of rows added since the last compaction; a removed row is only
marked dead. The base holds each entry once (term frequencies as 16-bit integers when they are
whole numbers below 65,536, as with the default field weights, else float32): the terms of a
removed base row, whose document frequencies must drop, are found by one pass over the base's
row numbers before the next query (or compaction), for all rows removed since, rather than kept
a second time by row (at 100,000 notes that copy was a third of the index's arrays). The segments are plain NumPy arrays (``Columns``), not SciPy matrices: importing
scipy.sparse took longer than the rest of a fresh `mindgraph search`, and a query needs no more
than slicing a few columns.
The collection statistics (document count, average length, document frequencies) are kept
exact on every change, and BM25 is computed at query time from the raw frequencies of the
query's columns only, so an incremental index scores exactly like one built from scratch.
No Python loop runs over documents at query time: only over the query's terms.

Scoring is Lucene's BM25: idf = ln(1 + (N - df + 0.5) / (df + 0.5)),
tf·(k1 + 1) / (tf + k1·(1 - b + b·len/avglen)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence

import numpy as np


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
        self._base_csc = Columns.empty(0, 0)
        self._removed_base: list[int] = []     # base rows removed, their df not yet lowered
        self._delta: list[tuple[np.ndarray, np.ndarray]] = []
        self._delta_csc: Columns | None = None

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

    @property
    def nbytes(self) -> int:
        """Bytes held by the index's arrays (not its keys)."""
        base = self._base_csc
        held = [self._lengths, self._groups, self._alive, self._df, base.indptr, base.indices,
                base.data, *(a for row in self._delta for a in row)]
        return sum(a.nbytes for a in held)

    def document_frequency(self, term_id: int) -> int:
        """How many live rows contain the term."""
        self._settle_removals()
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
        if row < self._base_csc.n_rows:
            self._removed_base.append(row)
        else:
            self._df[self._delta[row - self._base_csc.n_rows][0]] -= 1
        self._alive[row] = False
        self._keys[row] = None
        self._n_alive -= 1
        self._total_len -= self._lengths[row]
        if self._n_alive == 0:
            self._total_len = 0.0
        return True

    def compact(self) -> None:
        """Rewrite live rows into one base segment (row numbers change; keys do not)."""
        self._settle_removals()
        live = np.flatnonzero(self._alive[: self.n_rows])
        vocab = len(self._df)
        # every row as (row, column, tf): the base's entries, then the delta's
        rows, cols, tfs = self._base_csc.entries()
        if self._delta:
            delta_rows, delta_cols, delta_tfs = _rows_to_columns(self._delta, vocab).entries()
            rows = np.concatenate([rows, delta_rows + self._base_csc.n_rows])
            cols = np.concatenate([cols, delta_cols])
            tfs = np.concatenate([tfs, delta_tfs])
        renumber = np.full(self.n_rows, -1, dtype=np.int64)
        renumber[live] = np.arange(len(live))
        keep = renumber[rows] >= 0
        rows, cols, tfs = renumber[rows[keep]], cols[keep], tfs[keep]
        self._keys = [self._keys[r] for r in live]
        self._row_of = {k: i for i, k in enumerate(self._keys)}
        n = len(live)
        self._lengths = self._lengths[live].copy()
        self._groups = self._groups[live].copy()
        self._alive = np.ones(n, dtype=bool)
        self._base_csc = Columns.of(rows, cols, tfs, n, vocab)
        self._delta = []
        self._delta_csc = None

    # -- scoring ------------------------------------------------------------------------
    def idf(self, term_ids: np.ndarray) -> np.ndarray:
        """Lucene's BM25 idf of each term (0 for a term no live row contains)."""
        self._settle_removals()
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
            if segment.n_rows:
                cols = term_ids < segment.n_cols
                found, tf, counts = segment.columns(term_ids[cols])
                rows = found + offset
                which = np.repeat(qw[cols], counts)
                norm = k1 * (1.0 - b + b * self._lengths[rows] / avglen)
                contrib = which * tf * (k1 + 1.0) / (tf + norm)
                out += np.bincount(rows, contrib, minlength=self.n_rows)
            offset += segment.n_rows
        out[~self._alive[: self.n_rows]] = 0.0
        return out

    def concept_scores(self, concepts: Sequence[tuple[np.ndarray, np.ndarray, float]]
                       ) -> np.ndarray:
        """BM25 score of every row for query *concepts*, each a set of interchangeable terms
        (a word's translations) with their shares (summing to 1) and the concept's weight.
        A concept is scored as one term (a probabilistic structured query, Darwish & Oard
        2003): its frequency in a row is its terms' frequencies times their shares, its
        document frequency theirs the same way; so a word contributes once however many
        translations it has, and a rare sense among them does not lend it a rare word's idf."""
        out = np.zeros(self.n_rows, dtype=np.float64)
        if self._n_alive == 0 or not concepts:
            return out
        k1, b = self.params.k1, self.params.b
        avglen = self._total_len / self._n_alive
        n = self._n_alive
        for term_ids, shares, weight in concepts:
            term_ids = np.asarray(term_ids, dtype=np.int64)
            inside = term_ids < len(self._df)
            term_ids, shares = term_ids[inside], np.asarray(shares, float)[inside]
            if len(term_ids) == 0 or weight <= 0:
                continue
            # at most every row: shares above 1 in all (retrieval/subwords.py) sum the
            # terms' frequencies, an overcount of the rows holding any of them
            df = min(n, sum(share * self.document_frequency(int(t))
                            for t, share in zip(term_ids, shares)))
            if df <= 0:
                continue
            idf = np.log1p((n - df + 0.5) / (df + 0.5))
            found_rows, found_tf, offset = [], [], 0
            for segment in (self._base_csc, self._delta_matrix()):
                if segment.n_rows:
                    cols = term_ids < segment.n_cols
                    found, freq, counts = segment.columns(term_ids[cols])
                    found_rows.append(found + offset)
                    found_tf.append(freq * np.repeat(shares[cols], counts))
                offset += segment.n_rows
            # summed per row over the rows found only (not an array of every row a concept)
            rows, where = np.unique(np.concatenate(found_rows or [np.zeros(0, np.int64)]),
                                    return_inverse=True)
            if not len(rows):
                continue
            tf = np.bincount(where, np.concatenate(found_tf))
            norm = k1 * (1.0 - b + b * self._lengths[rows] / avglen)
            out[rows] += weight * idf * tf * (k1 + 1.0) / (tf + norm)
        out[~self._alive[: self.n_rows]] = 0.0
        return out

    # -- internals ----------------------------------------------------------------------
    def _delta_matrix(self) -> Columns:
        if self._delta_csc is None:
            self._delta_csc = _rows_to_columns(self._delta, len(self._df))
        return self._delta_csc

    def _settle_removals(self) -> None:
        """Lower the document frequencies of the terms of the base rows removed since the
        last call: one pass over the base's entries, however many rows were removed."""
        if not self._removed_base:
            return
        base = self._base_csc
        removed = np.zeros(base.n_rows, dtype=bool)
        removed[self._removed_base] = True
        at = np.flatnonzero(removed[base.indices])
        cols = np.searchsorted(base.indptr, at, side="right") - 1
        self._df[: base.n_cols] -= np.bincount(cols, minlength=base.n_cols)
        self._removed_base = []

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


@dataclass
class Columns:
    """A sparse matrix stored by column (CSC): column ``c`` holds the rows
    ``indices[indptr[c]:indptr[c + 1]]`` (ascending) with the values at the same places of
    ``data``."""

    indptr: np.ndarray      # int64, n_cols + 1
    indices: np.ndarray     # int32 row numbers
    data: np.ndarray        # uint16 when every value is a whole number below 65,536, else float32
    n_rows: int
    n_cols: int

    @classmethod
    def empty(cls, n_rows: int, n_cols: int) -> "Columns":
        """A matrix with no entries."""
        return cls(np.zeros(n_cols + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
                   np.zeros(0, dtype=np.float32), n_rows, n_cols)

    @classmethod
    def of(cls, rows: np.ndarray, cols: np.ndarray, values: np.ndarray, n_rows: int,
           n_cols: int) -> "Columns":
        """The matrix with ``values`` at (``rows``, ``cols``) (no position twice)."""
        order = np.lexsort((rows, cols))
        return cls(_indptr(cols[order], n_cols), rows[order].astype(np.int32),
                   _narrow(values[order]), n_rows, n_cols)

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every entry as (rows, columns, values), column by column."""
        cols = np.repeat(np.arange(self.n_cols, dtype=np.int64), np.diff(self.indptr))
        return self.indices.astype(np.int64), cols, self.data

    def columns(self, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries of ``cols`` in that order: rows (int64), values (float64), and how many
        entries each column has."""
        starts, ends = self.indptr[cols], self.indptr[cols + 1]
        counts = ends - starts
        if len(cols) == 1:
            picked = slice(int(starts[0]), int(ends[0]))
            return (self.indices[picked].astype(np.int64), self.data[picked].astype(np.float64),
                    counts)
        # the positions of every picked column's entries, without a Python loop per entry
        at = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + \
            np.arange(int(counts.sum()))
        return self.indices[at].astype(np.int64), self.data[at].astype(np.float64), counts


def _narrow(values: np.ndarray) -> np.ndarray:
    """``values`` as uint16 when that holds every one exactly, else as float32."""
    small = values.astype(np.uint16)
    if np.array_equal(small, values):
        return small
    return values.astype(np.float32)


def _indptr(sorted_keys: np.ndarray, n: int) -> np.ndarray:
    """Offsets (n + 1) where each key 0..n-1 starts in the ascending ``sorted_keys``."""
    out = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(sorted_keys, minlength=n), out=out[1:])
    return out


def _rows_to_columns(rows: list[tuple[np.ndarray, np.ndarray]], vocab: int) -> Columns:
    """The rows (term ids, tfs) as a by-column matrix; row numbers count from 0."""
    if not rows:
        return Columns.empty(0, vocab)
    row_of = np.repeat(np.arange(len(rows), dtype=np.int64), [len(ids) for ids, _ in rows])
    cols = np.concatenate([ids for ids, _ in rows]).astype(np.int64)
    values = np.concatenate([tfs for _, tfs in rows])
    return Columns.of(row_of, cols, values, len(rows), vocab)
