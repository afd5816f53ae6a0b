"""The embedded store's HNSW graph (stores/ann.py): recall against exact search, kept in step
with every change, saved beside the model file, and filters that still fill k hits."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mindgraph.stores import ann, embedded
from mindgraph.stores.base import VectorRecord
from mindgraph.stores.embedded import EmbeddedStore, model_file_name

MODEL = "test:clustered:32"
DIM = 32
N = 3000


def clustered(n: int, seed: int = 0) -> np.ndarray:
    """Unit vectors around 60 centres, like embeddings of notes on a few topics."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, DIM))
    x = centres[rng.integers(0, 60, n)] + 0.6 * rng.standard_normal((n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def records(vectors: np.ndarray, start: int = 0, scope_every: int = 0) -> list[VectorRecord]:
    return [VectorRecord(f"p{i}.md", "lead", "lead", f"h{i}", vectors[i - start],
                         scope="rare" if scope_every and i % scope_every == 0 else "common")
            for i in range(start, start + len(vectors))]


@pytest.fixture(autouse=True)
def small_threshold(monkeypatch):
    """The graph from 500 rows on, so a test table of a few thousand rows uses it."""
    monkeypatch.setattr(embedded, "EXACT_BELOW", 500)
    monkeypatch.setattr(ann, "EXACT_BELOW", 500)


def exact_pages(store_vectors: dict[str, np.ndarray], q: np.ndarray, k: int) -> set[str]:
    pages = list(store_vectors)
    matrix = np.stack([store_vectors[p] for p in pages])
    return {pages[i] for i in np.argsort(-(matrix @ q))[:k]}


def recall(store: EmbeddedStore, truth: dict[str, np.ndarray], queries: np.ndarray,
           **filters) -> float:
    found = 0
    for q in queries:
        hits = store.query(q, 10, MODEL, **filters)
        assert len(hits) == 10
        found += len({h.page for h in hits} & exact_pages(truth, q, 10))
    return found / (10 * len(queries))


def saved(tmp_path, vectors: np.ndarray) -> tuple[EmbeddedStore, Path]:
    """A store of ``vectors``, closed (its graph saved), and the graph's path."""
    store = EmbeddedStore(tmp_path / "v")
    store.upsert(MODEL, records(vectors))
    store.close()
    return store, ann.index_path(tmp_path / "v" / model_file_name(MODEL))


def graph_of(store: EmbeddedStore) -> ann.AnnIndex:
    table = store._tables[MODEL]
    assert table.ann is not None, "a table above the threshold searches its graph"
    return table.ann


def test_recall_at_10_against_exact_search_is_at_least_095(tmp_path):
    vectors = clustered(N)
    store = EmbeddedStore(tmp_path / "v")
    store.upsert(MODEL, records(vectors))
    store.flush()
    assert len(graph_of(store)) == N
    queries = clustered(50, seed=1)
    truth = {f"p{i}.md": vectors[i] for i in range(N)}
    assert recall(store, truth, queries) >= 0.95
    hits = store.query(vectors[7], 3, MODEL)
    assert hits[0].page == "p7.md" and hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_the_graph_is_saved_and_a_restart_loads_it_instead_of_rebuilding(tmp_path,
                                                                         monkeypatch):
    vectors = clustered(N)
    _, graph = saved(tmp_path, vectors)
    assert graph.is_file() and graph.with_name(graph.name + ".json").is_file()

    def no_build(*args, **kwargs):
        raise AssertionError("a saved graph must not be rebuilt")
    monkeypatch.setattr(ann.AnnIndex, "build", classmethod(no_build))
    reader = EmbeddedStore(tmp_path / "v")
    assert reader.query(vectors[11], 1, MODEL)[0].page == "p11.md"
    assert len(graph_of(reader)) == N


def test_adds_updates_and_deletes_keep_the_graph_in_step(tmp_path):
    rng = np.random.default_rng(3)
    vectors = clustered(N + 500)
    store = EmbeddedStore(tmp_path / "v")
    store.upsert(MODEL, records(vectors[:N]))
    store.flush()
    truth = {f"p{i}.md": vectors[i] for i in range(N)}
    store.upsert(MODEL, records(vectors[N:], start=N))               # adds
    truth.update({f"p{i}.md": vectors[i] for i in range(N, N + 500)})
    for i in rng.choice(N, 300, replace=False):                      # deletes (swap-removes)
        store.delete(f"p{i}.md")
        del truth[f"p{i}.md"]
    moved = clustered(200, seed=9)                                   # updates: new vectors
    kept = sorted(truth)[:200]
    store.upsert(MODEL, [VectorRecord(p, "lead", "lead", "new", moved[j])
                         for j, p in enumerate(kept)])
    truth.update({p: moved[j] for j, p in enumerate(kept)})
    table = store._tables[MODEL]
    assert len(graph_of(store)) == len(table) == len(truth)
    assert all(graph_of(store).digests[i] == ann.row_digest(row)
               for i, row in enumerate(table.rows))
    for j in (0, 50, 199):
        top = store.query(moved[j], 1, MODEL)[0]
        assert top.page == kept[j] and top.score == pytest.approx(1.0, abs=1e-5)
    gone = {f"p{i}.md" for i in range(N + 500)} - set(truth)
    queries = clustered(40, seed=4)
    for q in queries:
        assert not {h.page for h in store.query(q, 50, MODEL)} & gone
    assert recall(store, truth, queries) >= 0.95
    store.flush()                        # and what was saved is what a new process loads
    reader = EmbeddedStore(tmp_path / "v")
    assert recall(reader, truth, queries) >= 0.95


def test_a_graph_saved_before_the_last_flush_is_reconciled_not_trusted(tmp_path):
    vectors = clustered(N)
    store, graph = saved(tmp_path, vectors)
    old = graph.read_bytes(), graph.with_name(graph.name + ".json").read_bytes()
    replacement = clustered(100, seed=5)
    store.upsert(MODEL, [VectorRecord(f"p{i}.md", "lead", "lead", "v2", replacement[i])
                         for i in range(100)])
    store.delete("p2999.md")
    store.close()
    # as if the writer was killed after the .npz and before the graph: the old graph is back
    graph.write_bytes(old[0])
    graph.with_name(graph.name + ".json").write_bytes(old[1])
    reader = EmbeddedStore(tmp_path / "v")
    for i in (0, 42, 99):
        top = reader.query(replacement[i], 1, MODEL)[0]
        assert top.page == f"p{i}.md" and top.score == pytest.approx(1.0, abs=1e-5)
    assert "p2999.md" not in {h.page for h in reader.query(vectors[2999], 20, MODEL)}
    assert len(graph_of(reader)) == N - 1


def test_a_torn_graph_file_is_rebuilt(tmp_path):
    vectors = clustered(N)
    _, graph = saved(tmp_path, vectors)
    graph.write_bytes(graph.read_bytes()[:1000])
    reader = EmbeddedStore(tmp_path / "v")
    assert reader.query(vectors[5], 1, MODEL)[0].page == "p5.md"
    assert len(graph_of(reader)) == N


def test_a_rare_scope_or_a_small_view_still_gets_k_hits_inside_it(tmp_path):
    vectors = clustered(N)
    store = EmbeddedStore(tmp_path / "v")
    store.upsert(MODEL, records(vectors, scope_every=50))          # 60 rows of scope "rare"
    store.flush()
    graph_of(store)
    queries = clustered(20, seed=6)
    rare = {f"p{i}.md": vectors[i] for i in range(0, N, 50)}
    assert recall(store, rare, queries, scopes=["rare"]) == 1.0
    view = frozenset(f"p{i}.md" for i in range(0, N, 3))           # a third of the pages
    truth = {p: vectors[int(p[1:-3])] for p in view}
    assert recall(store, truth, queries, pages=view) >= 0.95
    for q in queries:
        assert {h.page for h in store.query(q, 10, MODEL, pages=view)} <= view


def test_a_table_below_the_threshold_keeps_no_graph(tmp_path):
    store = EmbeddedStore(tmp_path / "v")
    store.upsert(MODEL, records(clustered(400)))
    store.close()
    assert store._tables[MODEL].ann is None
    assert not ann.index_path(tmp_path / "v" / model_file_name(MODEL)).exists()


def test_a_process_that_opened_a_graph_can_still_load_the_local_model(tmp_path):
    """usearch's compiled module loaded before onnxruntime made onnxruntime's import crash
    the process (SIGSEGV): a server that searched a large store, then embedded a query."""
    import subprocess
    import sys

    script = ("from mindgraph.stores.ann import AnnIndex\nAnnIndex(4)\n"
              "import onnxruntime\nprint('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_graph_built_with_other_settings_is_reported_until_rebuilt(tmp_path, monkeypatch):
    vectors = clustered(N)
    with monkeypatch.context() as older:      # a graph saved by settings since changed
        older.setattr(ann, "CONNECTIVITY", 8)
        older.setattr(ann, "EXPANSION_ADD", 40)
        saved(tmp_path, vectors)
    reader = EmbeddedStore(tmp_path / "v")
    assert reader.query(vectors[5], 1, MODEL)[0].page == "p5.md"
    (warning,) = reader.index_warnings(MODEL)
    assert "built with connectivity 8, expansion_add 40" in warning
    assert f"not connectivity {ann.CONNECTIVITY}" in warning
    assert "mindgraph embed --rebuild-index" in warning
    said = reader.rebuild_index(MODEL)
    assert f"over {N} vectors (connectivity {ann.CONNECTIVITY}" in said
    assert reader.index_warnings(MODEL) == []
    again = EmbeddedStore(tmp_path / "v")
    assert again.query(vectors[5], 1, MODEL)[0].page == "p5.md"
    assert again.index_warnings(MODEL) == []
    assert graph_of(again).built == ann.configured()
