"""The VectorStore contract, run against every store (embedded and real pgvector)."""

from __future__ import annotations

import numpy as np
import pytest

from mindgraph.errors import StoreError
from mindgraph.stores.base import ChunkMove, VectorRecord, VectorStore

MODEL = "test:unit:8"
OTHER = "test:other:8"


def unit(values) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def basis(i: int, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def rec(page: str, chunk_id: str, vector, digest: str = "h", scope: str = "",
        section_id: str | None = None) -> VectorRecord:
    return VectorRecord(page=page, chunk_id=chunk_id,
                        section_id=section_id or chunk_id.split("~")[0],
                        content_hash=digest, vector=np.asarray(vector, dtype=np.float32),
                        scope=scope)


def random_unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_empty_store_answers_with_nothing(store: VectorStore):
    assert store.count() == 0
    assert store.model_versions() == {}
    assert store.hashes(MODEL) == {}
    assert store.query(basis(0), 5, MODEL) == []
    assert store.upsert(MODEL, []) == 0
    assert store.delete("nowhere.md") == 0


def test_query_ranks_by_cosine_and_scores_are_cosines(store: VectorStore):
    vectors = {"a": unit([1, 0, 0, 0, 0, 0, 0, 0]), "b": unit([1, 1, 0, 0, 0, 0, 0, 0]),
               "c": unit([0, 1, 0, 0, 0, 0, 0, 0]), "d": unit([-1, 0, 0, 0, 0, 0, 0, 0])}
    store.upsert(MODEL, [rec(f"{name}.md", "lead", v) for name, v in vectors.items()])
    q = unit([2, 0.5, 0, 0, 0, 0, 0, 0])
    hits = store.query(q, 4, MODEL)
    assert [h.page for h in hits] == ["a.md", "b.md", "c.md", "d.md"]
    for hit in hits:
        expected = float(vectors[hit.page[0]] @ q)
        assert hit.score == pytest.approx(expected, abs=1e-5)
    assert hits[0].chunk_id == "lead" and hits[0].section_id == "lead"


def test_identical_vector_scores_one_even_unnormalised(store: VectorStore):
    store.upsert(MODEL, [rec("p.md", "intro", [3, 4, 0, 0, 0, 0, 0, 0])])
    hits = store.query(np.array([6, 8, 0, 0, 0, 0, 0, 0], dtype=np.float32), 1, MODEL)
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_k_limits_results_and_larger_k_returns_everything(store: VectorStore):
    store.upsert(MODEL, [rec("p.md", f"s{i}", basis(i)) for i in range(6)])
    assert len(store.query(basis(0), 3, MODEL)) == 3
    assert len(store.query(basis(0), 50, MODEL)) == 6
    assert store.query(basis(0), 0, MODEL) == []


def test_upsert_replaces_vector_and_hash_of_same_chunk(store: VectorStore):
    store.upsert(MODEL, [rec("p.md", "intro", basis(0), "h1"), rec("p.md", "usage", basis(1))])
    store.upsert(MODEL, [rec("p.md", "intro", basis(2), "h2")])
    assert store.count(MODEL) == 2
    assert store.hashes(MODEL) == {"p.md": {"intro": "h2", "usage": "h"}}
    top = store.query(basis(2), 1, MODEL)[0]
    assert (top.page, top.chunk_id) == ("p.md", "intro")
    assert top.score == pytest.approx(1.0, abs=1e-5)


def test_hashes_lists_every_page_and_chunk(store: VectorStore):
    store.upsert(MODEL, [rec("a.md", "lead", basis(0), "x1"), rec("a.md", "lead~2", basis(1), "x2"),
                         rec("dir/b.md", "setup", basis(2), "y")])
    assert store.hashes(MODEL) == {"a.md": {"lead": "x1", "lead~2": "x2"},
                                   "dir/b.md": {"setup": "y"}}
    hit = store.query(basis(1), 1, MODEL)[0]
    assert (hit.chunk_id, hit.section_id) == ("lead~2", "lead")


def test_delete_named_chunks_then_whole_page(store: VectorStore):
    store.upsert(MODEL, [rec("a.md", "s1", basis(0)), rec("a.md", "s2", basis(1)),
                         rec("a.md", "s3", basis(2)), rec("b.md", "s1", basis(3))])
    assert store.delete("a.md", ["s2", "missing"]) == 1
    assert store.hashes(MODEL) == {"a.md": {"s1": "h", "s3": "h"}, "b.md": {"s1": "h"}}
    assert store.delete("a.md", []) == 0
    assert store.delete("a.md") == 2
    assert store.hashes(MODEL) == {"b.md": {"s1": "h"}}
    assert [h.page for h in store.query(basis(0), 10, MODEL)] == ["b.md"]


def test_move_chunks_gives_vectors_to_the_new_page_of_that_model_only(store: VectorStore, reopen):
    store.upsert(MODEL, [rec("old.md", "s1", basis(0), "a", scope="team"),
                         rec("old.md", "s2", basis(1), "b"), rec("x.md", "s1", basis(2))])
    store.upsert(OTHER, [rec("old.md", "s1", basis(3), "o")])
    moved = store.move_chunks(MODEL, [ChunkMove("old.md", "s1", "new/page.md", "a2"),
                                      ChunkMove("old.md", "gone", "new/page.md", "z")])
    assert moved == 1
    store.flush()
    store = reopen(store)
    assert store.hashes(MODEL) == {"old.md": {"s2": "b"}, "new/page.md": {"s1": "a2"},
                                   "x.md": {"s1": "h"}}
    assert store.hashes(OTHER) == {"old.md": {"s1": "o"}}
    top = store.query(basis(0), 1, MODEL)[0]
    assert (top.page, top.chunk_id, top.scope) == ("new/page.md", "s1", "team")
    assert top.score == pytest.approx(1.0, abs=1e-5)
    assert store.move_chunks(MODEL, []) == 0


def test_models_never_mix(store: VectorStore):
    # Same page, chunk and dimension under two models: each query sees only its own model.
    store.upsert(MODEL, [rec("p.md", "lead", basis(0), "m1")])
    store.upsert(OTHER, [rec("p.md", "lead", basis(1), "m2"), rec("q.md", "lead", basis(0))])
    assert store.model_versions() == {MODEL: 1, OTHER: 2}
    assert store.count() == 3 and store.count(MODEL) == 1
    hits = store.query(basis(1), 10, MODEL)
    assert [(h.page, round(h.score, 4)) for h in hits] == [("p.md", 0.0)]
    assert store.hashes(OTHER) == {"p.md": {"lead": "m2"}, "q.md": {"lead": "h"}}
    # Deleting within one model leaves the other alone; without a model it deletes from all.
    assert store.delete("p.md", model_version=OTHER) == 1
    assert store.count(MODEL) == 1
    store.upsert(OTHER, [rec("p.md", "lead", basis(1))])
    assert store.delete("p.md") == 2
    assert store.count() == 1


def test_models_of_different_dimensions_coexist(store: VectorStore):
    wide = "test:wide:16"
    store.upsert(MODEL, [rec("p.md", "lead", basis(0))])
    store.upsert(wide, [rec("p.md", "lead", basis(3, 16))])
    assert store.query(basis(3, 16), 1, wide)[0].score == pytest.approx(1.0, abs=1e-5)
    assert store.query(basis(0), 1, MODEL)[0].score == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(StoreError, match="16 dimensions"):
        store.query(basis(0), 1, wide)
    with pytest.raises(StoreError, match="8 dimensions, not 16"):
        store.upsert(MODEL, [rec("other.md", "lead", basis(0, 16))])


def test_bad_batches_are_rejected(store: VectorStore):
    with pytest.raises(StoreError, match="appears twice"):
        store.upsert(MODEL, [rec("p.md", "lead", basis(0)), rec("p.md", "lead", basis(1))])
    with pytest.raises(StoreError, match="NaN"):
        store.upsert(MODEL, [rec("p.md", "lead", [np.nan] * 8)])
    with pytest.raises(StoreError, match="mixed dimensions"):
        store.upsert(MODEL, [rec("p.md", "a", basis(0)), rec("p.md", "b", basis(0, 16))])
    assert store.count() == 0


def test_drop_model_removes_only_that_model(store: VectorStore):
    store.upsert(MODEL, [rec("a.md", "lead", basis(0)), rec("b.md", "lead", basis(1))])
    store.upsert(OTHER, [rec("a.md", "lead", basis(0))])
    assert store.drop_model(MODEL) == 2
    assert store.model_versions() == {OTHER: 1}
    assert store.query(basis(0), 5, MODEL) == []
    assert store.drop_model(MODEL) == 0
    # A dropped model can be stored again (its index is rebuilt).
    store.upsert(MODEL, [rec("c.md", "lead", basis(2))])
    assert [h.page for h in store.query(basis(2), 5, MODEL)] == ["c.md"]


def test_scope_and_page_filters(store: VectorStore):
    store.upsert(MODEL, [rec("me.md", "lead", basis(0), scope="personal"),
                         rec("team.md", "lead", unit([1, 0.2, 0, 0, 0, 0, 0, 0]), scope="team"),
                         rec("all.md", "lead", unit([1, 0.4, 0, 0, 0, 0, 0, 0]), scope="shared"),
                         rec("all.md", "usage", basis(5), scope="shared")])
    q = basis(0)
    assert [h.page for h in store.query(q, 10, MODEL, scopes={"team", "shared"})] == \
        ["team.md", "all.md", "all.md"]
    assert [h.scope for h in store.query(q, 1, MODEL, scopes=["personal"])] == ["personal"]
    assert store.query(q, 10, MODEL, scopes=[]) == []
    hits = store.query(q, 10, MODEL, pages=["all.md", "absent.md"])
    assert [(h.page, h.chunk_id) for h in hits] == [("all.md", "lead"), ("all.md", "usage")]
    both = store.query(q, 10, MODEL, pages=["all.md", "me.md"], scopes=["personal"])
    assert [h.page for h in both] == ["me.md"]
    # pages naming every page: the same hits, scores and order as no filter at all
    every = store.query(q, 10, MODEL, pages=["team.md", "all.md", "me.md"])
    assert [(h.page, h.chunk_id, round(h.score, 5)) for h in every] == \
        [(h.page, h.chunk_id, round(h.score, 5)) for h in store.query(q, 10, MODEL)]


def test_unicode_page_paths_round_trip(store: VectorStore):
    store.upsert(MODEL, [rec("ja/はじめに.md", "概要", basis(0)),
                         rec("zh/插件 核心.md", "lead", basis(1))])
    assert set(store.hashes(MODEL)) == {"ja/はじめに.md", "zh/插件 核心.md"}
    assert store.query(basis(0), 1, MODEL)[0].chunk_id == "概要"


def test_changes_survive_close_and_reopen(store: VectorStore, reopen):
    store.upsert(MODEL, [rec("a.md", "lead", basis(0), "x"), rec("b.md", "lead", basis(1), "y")])
    store.delete("b.md")
    store.upsert(OTHER, [rec("c.md", "lead", basis(2))])
    store.close()
    again = reopen(store)
    assert again.hashes(MODEL) == {"a.md": {"lead": "x"}}
    assert again.model_versions() == {MODEL: 1, OTHER: 1}
    assert again.query(basis(0), 1, MODEL)[0].page == "a.md"


def test_tenants_are_isolated(store: VectorStore, reopen):
    store.upsert(MODEL, [rec("a.md", "lead", basis(0))])
    store.flush()
    other = reopen(store, tenant="acme")
    assert other.count() == 0 and other.query(basis(0), 5, MODEL) == []
    other.upsert(MODEL, [rec("a.md", "lead", basis(1), "acme")])
    other.flush()
    assert store.hashes(MODEL) == {"a.md": {"lead": "h"}}
    assert other.delete("a.md") == 1
    assert store.count(MODEL) == 1


def test_top10_matches_exact_search(store: VectorStore):
    # pgvector answers from its HNSW index; at this size it must still agree with exact
    # search on at least 95% of the top-10 (the embedded store is exact by construction).
    rng = np.random.default_rng(7)
    dim = 32
    data = random_unit(rng, 3000, dim)
    store.upsert("test:recall:32", [rec(f"p{i}.md", "lead", data[i]) for i in range(len(data))])
    queries = random_unit(rng, 40, dim)
    found = 0
    for q in queries:
        exact = {f"p{i}.md" for i in np.argsort(-(data @ q))[:10]}
        got = store.query(q, 10, "test:recall:32")
        assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)
        found += len(exact & {h.page for h in got})
    assert found / (10 * len(queries)) >= 0.95


def test_records_gives_back_every_row_of_one_model_in_batches(store: VectorStore, reopen):
    rng = np.random.default_rng(3)
    vectors = random_unit(rng, 5, 8)
    store.upsert(MODEL, [rec(f"p{i}.md", "lead", v, digest=f"h{i}", scope="team",
                             section_id="lead") for i, v in enumerate(vectors)])
    store.upsert(OTHER, [rec("o.md", "lead", basis(1))])
    reopen(store, tenant="else").upsert(MODEL, [rec("x.md", "lead", basis(2))])
    store.flush()
    batches = list(store.records(MODEL, batch_size=2))
    assert [len(b) for b in batches] == [2, 2, 1]
    got = {r.page: r for batch in batches for r in batch}
    assert sorted(got) == [f"p{i}.md" for i in range(5)]
    for i, v in enumerate(vectors):
        r = got[f"p{i}.md"]
        assert (r.chunk_id, r.section_id, r.content_hash, r.scope) == ("lead", "lead", f"h{i}",
                                                                       "team")
        assert r.vector.dtype == np.float32 and np.allclose(r.vector, v, atol=1e-6)
    assert list(store.records("test:none:8")) == []
