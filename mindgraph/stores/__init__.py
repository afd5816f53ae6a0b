"""Vector stores: chunk vectors keyed by (tenant, page, chunk_id, model_version).

    base       VectorStore protocol, VectorRecord, VectorHit
    embedded   numpy files under the state folder, exact cosine (the no-server default)
    pgvector   PostgreSQL + pgvector, one HNSW cosine index per model
    routed     a routed provider's vectors kept per model, without zero blocks
    factory    settings → store
"""

from .base import VectorHit, VectorRecord, VectorStore
from .embedded import EmbeddedStore
from .factory import create_store

__all__ = ["EmbeddedStore", "VectorHit", "VectorRecord", "VectorStore", "create_store"]
