"""Fusion for a model whose cosines crowd into a narrow band (multilingual-e5-small): its
scores are measured from the query's zero point and every candidate gets both retrievers'
scores, so being in its candidate pool no longer outweighs BM25's order.

The model here is real feature hashing with a constant component added to every vector, which
squeezes its cosines into the band e5's sit in ((cos + 4) / 5: unrelated texts about 0.8)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from mindgraph.config import RetrievalSettings
from mindgraph.page.parse import parse_page
from mindgraph.providers.embedding.base import compresses_cosines
from mindgraph.providers.embedding.hashing import HashingEmbedder
from mindgraph.providers.embedding.routed import RoutedEmbeddings
from mindgraph.retrieval.hybrid import HybridRetriever
from mindgraph.retrieval.keyword import KeywordIndex
from mindgraph.retrieval.vector import VectorRetriever
from mindgraph.stores.embedded import EmbeddedStore
from mindgraph.vectors.chunking import chunker_for
from mindgraph.vectors.sync import sync_pages


class SqueezedHashing(HashingEmbedder):
    """Hashing vectors plus one constant dimension of weight 2, normalised again."""

    compressed_cosines = True

    @property
    def model_version(self) -> str:
        return "squeezed:v1:" + str(self.dimension)

    @property
    def dimension(self) -> int:
        return self._dimension + 1

    def _squeeze(self, matrix: np.ndarray) -> np.ndarray:
        out = np.hstack([matrix, np.full((len(matrix), 1), 2.0)])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._squeeze(super().embed_documents(texts))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._squeeze(super().embed_queries(texts))


FILLER = ("mango river stone cloud pepper lantern violin harbor meadow copper falcon "
          "orchid tunnel basket glacier saddle").split()
QUERY = "zebra crossing sync devices"


def retriever(tmp_path: Path, provider, settings: RetrievalSettings = RetrievalSettings()
              ) -> HybridRetriever:
    """A page BM25 ranks first ("zebra crossing" among many other words: the squeezed vectors
    rank it last of 41) and forty short pages about syncing devices, close to the query in
    meaning and just behind it in BM25."""
    texts = {"Zebra crossing.md": "# Crossing\n\nA zebra crossing. " + " ".join(FILLER * 2)}
    for i in range(40):
        texts[f"Sync {i}.md"] = (f"# Sync devices {i}\n\nSync devices and more devices in sync"
                                 + (", zebra" if i < 20 else "") + (" crossing" if i % 2 else "")
                                 + f" {FILLER[i % 16]}.\n")
    pages = {path: parse_page(text, path) for path, text in texts.items()}
    store = EmbeddedStore.for_state_dir(tmp_path / "state")
    sync_pages([pages[p] for p in sorted(pages)], provider, store, chunker_for(provider))
    return HybridRetriever(pages, KeywordIndex.build(pages.values()), None,
                           VectorRetriever(provider, store), settings,
                           calibration_file=tmp_path / "calibration.json")


def test_only_e5_among_the_local_models_is_declared_compressed():
    assert not compresses_cosines(HashingEmbedder(32))
    assert compresses_cosines(SqueezedHashing(32))

    class Named(HashingEmbedder):
        @property
        def model_version(self) -> str:
            return "local:multilingual-e5-small-w8a8:384"

    assert compresses_cosines(Named(32))


def test_bm25s_first_page_outside_the_squeezed_pool_stays_first(tmp_path):
    hybrid = retriever(tmp_path, SqueezedHashing(64))
    assert hybrid.keyword.search(QUERY, 1)[0].path == "Zebra crossing.md"
    pool = [hit.path for hit in hybrid.vector.search(QUERY, 30)]
    assert "Zebra crossing.md" not in pool
    assert hybrid._fusion_fit(QUERY, {"keyword": [], "vector": []}) == ("calibrated", True)
    first = hybrid.search(QUERY, use_cache=False).results[0]
    assert first.page == "Zebra crossing.md"


def test_without_the_fit_the_pool_outweighs_bm25s_order(tmp_path):
    # the old fusion (max over the pool, no missing scores): every page of the squeezed
    # model's pool scores nearly its top, so a page both found overtakes BM25's first
    # (and no keyword-only penalty, which came later: it would take that place away)
    off = RetrievalSettings(compressed_cosine_fusion=False, keyword_only_penalty=0.0)
    results = retriever(tmp_path, SqueezedHashing(64), off).search(QUERY, use_cache=False)
    assert results.results[0].page != "Zebra crossing.md"
    assert "Zebra crossing.md" in [r.page for r in results.results[:5]]   # reserved place


def test_a_model_not_declared_compressed_is_fused_as_configured(tmp_path):
    class Undeclared(SqueezedHashing):
        compressed_cosines = False

    hybrid = retriever(tmp_path, Undeclared(64))
    assert hybrid._fusion_fit(QUERY, {"keyword": [], "vector": []}) == ("max", False)
    assert hybrid.search(QUERY, use_cache=False).results[0].page != "Zebra crossing.md"
    minmax = retriever(tmp_path / "minmax", SqueezedHashing(64),
                       RetrievalSettings(normalization="minmax"))
    # only max gives way to calibrated; another chosen normalisation is kept
    assert minmax._fusion_fit(QUERY, {"keyword": [], "vector": []}) == ("minmax", True)


def test_with_one_model_per_language_the_fit_follows_the_querys_model(tmp_path):
    # embedding.languages: MiniLM-like plain vectors for English, squeezed ones for Japanese
    provider = RoutedEmbeddings(HashingEmbedder(64), {"ja": SqueezedHashing(32)})
    texts = {f"en/p{i}.md": f"# Topic {i}\n\nWords about alpha{i} and beta.\n" for i in range(20)}
    texts.update({f"ja/p{i}.md": f"# はなし{i}\n\n第{i}の話題について書きます。\n"
                  for i in range(20)})
    pages = {path: parse_page(text, path) for path, text in texts.items()}
    store = EmbeddedStore.for_state_dir(tmp_path / "state")
    sync_pages([pages[p] for p in sorted(pages)], provider, store, chunker_for(provider))
    hybrid = HybridRetriever(pages, KeywordIndex.build(pages.values()), None,
                             VectorRetriever(provider, store),
                             calibration_file=tmp_path / "calibration.json")
    both = {"keyword": [], "vector": []}
    assert hybrid._fusion_fit("話題について", both) == ("calibrated", True)
    assert hybrid._fusion_fit("alpha3 words", both) == ("max", False)
    assert hybrid._fusion_fit("話題について", {"keyword": []}) == ("max", False)  # no vectors
