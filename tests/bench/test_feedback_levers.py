"""bench/feedback_levers.py: each lever does what its README row says, and only that."""

import numpy as np

from mindgraph.page.parse import parse_page
from mindgraph.retrieval.hybrid import HybridRetriever
from mindgraph.retrieval.keyword import KeywordIndex
from bench_script_support import load_script

TEXTS = {
    "Sync.md": "# Sync\n\nSync moves the remote vault to another region.\n",
    "Regions.md": ("# Regions\n\nA remote vault lives in one region. The region is chosen "
                   "when the remote vault is made, and a server of that region keeps it.\n"),
    "Themes.md": "# Themes\n\nA theme changes colours and fonts.\n",
    "Servers.md": "# Servers\n\nEach region has its own server.\n",
}


def _pages(texts=TEXTS):
    return {path: parse_page(text, path) for path, text in texts.items()}


def _module():
    return load_script("feedback_levers")


def test_bm25plus_adds_idf_times_delta_for_each_matched_term_and_nothing_elsewhere():
    levers = _module()
    pages = _pages()
    base = HybridRetriever(pages, KeywordIndex.build(pages.values()), None, None)
    plus = levers.bm25plus_lever(base)
    index = base.keyword
    ids = index.vocab.lookup(index.query_terms("remote region"))
    before, after = index.sections.scores(ids), plus.keyword.sections.scores(ids)
    matched = np.zeros(len(before))
    for term in ids:
        rows = index.sections.scores(np.array([term])) > 0
        matched[rows] += index.sections.idf(np.array([term]))[0] * levers.BM25PLUS_DELTA
    assert np.allclose(after - before, matched)
    assert matched.max() > 0 and (matched == 0).any()       # the themes page stays at 0
    # the base index is untouched
    assert type(index.sections).__name__ == "SparseBM25"


def test_rm3_keeps_the_query_terms_first_and_adds_the_first_pages_words():
    levers = _module()
    pages = _pages()
    keyword = KeywordIndex.build(pages.values())
    rm3 = levers.RM3Index(keyword, pages)
    weights = rm3.expansion("remote vault")
    own = keyword.query_terms("remote vault")
    assert all(weights[t] >= 1.0 for t in own)
    added = set(weights) - set(own)
    assert "region" in added and 0 < len(added) <= levers.RM3_TERMS
    assert all(weights[t] < 1.0 for t in added)
    # the expansion finds the page that has only feedback words ("region", "server")
    assert {h.path for h in keyword.search("remote vault", 5)} == {"Sync.md", "Regions.md"}
    assert {h.path for h in rm3.search("remote vault", 5)} == {
        "Sync.md", "Regions.md", "Servers.md"}
    # a query with translations or expansions is the base index's
    assert rm3.search("remote vault", 5, extra={"region": 0.5}) == keyword.search(
        "remote vault", 5, extra={"region": 0.5})


def test_bm25f_title_b0_leaves_a_title_match_unnormalised_by_the_body_length():
    levers = _module()
    long_body = " ".join(f"word{i}" for i in range(200))
    pages = _pages({"Short.md": "# Canvas\n\nA board.\n",
                    "Long.md": f"# Canvas\n\n{long_body}.\n",
                    "Other.md": "# Graph\n\nA view of notes.\n"})
    keyword = KeywordIndex.build(pages.values())
    lever = levers.TitleUnnormalisedIndex(keyword, pages)
    before = {h.path: h.page_score for h in keyword.search("canvas", 5)}
    after = {h.path: h.page_score for h in lever.search("canvas", 5)}
    assert before["Short.md"] > before["Long.md"]               # one bag: the body dilutes
    assert after["Short.md"] == after["Long.md"] > 0            # the title is not normalised
    assert set(after) == {"Short.md", "Long.md"}
    # a body word is still normalised by the body's length
    assert lever.search("board", 5)[0].path == "Short.md"


def test_vector_prf_moves_the_query_toward_its_own_first_results(tmp_path):
    from mindgraph.providers.embedding.hashing import HashingEmbedder
    from mindgraph.retrieval.vector import VectorRetriever
    from mindgraph.stores.embedded import EmbeddedStore
    from mindgraph.vectors.chunking import chunker_for
    from mindgraph.vectors.sync import sync_pages

    levers = _module()
    pages = _pages()
    provider = HashingEmbedder(256)
    store = EmbeddedStore.for_state_dir(tmp_path / "state")
    sync_pages([pages[p] for p in sorted(pages)], provider, store, chunker_for(provider))
    vector = VectorRetriever(provider, store)
    query = "remote vault region"
    moved = levers.FeedbackVector(vector, 1, 0.4, 0.6)
    q, first = vector.embed_query(query), vector.search(query, 1)[0]
    chunk = levers.chunk_vector(store, vector.model_version, q, first.path, first.chunk_id)
    expected = 0.4 * q + 0.6 * chunk
    assert np.allclose(moved.embed_query(query), expected / np.linalg.norm(expected), atol=1e-6)
    # the first page comes nearer, and the base retriever's vector is unchanged
    assert moved.search(query, 1)[0].score > first.score
    assert np.array_equal(vector.embed_query(query), q)
