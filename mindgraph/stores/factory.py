"""Settings → a vector store. Only entrypoints (CLI, server, core) call this."""

from __future__ import annotations

from typing import Any

from ..config import Settings
from .base import VectorStore
from .routed import for_provider


def create_store(settings: Settings, provider: Any = None) -> VectorStore:
    """The store named by ``store.backend``; pgvector reads its DSN from ``store.dsn_env``.
    For a ``provider`` that routes languages to several models, each model's vectors are
    kept apart without the other models' zero blocks (routed.py)."""
    return for_provider(_backend(settings), provider)


def _backend(settings: Settings) -> VectorStore:
    cfg = settings.store
    if cfg.backend == "embedded":
        from .embedded import EmbeddedStore

        return EmbeddedStore.for_state_dir(settings.state_dir, cfg.tenant)
    if cfg.backend == "pgvector":
        from .pgvector import PgVectorStore

        dsn = settings.secret(cfg.dsn_env, "store.backend pgvector")
        return PgVectorStore(dsn, table=cfg.table, tenant=cfg.tenant, ef_search=cfg.ef_search,
                             m=cfg.hnsw_m, ef_construction=cfg.hnsw_ef_construction,
                             index_type=cfg.index_type,
                             dsn_env=cfg.dsn_env, rebuild_wait_s=cfg.rebuild_wait_s)
    raise AssertionError(f"unhandled store backend {cfg.backend!r}")  # config validates
