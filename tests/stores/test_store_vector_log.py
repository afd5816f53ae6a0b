"""The embedded store's change log: a flush appends instead of rewriting the model file,
readers catch up from the log, torn entries and stale logs are harmless, compaction folds
the log in."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from mindgraph.stores import vector_log
from mindgraph.stores.base import VectorRecord
from mindgraph.stores.embedded import EmbeddedStore, model_file_name

MODEL = "test:log:32"
DIM = 32


def records(start: int, n: int, page: str = "p", version: str = "") -> list[VectorRecord]:
    rng = np.random.default_rng(start)
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return [VectorRecord(f"{page}{start + i}.md", "lead", "lead", f"{start + i}{version}",
                         m[i]) for i in range(n)]


def files(folder):
    npz = folder / model_file_name(MODEL)
    return npz, vector_log.log_path(npz)


def stat(path):
    info = path.stat()
    return info.st_mtime_ns, info.st_size, info.st_ino


def test_a_small_flush_onto_a_large_table_appends_to_the_log_not_rewriting_the_file(tmp_path):
    store = EmbeddedStore(tmp_path / "v")
    store.upsert(MODEL, records(0, 5000))
    store.flush()
    npz, log = files(tmp_path / "v")
    before, log_before = stat(npz), log.stat().st_size
    store.upsert(MODEL, records(5000, 64))
    store.delete("p3.md")
    store.flush()
    assert stat(npz) == before, "the model file was rewritten for 64 rows"
    grown = log.stat().st_size - log_before
    assert 64 * DIM * 4 < grown < 64 * DIM * 4 + 64 * 200
    again = EmbeddedStore(tmp_path / "v")
    stored = again.hashes(MODEL)
    assert len(stored) == 5063 and "p3.md" not in stored and "p5063.md" in stored
    v = records(5000, 64)[10].vector
    assert again.query(v, 1, MODEL)[0].page == "p5010.md"


def test_a_reader_catches_up_from_the_log_without_loading_the_file_again(tmp_path):
    writer, reader = EmbeddedStore(tmp_path / "v"), EmbeddedStore(tmp_path / "v")
    writer.upsert(MODEL, records(0, 100))
    writer.flush()
    assert reader.count(MODEL) == 100
    table = reader._tables[MODEL]
    writer.upsert(MODEL, records(0, 1, version="new") + records(100, 10))
    writer.delete("p5.md")
    writer.flush()
    assert reader.count(MODEL) == 109
    assert reader._tables[MODEL] is table, "read the whole file again"
    assert reader.hashes(MODEL)["p0.md"] == {"lead": "0new"}
    assert reader.hashes(MODEL) == EmbeddedStore(tmp_path / "v").hashes(MODEL)


def written_then_appended(folder, first: int, then: int):
    """A store flushed with ``first`` rows, then ``then`` more appended to its log: the
    store, the log's path and its bytes."""
    store = EmbeddedStore(folder)
    store.upsert(MODEL, records(0, first))
    store.flush()
    store.upsert(MODEL, records(first, then))
    store.flush()
    log = files(folder)[1]
    return store, log, log.read_bytes()


def test_a_torn_entry_is_ignored_and_cut_off_by_the_next_writer(tmp_path):
    store, log, whole = written_then_appended(tmp_path / "v", 100, 5)
    # a writer killed mid-append: the start of an entry, then nothing
    torn = vector_log.encode([("upsert", [["x.md", "lead", "lead", "h", ""]],
                               np.ones((1, DIM), dtype=np.float32))])
    log.write_bytes(whole + torn[:len(torn) // 2])
    reader = EmbeddedStore(tmp_path / "v")
    assert reader.count(MODEL) == 105 and "x.md" not in reader.hashes(MODEL)
    reader.upsert(MODEL, records(200, 3))
    reader.flush()
    assert log.read_bytes().startswith(whole)
    assert EmbeddedStore(tmp_path / "v").count(MODEL) == 108
    # a damaged byte inside an entry ends the log there (its checksum fails)
    data = bytearray(log.read_bytes())
    data[len(whole) + 20] ^= 0xFF
    log.write_bytes(bytes(data))
    assert EmbeddedStore(tmp_path / "v").count(MODEL) == 105


def test_the_log_is_compacted_into_the_file_once_it_is_as_large(tmp_path, monkeypatch):
    monkeypatch.setattr(vector_log, "COMPACT_FLOOR", 0)
    store = EmbeddedStore(tmp_path / "v")
    store.upsert(MODEL, records(0, 100))
    store.flush()
    npz, log = files(tmp_path / "v")
    rewrites = 0
    for start in range(100, 400, 20):
        before = stat(npz)
        store.upsert(MODEL, records(start, 20))
        store.flush()
        rewrites += stat(npz) != before
        assert log.stat().st_size <= npz.stat().st_size + vector_log.HEADER
    # 300 rows onto 100: the file is rewritten when the log outgrows it, not at every flush
    assert 1 <= rewrites <= 3
    assert EmbeddedStore(tmp_path / "v").count(MODEL) == 400


def test_a_log_left_by_a_compaction_killed_before_it_started_a_new_one_is_ignored(tmp_path,
                                                                                    monkeypatch):
    store = EmbeddedStore(tmp_path / "v")
    store.upsert(MODEL, records(0, 100))
    store.flush()
    store.delete("p1.md")
    store.upsert(MODEL, records(100, 10))
    store.flush()
    npz, log = files(tmp_path / "v")
    old_log = log.read_bytes()
    monkeypatch.setattr(vector_log, "COMPACT_FLOOR", 0)
    store.upsert(MODEL, records(0, 100, version="b"))   # large enough to compact
    store.flush()
    # killed between the new model file and the new log: the old log is still there
    log.write_bytes(old_log)
    reader = EmbeddedStore(tmp_path / "v")
    stored = reader.hashes(MODEL)
    assert len(stored) == 110 and stored["p1.md"] == {"lead": "1b"}, \
        "the old log was replayed onto the compacted file"
    reader.upsert(MODEL, records(300, 1))
    reader.flush()
    assert len(EmbeddedStore(tmp_path / "v").hashes(MODEL)) == 111


def test_a_file_of_format_1_is_read_and_rewritten_with_a_log_at_the_next_flush(tmp_path):
    folder = tmp_path / "v"
    folder.mkdir()
    recs = records(0, 3)
    meta = {"format": 1, "model_version": MODEL, "dimension": DIM,
            "rows": [[r.page, r.chunk_id, r.section_id, r.content_hash, r.scope]
                     for r in recs]}
    matrix = np.stack([r.vector / np.linalg.norm(r.vector) for r in recs])
    buffer = io.BytesIO()
    np.savez(buffer, vectors=matrix,
             meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    npz, log = files(folder)
    npz.write_bytes(buffer.getvalue())
    store = EmbeddedStore(folder)
    assert store.count(MODEL) == 3
    assert store.query(recs[1].vector, 1, MODEL)[0].page == "p1.md"
    store.upsert(MODEL, records(3, 1))
    store.flush()
    assert log.is_file()
    assert EmbeddedStore(folder).count(MODEL) == 4


def test_emptying_a_model_removes_its_log_too(tmp_path):
    store = EmbeddedStore(tmp_path / "v")
    store.upsert(MODEL, records(0, 2))
    store.flush()
    npz, log = files(tmp_path / "v")
    assert log.is_file()
    store.delete("p0.md")
    store.delete("p1.md")
    store.flush()
    assert not npz.exists() and not log.exists()
    store.upsert(MODEL, records(5, 1))
    store.flush()
    store.drop_model(MODEL)
    assert not npz.exists() and not log.exists()


@pytest.mark.parametrize("ops", [
    [("remove", "a.md", None), ("remove", "b.md", {"x", "y"})],
    [("upsert", [["a.md", "c", "s", "h", "team"]], np.full((1, DIM), 0.5, np.float32)),
     ("remove", "a.md", {"c"}),
     ("upsert", [["é.md", "c~2", "s", "h2", ""], ["b.md", "c", "s", "h3", ""]],
      np.arange(2 * DIM, dtype=np.float32).reshape(2, DIM))],
])
def test_log_entries_round_trip(tmp_path, ops):
    path = tmp_path / "m.log"
    generation = vector_log.new_generation()
    end = vector_log.start(path, generation)
    end, _ = vector_log.append(path, vector_log.encode(ops), end)
    read = vector_log.read(path, generation, DIM)
    assert read is not None
    back, read_end, _, damaged = read
    assert damaged == 0
    assert read_end == end
    assert [(op, a if op == "remove" else a, b if op == "remove" else None)
            for op, a, b in back] == [(op, a, b if op == "remove" else None)
                                      for op, a, b in ops]
    for (op, _, b), (_, _, got) in zip(ops, back):
        if op == "upsert":
            assert np.array_equal(b, got)
    assert vector_log.read(path, vector_log.new_generation(), DIM) is None


def test_a_reader_that_saw_an_entry_half_written_reads_it_once_it_is_whole(tmp_path):
    # the writer's append became visible at its full size before all its bytes did: the
    # reader must look again although the size will not change any more
    reader = EmbeddedStore(tmp_path / "v")
    writer, log, whole = written_then_appended(tmp_path / "v", 10, 5)
    writer.upsert(MODEL, records(100, 3))
    writer.flush()
    entry = log.read_bytes()[len(whole):]
    assert reader.count(MODEL) == 18
    log.write_bytes(whole + entry[:-40] + bytes(40))        # the last bytes not there yet
    reader2 = EmbeddedStore(tmp_path / "v")
    assert reader2.count(MODEL) == 15
    log.write_bytes(whole + entry)                          # now they are: same size
    assert reader2.count(MODEL) == 18


def test_zeros_after_the_last_entry_end_the_log_instead_of_failing_every_reader(tmp_path):
    # a tail of zeros (a hole, blocks the disk never wrote) frames an empty payload whose
    # checksum is zero as well: it passed as an entry and decoding it raised struct.error
    store, log, whole = written_then_appended(tmp_path / "v", 100, 5)
    log.write_bytes(whole + bytes(64))
    reader = EmbeddedStore(tmp_path / "v")
    assert reader.count(MODEL) == 105
    reader.upsert(MODEL, records(200, 3))
    reader.flush()
    assert log.read_bytes().startswith(whole)
    assert EmbeddedStore(tmp_path / "v").count(MODEL) == 108


def test_a_reader_whose_log_was_cut_below_what_it_read_loads_again(tmp_path):
    # it kept its old end: it answered with rows no longer on disk, and its next append
    # went past the end of the file, leaving a hole of zeros before its entry
    store, log, whole = written_then_appended(tmp_path / "v", 100, 5)
    server = EmbeddedStore(tmp_path / "v")
    assert server.count(MODEL) == 105
    log.write_bytes(whole[:vector_log.HEADER])             # the log cut to its header
    other = EmbeddedStore(tmp_path / "v")
    assert other.count(MODEL) == 100
    other.upsert(MODEL, records(300, 1))
    other.flush()
    assert server.count(MODEL) == 101
    assert "p100.md" not in server.hashes(MODEL) and "p300.md" in server.hashes(MODEL)
    server.upsert(MODEL, records(400, 1))
    server.flush()
    assert EmbeddedStore(tmp_path / "v").count(MODEL) == 102


def test_a_damaged_entry_is_reported_by_the_store_and_one_in_progress_is_not(tmp_path):
    import os

    store, log, whole = written_then_appended(tmp_path / "v", 100, 5)
    log.write_bytes(whole + bytes(64))
    assert EmbeddedStore(tmp_path / "v").repairs() == []     # maybe a write in progress
    past = log.stat().st_mtime - 60
    os.utime(log, (past, past))
    reader = EmbeddedStore(tmp_path / "v")
    assert reader.count(MODEL) == 105
    repairs = reader.repairs()
    assert len(repairs) == 1 and str(log) in repairs[0] and "64 bytes" in repairs[0]
