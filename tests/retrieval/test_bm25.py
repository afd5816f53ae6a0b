"""The sparse BM25 index: Lucene's formula, incremental changes equal a rebuild."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mindgraph.retrieval.bm25 import BM25Params, SparseBM25

DOCS = {"a": {0: 2, 1: 1}, "b": {1: 3}, "c": {0: 1, 2: 4, 3: 1}, "d": {3: 2}}


def reference(docs, query, k1=1.2, b=0.75):
    """BM25 written out term by term, for comparison."""
    n = len(docs)
    avglen = sum(sum(d.values()) for d in docs.values()) / n
    out = {}
    for key, doc in docs.items():
        length = sum(doc.values())
        score = 0.0
        for term in query:
            df = sum(1 for d in docs.values() if term in d)
            tf = doc.get(term, 0)
            if df and tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avglen))
        out[key] = score
    return out


def _scores(index, query):
    raw = index.scores(np.array(query))
    return {index.key(r): raw[r] for r in range(index.n_rows) if index.key(r) is not None}


def test_scores_follow_lucene_bm25():
    index = SparseBM25(BM25Params(1.2, 0.75))
    for key, counts in DOCS.items():
        index.add(key, counts)
    for query in ([0], [1, 3], [0, 2, 3], [9]):
        got = _scores(index, query)
        want = reference(DOCS, query)
        assert got.keys() == want.keys()
        for key in want:
            assert math.isclose(got[key], want[key], rel_tol=1e-6, abs_tol=1e-9)


ops = st.lists(st.tuples(st.sampled_from("abcdefg"),
                         st.one_of(st.none(), st.dictionaries(st.integers(0, 6),
                                                              st.integers(1, 4), min_size=1,
                                                              max_size=4))),
               min_size=1, max_size=30)


@settings(max_examples=100, deadline=None)
@given(ops, st.booleans())
def test_incremental_changes_score_like_a_fresh_index(steps, compact_midway):
    index = SparseBM25(compact_min=3, compact_share=0.2)
    docs: dict = {}
    for i, (key, counts) in enumerate(steps):
        if counts is None:
            assert index.remove(key) == (key in docs)
            docs.pop(key, None)
        else:
            index.add(key, counts)
            docs[key] = counts
        if compact_midway and i == len(steps) // 2:
            index.compact()
    fresh = SparseBM25()
    for key, counts in docs.items():
        fresh.add(key, counts)
    assert len(index) == len(docs)
    for query in ([0], [1, 2], [3, 4, 5, 6], [0, 1, 2, 3, 4, 5, 6]):
        got, want = _scores(index, query), _scores(fresh, query)
        assert got.keys() == want.keys() == docs.keys()
        for key in docs:
            assert math.isclose(got[key], want[key], rel_tol=1e-9, abs_tol=1e-12)


def test_a_concept_scores_as_one_term_with_the_summed_frequencies():
    """A concept (a word's translations) scores as one term whose frequency in a row is its
    terms' frequencies times their shares and whose document frequency is theirs the same
    way: a concept of one term equals that term weighed the same, in the base segment and in
    rows added or removed since; two synonyms of equal share and frequency score as one."""
    rng = np.random.default_rng(7)
    index = SparseBM25()
    for row in range(200):
        index.add(row, {int(t): float(rng.integers(1, 4))
                        for t in rng.choice(40, 6, replace=False)})
    index.compact()
    for row in range(200, 215):
        index.add(row, {int(t): 1.0 for t in rng.choice(40, 4, replace=False)})
    index.remove(3)
    index.remove(205)
    single = index.concept_scores([(np.array([7]), np.array([1.0]), 1.75)])
    assert np.allclose(single, index.scores(np.array([7]), np.array([1.75])))
    twins = SparseBM25()
    twins.add("a", {0: 2.0, 1: 2.0})       # both synonyms twice: length 4
    twins.add("b", {0: 1.0})
    twins.add("c", {2: 1.0})
    got = twins.concept_scores([(np.array([0, 1]), np.array([0.5, 0.5]), 1.0)])
    # tf 0.5·2 + 0.5·2 = 2, df 0.5·2 + 0.5·1 = 1.5, average length 2
    norm = 1.2 * (1 - 0.75 + 0.75 * 4 / 2)
    assert math.isclose(got[0], math.log1p((3 - 1.5 + 0.5) / 2.0) * 2 * 2.2 / (2 + norm))
    assert got[0] < twins.scores(np.array([0, 1]))[0]     # a bag counts the word twice


def _indexed(docs, compact=True):
    index = SparseBM25()
    for key, counts in docs.items():
        index.add(key, counts)
    if compact:
        index.compact()
    return index


def test_a_compacted_index_holds_each_entry_once_in_16_bits_when_weights_are_whole():
    docs = {f"d{i}": {t: 1 + (i * t) % 7 for t in range(i % 50, i % 50 + 40)}
            for i in range(500)}
    entries = sum(len(c) for c in docs.values())
    index = _indexed(docs)
    rows, terms = len(docs), 90
    # 4 bytes of row number and 2 of frequency per entry, plus per-row and per-term arrays
    assert index.nbytes <= 6 * entries + 32 * (rows + terms) + 1024
    assert index.nbytes < 8 * entries          # float32 frequencies and a copy by row: 12


@given(st.sampled_from([0.5, 1.25, 70_000.0, 3.0]))
@settings(max_examples=8, deadline=None)
def test_frequencies_that_16_bits_cannot_hold_score_as_written(weight):
    docs = {key: {t: tf * weight for t, tf in counts.items()} for key, counts in DOCS.items()}
    index = _indexed(docs)
    for query in ([0], [1, 3], [0, 2, 3]):
        got, want = _scores(index, query), reference(docs, query)
        for key in want:
            assert math.isclose(got[key], want[key], rel_tol=1e-6, abs_tol=1e-9)


def test_removing_compacted_rows_lowers_document_frequencies_before_the_next_query():
    index = _indexed(DOCS)
    assert index.document_frequency(0) == 2
    index.remove("a")
    index.remove("c")
    assert index.document_frequency(0) == 0 and index.document_frequency(3) == 1
    rest = {k: v for k, v in DOCS.items() if k not in ("a", "c")}
    got, want = _scores(index, [1, 3]), reference(rest, [1, 3])
    assert got.keys() == want.keys()
    for key in want:
        assert math.isclose(got[key], want[key], rel_tol=1e-9)
