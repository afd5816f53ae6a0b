"""Embedded-store specifics: on-disk layout, atomic files, readers in other processes."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from mindgraph.errors import StoreError
from mindgraph.stores.base import VectorRecord
from mindgraph.stores.embedded import EmbeddedStore, model_file_name

MODEL = "local:all-MiniLM-L6-v2-int8:384"


def rec(page: str, i: int, dim: int = 4) -> VectorRecord:
    v = np.zeros(dim, dtype=np.float32)
    v[i % dim] = 1.0
    return VectorRecord(page=page, chunk_id="lead", section_id="lead", content_hash=page,
                        vector=v)


def test_nothing_is_written_until_flush(embedded_store: EmbeddedStore):
    embedded_store.upsert(MODEL, [rec("a.md", 0)])
    assert not embedded_store.folder.exists() or not list(embedded_store.folder.iterdir())
    embedded_store.flush()
    files = sorted(p.name for p in embedded_store.folder.glob("*.npz"))
    assert files == [model_file_name(MODEL)]
    assert files[0].startswith("local_all-MiniLM-L6-v2-int8_384-")


def test_model_file_names_do_not_collide():
    assert model_file_name("a:b/c:3") != model_file_name("a:b_c:3")
    assert "/" not in model_file_name("x/../../etc:1")


def test_a_reader_sees_what_another_handle_flushed(tmp_path):
    writer = EmbeddedStore(tmp_path / "v")
    reader = EmbeddedStore(tmp_path / "v")
    writer.upsert(MODEL, [rec("a.md", 0)])
    writer.flush()
    assert reader.count(MODEL) == 1
    writer.upsert(MODEL, [rec("b.md", 1)])
    writer.flush()
    assert {h.page for h in reader.query(np.ones(4), 5, MODEL)} == {"a.md", "b.md"}
    writer.drop_model(MODEL)
    assert reader.query(np.ones(4), 5, MODEL) == []


def test_emptied_model_removes_its_file(embedded_store: EmbeddedStore):
    embedded_store.upsert(MODEL, [rec("a.md", 0)])
    embedded_store.flush()
    embedded_store.delete("a.md")
    embedded_store.flush()
    assert list(embedded_store.folder.glob("*.npz")) == []


def test_a_damaged_or_other_format_file_is_rebuilt_not_a_traceback(tmp_path):
    """Vectors are derived data: a file cut short, garbage, or written in another format by
    another mindgraph reads as empty, so `embed` re-embeds and the next flush replaces it."""
    folder = tmp_path / "v"
    folder.mkdir()
    good = tmp_path / "good"
    store = EmbeddedStore(good)
    store.upsert(MODEL, [rec("a.md", 0)])
    store.flush()
    whole = (good / model_file_name(MODEL)).read_bytes()
    meta = {"format": 0, "model_version": MODEL, "dimension": 4, "rows": [["a.md", "c0", "",
                                                                           "h", ""]]}
    older = io.BytesIO()
    np.savez(older, vectors=np.ones((1, 4), dtype=np.float32),
             meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    # not numpy, cut short (not a zip any more), empty, an older format
    for damaged in (b"not a numpy file", whole[:len(whole) // 2], b"", older.getvalue()):
        (folder / model_file_name(MODEL)).write_bytes(damaged)
        reader = EmbeddedStore(folder)
        assert reader.count(MODEL) == 0
        assert reader.query(np.ones(4, dtype=np.float32), 3, MODEL) == []
        reader.upsert(MODEL, [rec("b.md", 1)])
        reader.flush()
        again = EmbeddedStore(folder)
        assert again.count(MODEL) == 1
        assert [h.page for h in again.query(np.ones(4, dtype=np.float32), 3, MODEL)] == ["b.md"]


def test_swap_remove_keeps_rows_and_vectors_aligned(embedded_store: EmbeddedStore):
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((50, 8)).astype(np.float32)
    recs = [VectorRecord(f"p{i}.md", "lead", "lead", str(i), vectors[i]) for i in range(50)]
    embedded_store.upsert("m:x:8", recs)
    for i in range(0, 50, 3):
        embedded_store.delete(f"p{i}.md")
    embedded_store.flush()
    again = EmbeddedStore(embedded_store.folder)
    for i in range(50):
        hits = again.query(vectors[i], 1, "m:x:8")
        if i % 3 == 0:
            assert all(h.page != f"p{i}.md" for h in hits)
        else:
            assert hits[0].page == f"p{i}.md" and hits[0].score == pytest.approx(1.0, abs=1e-5)


def test_store_lives_under_the_state_folder_per_tenant(tmp_path):
    store = EmbeddedStore.for_state_dir(tmp_path / ".mindgraph", tenant="team a")
    assert store.folder == tmp_path / ".mindgraph" / "vectors" / "team_a"
    assert str(store.folder) in store.description


def test_a_reloaded_file_can_be_changed_again(tmp_path):
    first = EmbeddedStore(tmp_path / "v")
    first.upsert(MODEL, [rec("a.md", 0), rec("b.md", 1)])
    first.close()
    second = EmbeddedStore(tmp_path / "v")
    second.upsert(MODEL, [VectorRecord("a.md", "lead", "lead", "new", np.eye(4)[2])])
    second.delete("b.md")
    second.upsert(MODEL, [rec("c.md", 3)])
    second.close()
    third = EmbeddedStore(tmp_path / "v")
    assert third.hashes(MODEL) == {"a.md": {"lead": "new"}, "c.md": {"lead": "c.md"}}
    assert third.query(np.eye(4)[2], 1, MODEL)[0].page == "a.md"


def test_two_writers_of_one_folder_keep_each_others_changes(tmp_path):
    """A server and `mindgraph embed` in a terminal: each flush merges with the other's."""
    folder = tmp_path / "vectors"
    first, second = EmbeddedStore(folder), EmbeddedStore(folder)
    first.upsert(MODEL, [rec("a.md", 0), rec("gone.md", 3)])
    first.flush()
    second.query(rec("a.md", 0).vector, 1, MODEL)                       # second has loaded that file
    first.upsert(MODEL, [rec("b.md", 1)])
    first.flush()
    second.upsert(MODEL, [rec("c.md", 2)])  # second's copy lacks b.md
    second.delete("gone.md")
    second.flush()
    merged = EmbeddedStore(folder)
    assert set(merged.hashes(MODEL)) == {"a.md", "b.md", "c.md"}
    assert merged.query(rec("b.md", 1).vector, 1, MODEL)[0].page == "b.md"
    first.upsert(MODEL, [rec("d.md", 5)])
    first.flush()                                          # and back the other way
    assert set(EmbeddedStore(folder).hashes(MODEL)) == {"a.md", "b.md", "c.md", "d.md"}


def test_a_writer_never_brings_back_what_another_emptied_or_misses_what_it_added(tmp_path):
    folder = tmp_path / "vectors"
    first, second = EmbeddedStore(folder), EmbeddedStore(folder)
    first.upsert(MODEL, [rec("p.md", 0), rec("q.md", 1)])
    first.flush()
    assert set(second.hashes(MODEL)) == {"p.md", "q.md"}    # second has loaded the file
    first.delete("p.md")
    first.delete("q.md")
    first.flush()                                          # the file is gone
    second.upsert(MODEL, [rec("r.md", 2)])
    second.flush()
    assert set(EmbeddedStore(folder).hashes(MODEL)) == {"r.md"}
    # a page removed from the wiki loses chunks another process stored after we loaded
    first.upsert(MODEL, [rec("gone.md", 3)])
    first.flush()
    assert second.delete("gone.md") == 1
    second.flush()
    assert "gone.md" not in EmbeddedStore(folder).hashes(MODEL)
