"""The vector store contract: section-chunk vectors keyed by page, chunk and model_version.

Two implementations keep the same contract (and pass the same test suite): ``embedded`` (numpy
files under the state folder, exact cosine) and ``pgvector`` (PostgreSQL, HNSW index).

Rules every store keeps:
- A record is identified by (tenant, page, chunk_id, model_version); upserting it again
  replaces its vector and hash. A store instance works inside one tenant.
- Vectors of different model_versions are never compared: every query names its
  model_version and only sees vectors of that model. A model_version has one dimension.
- Scores are cosine similarities in [-1, 1], highest first.
- Changes are durable once ``flush()`` (or ``close()``) returns; pgvector commits at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Collection, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np

from ..errors import StoreError


@dataclass(frozen=True)
class VectorRecord:
    """One chunk's vector, ready to store."""

    page: str            # vault-relative page path
    chunk_id: str        # "<section_id>" or "<section_id>~2", "~3" for later parts
    section_id: str
    content_hash: str    # SHA-256 of the embedded text
    vector: np.ndarray = field(compare=False, repr=False)
    scope: str = ""      # personal / team / shared, or "" when the page sets none


@dataclass(frozen=True)
class ChunkMove:
    """One stored chunk that goes from ``old_page`` to ``new_page`` with a new hash."""

    old_page: str
    chunk_id: str
    new_page: str
    content_hash: str


SECOND_VECTOR = "@xl"    # a chunk id's end: the multilingual model's second vector of a section


def is_second_vector(chunk_id: str) -> bool:
    """True for a section's second vector (``embedding.cross_lingual_vectors``,
    vectors/chunking.py): searched by questions, left out where a page's neighbours are its
    own model's (enrich's links, semantic coverage)."""
    return chunk_id.endswith(SECOND_VECTOR)


@dataclass(frozen=True)
class VectorHit:
    """One query result."""

    page: str
    chunk_id: str
    section_id: str
    score: float         # cosine similarity
    scope: str = ""


@runtime_checkable
class VectorStore(Protocol):
    """Where chunk vectors live; see the module docstring for the rules."""

    @property
    def description(self) -> str:
        """Where the store is, for messages ("embedded store at ...", masked DSN for pg)."""
        ...

    def repairs(self) -> list[str]:
        """What the store found damaged and left out when it read its files (empty when
        nothing was), each naming the file; `mindgraph embed` reports them."""
        ...

    def index_warnings(self, model_version: str) -> list[str]:
        """Why the model's approximate index is not what the settings ask for (built with
        other settings), each naming them and the fix; empty when it is."""
        ...

    def rebuild_index(self, model_version: str,
                      notice: Callable[[str], None] | None = None) -> str:
        """Build the model's approximate index again with the configured settings; say what
        was done (`mindgraph embed --rebuild-index`). ``notice`` hears, while it runs, what
        the caller should know meanwhile (another process rebuilding it: waiting)."""
        ...

    def upsert(self, model_version: str, records: Sequence[VectorRecord]) -> int:
        """Insert or replace records of one model; return how many were written."""
        ...

    def delete(self, page: str, chunk_ids: Collection[str] | None = None, *,
               model_version: str | None = None) -> int:
        """Remove a page's chunks (all, or those named), of one model or of every model."""
        ...

    def query(self, vector: np.ndarray, k: int, model_version: str, *,
              scopes: Collection[str] | None = None,
              pages: Collection[str] | None = None) -> list[VectorHit]:
        """The ``k`` most similar chunks of ``model_version``, optionally within scopes/pages."""
        ...

    def hashes(self, model_version: str) -> dict[str, dict[str, str]]:
        """What is stored for a model: page → chunk_id → content hash."""
        ...

    def count(self, model_version: str | None = None) -> int:
        """Number of stored chunks, of one model or of all."""
        ...

    def count_within(self, model_version: str, *, scopes: Collection[str] | None = None,
                     pages: Collection[str] | None = None) -> int:
        """Number of stored chunks of one model inside the filters ``query`` takes (a
        routed query asks how much of what it searches each model holds: stores/routed.py)."""
        ...

    def model_versions(self) -> dict[str, int]:
        """Every stored model_version with its chunk count."""
        ...

    def drop_model(self, model_version: str) -> int:
        """Remove every vector of a model; return how many were removed."""
        ...

    def move_chunks(self, model_version: str, moves: Sequence[ChunkMove]) -> int:
        """Give stored chunks of one model to another page (a moved page keeps its vectors),
        with their new content hash; return how many moved."""
        ...

    def records(self, model_version: str,
                batch_size: int = 2000) -> Iterator[list[VectorRecord]]:
        """Every stored record of a model with its (unit) vector, in batches: what an
        upgrade of the layout copies (stores/routed.py)."""
        ...

    def flush(self) -> None:
        """Make every change so far durable."""
        ...

    def close(self) -> None:
        """Flush and release files or connections."""
        ...


def as_query_vector(vector: np.ndarray, dimension: int, model_version: str,
                    where: str) -> np.ndarray:
    """Check a query vector's shape against the model's dimension and normalise it."""
    q = np.asarray(vector, dtype=np.float32).reshape(-1)
    if q.shape[0] != dimension:
        raise StoreError(f"{where}: query vector has {q.shape[0]} dimensions but "
                         f"{model_version} stores vectors of {dimension} dimensions. Embed "
                         f"the query with the same model as the stored vectors.")
    norm = float(np.linalg.norm(q))
    return q / norm if norm > 0 else q


def stack_records(records: Sequence[VectorRecord], model_version: str,
                  where: str) -> np.ndarray:
    """The records' vectors as one float32 (n, d) matrix; all rows must have one width."""
    widths = {np.asarray(r.vector).reshape(-1).shape[0] for r in records}
    if len(widths) > 1:
        raise StoreError(f"{where}: records for {model_version} have mixed dimensions "
                         f"{sorted(widths)}; one model has one dimension.")
    matrix = np.asarray([np.asarray(r.vector, dtype=np.float32).reshape(-1) for r in records],
                        dtype=np.float32)
    if not np.all(np.isfinite(matrix)):
        raise StoreError(f"{where}: a vector for {model_version} contains NaN or infinity; "
                         f"the embedding provider returned bad data.")
    return matrix


def check_unique(records: Sequence[VectorRecord], where: str) -> None:
    """Reject a batch that names the same (page, chunk_id) twice."""
    seen: set[tuple[str, str]] = set()
    for r in records:
        key = (r.page, r.chunk_id)
        if key in seen:
            raise StoreError(f"{where}: chunk {r.chunk_id!r} of {r.page} appears twice in one "
                             f"upsert; chunk ids must be unique within a page.")
        seen.add(key)


def prepared_matrix(records: Sequence[VectorRecord], model_version: str,
                    where: str) -> np.ndarray:
    """Check a batch (unique chunks, one width, finite values) and return its unit rows."""
    check_unique(records, where)
    matrix = stack_records(records, model_version, where)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)
