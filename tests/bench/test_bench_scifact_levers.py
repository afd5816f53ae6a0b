"""bench/bench_scifact_levers.py: each lever does what its figures in the README claim."""

import numpy as np

from mindgraph.page.parse import parse_page
from mindgraph.retrieval.hybrid import HybridRetriever
from mindgraph.retrieval.keyword import KeywordIndex
from bench_script_support import BENCH, KEYWORD_ONLY, load_script, usage_error

SCRIPT = BENCH / "bench_scifact_levers.py"


def _module():
    return load_script("bench_scifact_levers")


def test_pair_share_counts_adjacent_query_pairs_near_each_other_in_either_order():
    levers = _module()
    query = ["gene", "express", "tumour"]             # pairs: gene–express, express–tumour
    assert levers.pair_share(query, ["express", "gene", "x", "x", "tumour"], 1) == 0.5
    assert levers.pair_share(query, ["express", "gene", "x", "x", "tumour"], 4) == 1.0
    assert levers.pair_share(query, ["tumour", "x", "gene"], 1) == 0.0
    assert levers.pair_share(["gene"], ["gene"], 2) == 0.0             # no pair to look for


def test_idf_coverage_is_the_share_of_idf_mass_a_page_holds():
    levers = _module()
    idf = {"rare": 3.0, "common": 1.0}
    assert levers.idf_coverage(idf, {"rare"}) == 0.75
    assert levers.idf_coverage(idf, {"common", "other"}) == 0.25
    assert levers.idf_coverage({"rare": 3.0}, {"rare"}) is None         # one term: no share


def test_feedback_vector_moves_the_query_towards_the_found_chunks_and_stays_unit():
    levers = _module()
    query, found = np.array([1.0, 0.0]), [np.array([0.0, 2.0])]
    moved = levers.feedback_vector(query, found, 1.0)
    assert np.isclose(np.linalg.norm(moved), 1.0)
    assert np.allclose(moved, [2 ** -0.5, 2 ** -0.5], atol=1e-6)
    assert np.allclose(levers.feedback_vector(query, [], 1.0), [1.0, 0.0])


def test_the_proximity_lever_ranks_the_page_with_the_words_together_first():
    levers = _module()
    texts = {"Apart.md": "# Apart\n\nA gene was studied in mice for years; expression of "
                         "proteins was seen. Another gene, in rats, showed some expression.",
             "Together.md": "# Together\n\nMice and rats were studied for many long years "
                            "by teams of people in labs around the world: gene expression."}
    pages = {path: parse_page(text, path) for path, text in texts.items()}
    base = HybridRetriever(pages, KeywordIndex.build(pages.values()), None, None)

    def ranked(retriever):
        return [r.page for r in retriever.search("gene expression", KEYWORD_ONLY,
                                                 use_cache=False).results]

    assert ranked(base)[0] == "Apart.md"       # BM25 alone: the shorter page with both words
    lever = levers.Proximity(base, gamma=0.3, window=2)     # BM25 has it 0.80 of the best
    assert lever.pages is base.pages and lever.keyword is base.keyword
    assert ranked(lever)[0] == "Together.md"


def test_an_unknown_lever_is_a_usage_error_naming_the_choices(tmp_path):
    said = usage_error(SCRIPT, tmp_path, "--levers", "base,nonesuch")
    assert "unknown ['nonesuch']" in said and "coverage1" in said
