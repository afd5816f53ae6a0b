"""Build a hybrid retriever for a benchmark: over the workspace's wiki, or over a BEIR corpus.

A BEIR corpus becomes pages ("<doc id>.md" with the title as H1), indexed in memory for
keywords and embedded into an embedded vector store under the state folder (kept between runs,
so only the first run pays for embedding).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..config import Settings
from ..core import Mindgraph
from ..page.parse import parse_page
from ..retrieval.datasets import BeirDataset
from ..retrieval.hybrid import HybridRetriever
from ..retrieval.keyword import KeywordIndex
from ..retrieval.query_language import languages_of
from ..retrieval.vector import VectorRetriever
from ..stores.embedded import EmbeddedStore
from ..stores.routed import for_provider
from ..vectors.chunking import chunker_for
from ..vectors.sync import sync_pages

Progress = Callable[[int], None]


def wiki_retriever(mg: Mindgraph, embed: bool = True,
                   progress: Progress | None = None) -> HybridRetriever:
    """The workspace's own hybrid retriever, after embedding what is missing."""
    if embed:
        mg.embed(progress=progress)
    mg.forget_vectors()
    return mg.hybrid_retriever()


def beir_retriever(settings: Settings, data: BeirDataset, name: str, embed: bool = True,
                   progress: Progress | None = None) -> HybridRetriever:
    """A retriever over a BEIR corpus (documents as pages, no graph)."""
    pages = {f"{d.id}.md": parse_page(f"# {d.title}\n\n{d.text}" if d.title else d.text,
                                      f"{d.id}.md") for d in data.documents}
    keyword = KeywordIndex.build(pages.values())
    vector = None
    why = "vectors disabled (--no-embed)"
    if embed:
        mg = Mindgraph(settings)
        provider = mg.embedding_provider()
        folder = Path(settings.state_dir) / "bench" / name
        store = for_provider(EmbeddedStore.for_state_dir(folder), provider)
        sync_pages([pages[p] for p in sorted(pages)], provider, store, chunker_for(provider),
                   progress=progress)
        vector, why = VectorRetriever(provider, store, languages_of(pages.values())), None
    return HybridRetriever(pages, keyword, None, vector, settings.retrieval, vector_error=why)
