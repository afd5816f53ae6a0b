"""One model per language without zero blocks: each model's vectors in a table of their own.

A routed provider (providers/embedding/routed.py, ``embedding.languages``) gives each model a
block of one wide vector (MiniLM 384 + use-multilingual-v3 512 = 896): a section's vector has
its own model's block filled and zeros elsewhere, and so has a query's. Stored as such, every
section would cost the whole width (the zeros included) in the file, in memory and in every
search. ``RoutedStore`` wraps either store (embedded or pgvector) and keeps, for each section,
only its model's block, under a model_version of that model's part::

    <routed model_version>#<route>:<width>    e.g. local:routed(*=…,ja+zh=…):896#1:512

so each part is an ordinary model of the store (its own .npz and graph, its own partial HNSW
index of its width) and nothing in the stores changes. Above it nothing changes either: the
sync and the retriever keep using the routed model_version and wide vectors. A query (one
block filled) searches only its model's part with that block, so its scores are the cosines
the wide layout gave; the sections of other models, which the wide layout scored exactly 0,
are not returned (no caller used them: a page without a hit scores 0 anyway).

Upgrade: a workspace embedded by an older version holds the wide rows under the routed
model_version itself. While they are there, reads are answered from them (unchanged
answers); the first write (``apply_sync`` calls ``upgrade`` first, so `mindgraph embed` does
it even when nothing changed) copies each wide row's filled block into its part and then
drops the wide model. A kill midway leaves the wide rows, which are still the answer, and the
next write copies again (rows already in a part are kept). A wide row that fills no block or
several is not copied: its section is embedded again.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from dataclasses import replace
from typing import Any, Callable, Collection, Sequence

import numpy as np

from ..errors import StoreError
from .base import (ChunkMove, VectorHit, VectorRecord, VectorStore, as_query_vector,
                   stack_records)

# a part's model_version: the routed one, the route and the part's width
_PART = re.compile(r"^(?P<base>local:routed\(.*\):\d+)#(?P<route>\d+):(?P<width>\d+)$")


def part_version(model_version: str, route: int, width: int) -> str:
    """The model_version under which route ``route`` of ``model_version`` is stored."""
    return f"{model_version}#{route}:{width}"


def routed_base(name: str) -> str:
    """The routed model_version a stored part belongs to (``name`` itself for any other)."""
    found = _PART.match(name)
    return found.group("base") if found else name


def for_provider(store: VectorStore, provider: Any) -> VectorStore:
    """``store`` as the provider needs it: wrapped when the provider routes languages to
    several models (it has ``blocks``), else unchanged."""
    blocks = getattr(provider, "blocks", None) if provider is not None else None
    return store if blocks is None else RoutedStore(store, provider.model_version, blocks)


class RoutedStore:
    """A store that keeps each routed vector's filled block only (see the module docstring);
    every other model_version goes to ``inner`` unchanged."""

    def __init__(self, inner: VectorStore, model_version: str,
                 blocks: Sequence[tuple[int, int]]):
        self.inner = inner
        self.model_version = model_version
        self.blocks = tuple((int(a), int(b)) for a, b in blocks)
        self.dimension = self.blocks[-1][1]
        self.parts = tuple(part_version(model_version, i, b - a)
                           for i, (a, b) in enumerate(self.blocks))
        self._wide: bool | None = None     # the older layout's rows are stored (None: unread)
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        # what the wrapped store has beyond the contract (``remote``, ``folder``, ...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    # -- the older, wide layout --------------------------------------------------------------

    def _has_wide(self, refresh: bool = False) -> bool:
        with self._lock:
            if self._wide is None or refresh:
                self._wide = self.inner.count(self.model_version) > 0
            return self._wide

    def upgrade(self) -> int:
        """Move the older layout's wide rows of the routed model into its parts (see the
        module docstring); return how many were moved (0: none were stored)."""
        with self._lock:
            if not self._has_wide(refresh=True):
                return 0
            held = {(page, chunk) for part in self.parts
                    for page, chunks in self.inner.hashes(part).items() for chunk in chunks}
            moved = 0
            for batch in self.inner.records(self.model_version):
                fresh = [r for r in batch if (r.page, r.chunk_id) not in held]
                if fresh and len({np.asarray(r.vector).size for r in fresh}) == 1 and \
                        np.asarray(fresh[0].vector).size == self.dimension:
                    matrix = stack_records(fresh, self.model_version, self.description)
                    moved += self._write_parts(fresh, matrix, strict=False, clean=False)
            self.inner.flush()          # the parts are durable before the wide rows go
            self.inner.drop_model(self.model_version)
            self._wide = False
            return moved

    # -- splitting -----------------------------------------------------------------------------

    def _route_of(self, vector: np.ndarray) -> list[int]:
        return [i for i, (a, b) in enumerate(self.blocks) if np.any(vector[a:b])]

    def _write_parts(self, records: Sequence[VectorRecord], matrix: np.ndarray, *,
                     strict: bool, clean: bool) -> int:
        """Upsert each record's filled block into its part; ``clean``: remove the same
        chunks from the other parts (a page whose language changed changes model)."""
        by_route: dict[int, list[VectorRecord]] = defaultdict(list)
        for record, vector in zip(records, matrix):
            routes = self._route_of(vector)
            if len(routes) != 1:
                if not strict:
                    continue        # not a routed vector: its section is embedded again
                raise StoreError(
                    f"{self.description}: chunk {record.chunk_id!r} of {record.page} has a "
                    f"vector filling {len(routes)} of the {len(self.blocks)} model blocks of "
                    f"{self.model_version}; a routed vector fills exactly one (embed it with "
                    f"the routed provider).")
            a, b = self.blocks[routes[0]]
            by_route[routes[0]].append(replace(record, vector=vector[a:b]))
        written = 0
        for route, part_records in sorted(by_route.items()):
            written += self.inner.upsert(self.parts[route], part_records)
            if clean:
                pages: dict[str, set[str]] = defaultdict(set)
                for r in part_records:
                    pages[r.page].add(r.chunk_id)
                for other, part in enumerate(self.parts):
                    if other != route:
                        for page, chunk_ids in pages.items():
                            self.inner.delete(page, chunk_ids, model_version=part)
        return written

    # -- the contract ----------------------------------------------------------------------

    @property
    def description(self) -> str:
        return self.inner.description

    def repairs(self) -> list[str]:
        return self.inner.repairs()

    def index_warnings(self, model_version: str) -> list[str]:
        if model_version != self.model_version:
            return self.inner.index_warnings(model_version)
        return [w for part in self.parts for w in self.inner.index_warnings(part)]

    def rebuild_index(self, model_version: str,
                      notice: Callable[[str], None] | None = None) -> str:
        if model_version != self.model_version:
            return self.inner.rebuild_index(model_version, notice)
        self.upgrade()
        return "; ".join(self.inner.rebuild_index(part, notice) for part in self.parts)

    def upsert(self, model_version: str, records: Sequence[VectorRecord]) -> int:
        if model_version != self.model_version:
            return self.inner.upsert(model_version, records)
        if not records:
            return 0
        matrix = stack_records(records, model_version, self.description)
        if matrix.shape[1] != self.dimension:
            raise StoreError(f"{self.description}: {model_version} holds vectors of "
                             f"{self.dimension} dimensions, not {matrix.shape[1]}. A "
                             f"model_version must name its dimension.")
        self.upgrade()
        return self._write_parts(records, matrix, strict=True, clean=True)

    def delete(self, page: str, chunk_ids: Collection[str] | None = None, *,
               model_version: str | None = None) -> int:
        if model_version != self.model_version:
            return self.inner.delete(page, chunk_ids, model_version=model_version)
        self.upgrade()
        return sum(self.inner.delete(page, chunk_ids, model_version=part)
                   for part in self.parts)

    def query(self, vector: np.ndarray, k: int, model_version: str, *,
              scopes: Collection[str] | None = None,
              pages: Collection[str] | None = None) -> list[VectorHit]:
        """The top-k of the model(s) whose block the query fills: one part searched with
        its block (a query from the routed provider fills one); the cosines are the wide
        vector's."""
        if model_version != self.model_version:
            return self.inner.query(vector, k, model_version, scopes=scopes, pages=pages)
        if self._has_wide():
            hits = self.inner.query(vector, k, model_version, scopes=scopes, pages=pages)
            if hits or self._has_wide(refresh=True):
                return hits        # not upgraded yet: the wide rows answer as they did
        q = as_query_vector(vector, self.dimension, model_version, self.description)
        routes = self._route_of(q)
        if len(routes) == 1:
            a, b = self.blocks[routes[0]]
            return self.inner.query(q[a:b], k, self.parts[routes[0]], scopes=scopes,
                                    pages=pages)
        hits: list[VectorHit] = []
        for route in routes:
            # a unit query's cosine with a row of one block is that block's share of it
            a, b = self.blocks[route]
            weight = float(np.linalg.norm(q[a:b]))
            hits += [replace(h, score=h.score * weight) for h in self.inner.query(
                q[a:b], k, self.parts[route], scopes=scopes, pages=pages)]
        hits.sort(key=lambda h: (-h.score, h.page, h.chunk_id))
        return hits[:k]

    def hashes(self, model_version: str) -> dict[str, dict[str, str]]:
        """page → chunk_id → hash; a chunk found in two parts (another process moved it to
        another model meanwhile) has no hash, so the sync embeds it again."""
        if model_version != self.model_version:
            return self.inner.hashes(model_version)
        if self._has_wide():
            found = self.inner.hashes(model_version)
            if found or self._has_wide(refresh=True):
                return found     # (none found: another process may have upgraded it)
        out: dict[str, dict[str, str]] = {}
        for part in self.parts:
            for page, chunks in self.inner.hashes(part).items():
                held = out.setdefault(page, {})
                for chunk_id, digest in chunks.items():
                    held[chunk_id] = "" if chunk_id in held else digest
        return out

    def count(self, model_version: str | None = None) -> int:
        if model_version is None:
            return sum(self.model_versions().values())
        if model_version != self.model_version:
            return self.inner.count(model_version)
        if self._has_wide():
            found = self.inner.count(model_version)
            if found or self._has_wide(refresh=True):
                return found
        return sum(self.inner.count(part) for part in self.parts)

    def count_within(self, model_version: str, *, scopes: Collection[str] | None = None,
                     pages: Collection[str] | None = None) -> int:
        if model_version != self.model_version:
            return self.inner.count_within(model_version, scopes=scopes, pages=pages)
        counts = self.part_counts(model_version, scopes=scopes, pages=pages)
        return sum(counts) if counts is not None else \
            self.inner.count_within(model_version, scopes=scopes, pages=pages)

    def part_counts(self, model_version: str, *, scopes: Collection[str] | None = None,
                    pages: Collection[str] | None = None) -> tuple[int, ...] | None:
        """How many chunks each model (route) holds inside the filters ``query`` takes: a
        query whose own model holds almost none of them is better answered by another
        (retrieval/vector.py). None while an older, wide layout's rows are the answer (which
        model a wide row belongs to is not stored) or for another model_version."""
        if model_version != self.model_version or self._has_wide():
            return None
        return tuple(self.inner.count_within(part, scopes=scopes, pages=pages)
                     for part in self.parts)

    def model_versions(self) -> dict[str, int]:
        """Every stored model, parts counted as their routed model (the wide rows instead
        while an older layout's are stored)."""
        out: dict[str, int] = {}
        wide: dict[str, int] = {}
        for name, n in self.inner.model_versions().items():
            base = routed_base(name)
            if base == name:
                wide[name] = n
            else:
                out[base] = out.get(base, 0) + n
        out.update(wide)
        return out

    def drop_model(self, model_version: str) -> int:
        """Remove a model; a routed one with every part (and any wide rows)."""
        with self._lock:
            names = [name for name in self.inner.model_versions()
                     if name == model_version or routed_base(name) == model_version]
            removed = self.model_versions().get(model_version, 0)
            for name in names:
                self.inner.drop_model(name)
            if model_version == self.model_version:
                self._wide = False
            return removed

    def move_chunks(self, model_version: str, moves: Sequence[ChunkMove]) -> int:
        if model_version != self.model_version:
            return self.inner.move_chunks(model_version, moves)
        self.upgrade()
        return sum(self.inner.move_chunks(part, moves) for part in self.parts)

    def records(self, model_version: str, batch_size: int = 2000) -> Any:
        """The stored records of a model, in batches (a routed one's as wide vectors)."""
        if model_version != self.model_version or self._has_wide():
            yield from self.inner.records(model_version, batch_size)
            return
        for route, part in enumerate(self.parts):
            a, b = self.blocks[route]
            for batch in self.inner.records(part, batch_size):
                wide = []
                for r in batch:
                    vector = np.zeros(self.dimension, dtype=np.float32)
                    vector[a:b] = r.vector
                    wide.append(replace(r, vector=vector))
                yield wide

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> "RoutedStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
