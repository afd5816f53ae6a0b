"""The retrievers the bench scripts build (mindgraph/bench/) decide a query's language as
the product does: a query of Han alone is Japanese over Japanese pages
(retrieval/query_language.py), on the vector side too."""

from mindgraph.bench.crosslingual import language_retriever
from mindgraph.config import settings_from_dict
from mindgraph.graph.build import KnowledgeGraph
from mindgraph.page.parse import parse_page
from mindgraph.providers.embedding.hashing import HashingEmbedder
from mindgraph.providers.embedding.routed import RoutedEmbeddings
from mindgraph.retrieval.hybrid import HybridRetriever
from mindgraph.retrieval.keyword import KeywordIndex
from mindgraph.retrieval.vector import VectorRetriever
from mindgraph.stores.embedded import EmbeddedStore
from mindgraph.vectors.chunking import chunker_for
from mindgraph.vectors.sync import sync_pages

TEXTS = {
    "Sync.md": "# Sync\n\nSync keeps your notes the same on every device.\n",
    "ja/同期.md": "# 同期\n\nObsidian Sync は、すべてのデバイスの"
                  "間でノートを同じ状態に保つための公式のサービスです。\n",
    "ja/稲荷.md": "# 伏見稲荷\n\n伏見稲荷大社は京都にある神社です。千本鳥居で知られています。\n",
}


def test_the_cross_lingual_retriever_routes_a_han_only_query_to_the_japanese_model(tmp_path):
    provider = RoutedEmbeddings(HashingEmbedder(64), {"ja": HashingEmbedder(32)})
    pages = {path: parse_page(text, path) for path, text in TEXTS.items()}
    store = EmbeddedStore.for_state_dir(tmp_path / "state")
    sync_pages([pages[p] for p in sorted(pages)], provider, store, chunker_for(provider))
    base = HybridRetriever(pages, KeywordIndex.build(pages.values()),
                           KnowledgeGraph.build(pages), VectorRetriever(provider, store))
    settings = settings_from_dict({}, base_dir=tmp_path)
    japanese = {p: page for p, page in pages.items() if p.startswith("ja/")}
    over_ja = language_retriever(settings, base, japanese)
    query = "伏見稲荷"
    assert over_ja.query_language(query) == "ja"
    assert over_ja.vector.query_language(query) == "ja"     # was "zh": no pages known
    over_ja.vector.embed_query(query)
    assert over_ja.vector.route_note(query) is None         # served by its own model
