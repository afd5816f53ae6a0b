"""A large embedded table's vectors read from its model file as queries need them
(stores/row_matrix.py): answers bit for bit those of the matrix loaded into memory, writes
that never touch the file, and files it cannot read so (compressed) loaded as before."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import numpy as np
import pytest

from mindgraph.stores.base import VectorRecord
from mindgraph.stores.embedded import EmbeddedStore, model_file_name
from mindgraph.stores.row_matrix import RowMatrix

MODEL = "test:in-file:32"
DIM = 32
N = 1200


def unit(n: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def records(vectors: np.ndarray, start: int = 0, digest: str = "h") -> list[VectorRecord]:
    return [VectorRecord(f"p{i}.md", f"c{i % 3}", f"c{i % 3}", f"{digest}{i}",
                         vectors[i - start]) for i in range(start, start + len(vectors))]


def store_at(folder) -> EmbeddedStore:
    """A store whose tables of 500 rows and more keep a graph, so they are the ones read from
    the file."""
    return EmbeddedStore(folder, exact_below=500)


def written(tmp_path, vectors: np.ndarray) -> EmbeddedStore:
    store = store_at(tmp_path / "v")
    store.upsert(MODEL, records(vectors))
    store.close()
    return store


def answers(store: EmbeddedStore, queries: np.ndarray, **filters) -> list:
    return [[(h.page, h.chunk_id, h.score) for h in store.query(q, 10, MODEL, **filters)]
            for q in queries]


def loaded_in_memory(tmp_path, monkeypatch) -> EmbeddedStore:
    """The same files read the way mindgraph read them before: the matrix loaded."""
    with monkeypatch.context() as patch:
        patch.setattr(RowMatrix, "from_file", classmethod(lambda cls, handle: None))
        store = store_at(tmp_path / "v")
        store.count(MODEL)
    assert not store._tables[MODEL].vectors.in_file
    return store


def test_a_reopened_large_table_in_file_and_answers_bit_for_bit_as_loaded(tmp_path,
                                                                            monkeypatch):
    vectors = unit(N, 0)
    written(tmp_path, vectors)
    in_file = store_at(tmp_path / "v")
    assert in_file.count(MODEL) == N
    table = in_file._tables[MODEL]
    assert table.vectors.in_file and table.ann is not None
    memory = loaded_in_memory(tmp_path, monkeypatch)
    held = memory._tables[MODEL].live_vectors()
    assert np.array_equal(np.asarray(table.live_vectors()), held)
    assert np.allclose(held, vectors, atol=1e-6)
    queries = unit(30, 1)
    assert answers(in_file, queries) == answers(memory, queries)
    view = frozenset(f"p{i}.md" for i in range(0, N, 7))     # a view: exact over its rows
    assert answers(in_file, queries, pages=view) == answers(memory, queries, pages=view)


def test_writes_to_a_table_read_from_its_file_change_its_rows_never_the_file(tmp_path, monkeypatch):
    vectors = unit(N, 2)
    written(tmp_path, vectors)
    path = tmp_path / "v" / model_file_name(MODEL)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    store = store_at(tmp_path / "v")
    store.count(MODEL)
    assert store._tables[MODEL].vectors.in_file
    truth = {f"p{i}.md": vectors[i] for i in range(N)}
    new = unit(300, 3)                                        # appended: the in-memory tail
    store.upsert(MODEL, records(new, start=N))
    truth.update({f"p{N + j}.md": new[j] for j in range(300)})
    changed = unit(50, 4)                                     # rewritten among the file's rows
    store.upsert(MODEL, [VectorRecord(f"p{i}.md", f"c{i % 3}", f"c{i % 3}", f"x{i}",
                                      changed[i // 20]) for i in range(0, 1000, 20)])
    truth.update({f"p{i}.md": changed[i // 20] for i in range(0, 1000, 20)})
    for i in range(1, 600, 3):                                # swap-removes pull tail rows in
        store.delete(f"p{i}.md")
        del truth[f"p{i}.md"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    table = store._tables[MODEL]
    assert len(table) == len(truth)
    for page, vector in truth.items():
        row = table.index[(page, next(iter(table.by_page[page])))]
        assert np.allclose(table.vectors[row], vector, atol=1e-6)
    for page in ("p0.md", f"p{N + 299}.md", "p980.md"):
        top = store.query(truth[page], 1, MODEL)[0]
        assert top.page == page and top.score == pytest.approx(1.0, abs=1e-6)
    store.close()                                             # and a new process reads them
    reader = store_at(tmp_path / "v")
    assert reader.count(MODEL) == len(truth)
    got = reader._tables[MODEL]
    for page, vector in truth.items():
        chunk = next(iter(got.by_page[page]))
        assert np.array_equal(got.vectors[got.index[(page, chunk)]],
                              table.vectors[table.index[(page, chunk)]])
    memory = loaded_in_memory(tmp_path, monkeypatch)
    queries = unit(20, 5)
    assert answers(reader, queries) == answers(memory, queries)


def test_a_compressed_file_is_loaded_as_before(tmp_path):
    vectors = unit(N, 6)
    written(tmp_path, vectors)
    path = tmp_path / "v" / model_file_name(MODEL)
    with np.load(path) as data:
        meta, stored = data["meta"], data["vectors"]
    buffer = io.BytesIO()
    np.savez_compressed(buffer, vectors=stored, meta=meta)  # as a hand-made or old file may be
    path.write_bytes(buffer.getvalue())
    store = store_at(tmp_path / "v")
    assert store.count(MODEL) == N
    assert not store._tables[MODEL].vectors.in_file
    assert store.query(vectors[17], 1, MODEL)[0].page == "p17.md"
    with zipfile.ZipFile(path) as archive:
        assert archive.getinfo("vectors.npy").compress_type == zipfile.ZIP_DEFLATED


def test_a_file_whose_rows_disagree_with_its_matrix_is_rebuilt(tmp_path):
    vectors = unit(N, 7)
    written(tmp_path, vectors)
    path = tmp_path / "v" / model_file_name(MODEL)
    with np.load(path) as data:
        meta = json.loads(data["meta"].tobytes())
        stored = data["vectors"]
    meta["rows"] = meta["rows"][:-1]                          # one row fewer than vectors
    buffer = io.BytesIO()
    np.savez(buffer, vectors=stored,
             meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    path.write_bytes(buffer.getvalue())
    store = store_at(tmp_path / "v")
    assert store.count(MODEL) == 0                            # empty: `embed` fills it again
    assert "inconsistent" in store._tables[MODEL].rebuilding


def test_strings_read_from_a_file_are_held_once(tmp_path):
    vectors = unit(N, 8)
    written(tmp_path, vectors)
    store = store_at(tmp_path / "v")
    store.count(MODEL)
    rows = store._tables[MODEL].rows
    assert rows[1][1] is rows[4][1] and rows[1][1] is rows[1][2]      # "c1" once
