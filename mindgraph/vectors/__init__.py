"""Section vectors: pages → chunks → embeddings in a vector store, incrementally.

    chunking   sections → chunks with context, overlap and content hashes
    sync       plan/apply the incremental embed of a wiki into a store
"""

from .chunking import Chunk, Chunker, chunker_for
from .sync import SyncPlan, SyncReport, apply_sync, plan_sync, sync_pages

__all__ = ["Chunk", "Chunker", "SyncPlan", "SyncReport", "apply_sync", "chunker_for",
           "plan_sync", "sync_pages"]
