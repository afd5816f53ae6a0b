"""`mindgraph embed`, in-process through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.providers.embedding.local import LocalMiniLMProvider

HASHING = "embedding:\n  provider: hashing\n  dimension: 64\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with a three-page wiki, embedding with the hashing provider."""
    wiki = tmp_path / "wiki"
    (wiki / "Plugins").mkdir(parents=True)
    (wiki / "Sync.md").write_text("---\ntitle: Sync\n---\nKeep notes in step.\n\n"
                                  "## Set up\nSign in.\n", encoding="utf-8")
    (wiki / "Plugins" / "Canvas.md").write_text("# Canvas\n\nAn infinite board.\n",
                                                encoding="utf-8")
    (wiki / "Home.md").write_text("# Home\n\nStart here.\n", encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(HASHING, encoding="utf-8")
    return tmp_path


def embed(workspace: Path, *args: str):
    return CliRunner().invoke(cli, ["embed", "-C", str(workspace), *args])


def test_embed_then_rerun_embeds_nothing(workspace):
    first = embed(workspace, "--json")
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert (data["pages"], data["chunks"], data["embedded"]) == (3, 4, 4)
    assert data["model_version"] == "hashing:v1:64"
    assert str(workspace / ".mindgraph" / "vectors" / "default") in data["store"]
    again = json.loads(embed(workspace, "--json").stdout)
    assert (again["embedded"], again["unchanged"], again["deleted_chunks"]) == (0, 4, 0)


def test_text_summary_and_changes(workspace):
    assert embed(workspace).exit_code == 0
    (workspace / "wiki" / "Home.md").unlink()
    (workspace / "wiki" / "Sync.md").write_text("---\ntitle: Sync\n---\nKeep notes in step.\n",
                                                encoding="utf-8")
    result = embed(workspace)
    assert result.exit_code == 0, result.output
    assert "Embedded 0 of 2 chunks from 2 pages (2 unchanged); removed 2 chunks of 1 " \
           "deleted pages" in result.output
    assert "Model hashing:v1:64" in result.output


def test_dry_run_writes_nothing_and_loads_no_model(workspace, monkeypatch):
    (workspace / "mindgraph.yml").write_text("", encoding="utf-8")   # default: MiniLM + USE

    def no_model(self):
        raise AssertionError("--dry-run must not load the model")

    monkeypatch.setattr(LocalMiniLMProvider, "_load_session", no_model)
    result = embed(workspace, "--dry-run", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["dry_run"] is True and data["embedded"] == 4
    assert data["model_version"] == ("local:routed(*=local:all-MiniLM-L6-v2-w8a8:384,"
                                     "ja+zh=local:use-multilingual-v3:512):896")
    assert not (workspace / ".mindgraph" / "vectors").exists()
    text = embed(workspace, "--dry-run")
    assert "Would embed 4 of 4 chunks" in text.output and "Dry run" in text.output


def test_other_models_are_reported_and_can_be_dropped(workspace):
    assert embed(workspace).exit_code == 0
    (workspace / "mindgraph.yml").write_text(HASHING.replace("64", "32"), encoding="utf-8")
    result = embed(workspace)
    assert "other models: hashing:v1:64 (4)" in result.output
    assert "--drop-other-models" in result.output
    dropped = json.loads(embed(workspace, "--drop-other-models", "--json").stdout)
    assert dropped["dropped_models"] == {"hashing:v1:64": 4}
    assert json.loads(embed(workspace, "--json").stdout)["other_models"] == {}


def test_missing_wiki_is_an_error_with_the_fix(tmp_path):
    outside = embed(tmp_path)                       # no mindgraph.yml either: a usage error
    assert outside.exit_code == 2
    assert "not a mindgraph workspace" in outside.output and "-C DIR" in outside.output
    assert not (tmp_path / ".mindgraph").exists()
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    result = embed(tmp_path)
    assert result.exit_code == 1
    assert "does not exist" in result.output and "mindgraph ingest" in result.output


def test_unreachable_pgvector_names_the_dsn_and_the_fix(workspace, monkeypatch):
    (workspace / "mindgraph.yml").write_text(HASHING + "store:\n  backend: pgvector\n",
                                             encoding="utf-8")
    monkeypatch.setenv("MINDGRAPH_PG_DSN", "postgresql://kb:hunter2@127.0.0.1:1/kb")
    result = embed(workspace)
    assert result.exit_code == 1
    assert "postgresql://kb:***@127.0.0.1:1/kb" in result.output
    assert "hunter2" not in result.output
    assert "MINDGRAPH_PG_DSN" in result.output and "docker compose up -d" in result.output


def test_pgvector_without_a_dsn_is_a_config_error(workspace, monkeypatch):
    (workspace / "mindgraph.yml").write_text(HASHING + "store:\n  backend: pgvector\n",
                                             encoding="utf-8")
    monkeypatch.delenv("MINDGRAPH_PG_DSN", raising=False)
    result = embed(workspace)
    assert result.exit_code == 2
    assert "MINDGRAPH_PG_DSN is not set" in result.output


@pytest.mark.pg
def test_embed_into_pgvector(workspace, pg_dsn, monkeypatch):
    (workspace / "mindgraph.yml").write_text(
        HASHING + "store:\n  backend: pgvector\n  table: mg_test_cli\n", encoding="utf-8")
    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    try:
        assert json.loads(embed(workspace, "--json").stdout)["embedded"] == 4
        assert json.loads(embed(workspace, "--json").stdout)["embedded"] == 0
    finally:
        import psycopg

        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS mg_test_cli")


@pytest.mark.pg
def test_an_index_built_with_other_settings_is_reported_and_rebuilt(workspace, pg_dsn,
                                                                     monkeypatch):
    # CREATE INDEX IF NOT EXISTS kept an index built with other m / ef_construction silently;
    # an index of 32-bit floats (an older mindgraph's) is kept until the rebuild makes it halfvec
    import psycopg

    def configure(m: int, ef_construction: int, index_type: str = "halfvec") -> None:
        (workspace / "mindgraph.yml").write_text(
            HASHING + f"store:\n  backend: pgvector\n  table: mg_test_reindex\n"
            f"  hnsw_m: {m}\n  hnsw_ef_construction: {ef_construction}\n"
            f"  index_type: {index_type}\n", encoding="utf-8")

    def built() -> list[str]:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            return [row[0] + ("," + "halfvec" if "halfvec_cosine_ops" in row[1] else ",vector")
                    for row in conn.execute(
                "SELECT array_to_string(c.reloptions, ','), pg_get_indexdef(c.oid) "
                "FROM pg_index i JOIN pg_class c "
                "ON c.oid = i.indexrelid WHERE i.indrelid = 'mg_test_reindex'::regclass "
                "AND c.relam = (SELECT oid FROM pg_am WHERE amname = 'hnsw')").fetchall()]

    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    configure(8, 40, "vector")
    try:
        first = embed(workspace)
        assert first.exit_code == 0, first.output
        assert "Warning" not in first.output
        assert built() == ["m=8,ef_construction=40,vector"]
        configure(16, 64)
        kept = CliRunner().invoke(cli, ["embed", "-C", str(workspace)])
        assert kept.exit_code == 0, kept.output
        warning = kept.stderr
        assert "built with vector, m=8, ef_construction=40, not the configured halfvec, " \
               "m=16, ef_construction=64" in warning, warning
        assert "mindgraph embed --rebuild-index" in warning
        assert built() == ["m=8,ef_construction=40,vector"]
        kept_hits = CliRunner().invoke(cli, ["search", "-C", str(workspace), "--hybrid",
                                             "infinite board", "--json"])
        assert kept_hits.exit_code == 0 and "Canvas" in kept_hits.stdout, kept_hits.output
        rebuilt = embed(workspace, "--rebuild-index", "--json")
        assert rebuilt.exit_code == 0, rebuilt.output
        report = json.loads(rebuilt.stdout)
        assert "with halfvec, m=16, ef_construction=64 (was vector, m=8, " \
               "ef_construction=40)" in report["index_rebuilt"]
        assert report["index_warnings"] == []
        # one index: the old one is gone
        assert built() == ["m=16,ef_construction=64,halfvec"]
        again = embed(workspace)
        assert again.exit_code == 0 and "Warning" not in again.output, again.output
        hits = CliRunner().invoke(cli, ["search", "-C", str(workspace), "--hybrid",
                                        "infinite board", "--json"])
        assert hits.exit_code == 0, hits.output
        assert "Canvas" in hits.stdout
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS mg_test_reindex")


@pytest.mark.pg
def test_an_index_larger_than_shared_buffers_is_reported_with_the_setting_to_change(
        tmp_path, small_buffers_pg_dsn, monkeypatch):
    # pgvector's default shared_buffers (128 MB) holds a seventh of 100,000 notes' index: each
    # query then read 3,390 of its 4,353 pages from the OS (36.6 ms against 6.5 in memory)
    import psycopg

    wiki = tmp_path / "wiki"
    wiki.mkdir()
    for n in range(80):
        sections = "".join(f"## Part {p}\nNote {n} part {p}: facts {n * p} and {n + p}.\n\n"
                           for p in range(5))
        (wiki / f"Note {n}.md").write_text(f"# Note {n}\n\n{sections}", encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(
        HASHING + "store:\n  backend: pgvector\n  table: mg_test_buffers\n", encoding="utf-8")
    monkeypatch.setenv("MINDGRAPH_PG_DSN", small_buffers_pg_dsn)
    with psycopg.connect(small_buffers_pg_dsn, autocommit=True) as conn:
        assert conn.execute("SHOW shared_buffers").fetchone()[0] == "128kB"
    first = embed(tmp_path, "--json")
    assert first.exit_code == 0, first.output
    with psycopg.connect(small_buffers_pg_dsn, autocommit=True) as conn:
        index_kb = conn.execute(
            "SELECT pg_relation_size(indexrelid) / 1024 FROM pg_index i JOIN pg_class c ON "
            "c.oid = i.indexrelid WHERE i.indrelid = 'mg_test_buffers'::regclass AND "
            "c.relam = (SELECT oid FROM pg_am WHERE amname = 'hnsw')").fetchone()[0]
    assert index_kb > 128           # the index outgrew the buffers
    warnings = json.loads(first.stdout)["index_warnings"]
    assert len(warnings) == 1 and "more than PostgreSQL's shared_buffers (128 kB)" in \
        warnings[0], warnings
    assert "Set shared_buffers to 256 MB or more" in warnings[0]
    assert "POSTGRES_SHARED_BUFFERS" in warnings[0]
    shown = embed(tmp_path)                       # the text summary prints it on stderr
    assert shown.exit_code == 0 and "Warning: pgvector index" in shown.stderr, shown.output


@pytest.mark.pg
def test_an_index_within_shared_buffers_gets_no_memory_warning(workspace, pg_dsn,
                                                               monkeypatch):
    import psycopg

    (workspace / "mindgraph.yml").write_text(
        HASHING + "store:\n  backend: pgvector\n  table: mg_test_buffers_fit\n",
        encoding="utf-8")
    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    try:
        result = embed(workspace, "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["index_warnings"] == []
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS mg_test_buffers_fit")


def test_rebuild_index_on_a_small_embedded_store_says_there_is_no_graph(workspace):
    result = embed(workspace, "--rebuild-index")
    assert result.exit_code == 0, result.output
    assert "No graph to build: hashing:v1:64 has 4 vectors, searched exactly below 200000." \
        in result.stdout
    assert "Hashing:" not in result.output


def test_rebuild_index_rebuilds_the_embedded_stores_graph(workspace, monkeypatch):
    from mindgraph.stores import ann, embedded

    monkeypatch.setattr(embedded, "EXACT_BELOW", 2)     # the four chunks get a graph
    monkeypatch.setattr(ann, "EXACT_BELOW", 2)
    with monkeypatch.context() as older:
        older.setattr(ann, "CONNECTIVITY", 8)
        assert embed(workspace).exit_code == 0
    kept = embed(workspace)
    assert kept.exit_code == 0, kept.output
    assert "Warning: the HNSW graph was built with connectivity 8" in kept.stderr
    rebuilt = embed(workspace, "--rebuild-index")
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "Rebuilt the HNSW graph of hashing:" in rebuilt.stdout
    assert "over 4 vectors" in rebuilt.stdout and "Warning" not in rebuilt.output


def test_progress_bar_goes_to_stderr_on_a_terminal(workspace, monkeypatch):
    monkeypatch.setattr("mindgraph.cli.embed_cmd.is_terminal", lambda: True)
    monkeypatch.setattr("mindgraph.cli.progress.is_terminal", lambda: True)
    result = CliRunner().invoke(cli, ["embed", "-C", str(workspace)])
    assert result.exit_code == 0
    assert "Embedding" in result.stderr and "Embedding" not in result.stdout


def _embedded_with_a_log(workspace: Path) -> Path:
    """Embedded, then one changed page embedded into the log: the log's path."""
    assert embed(workspace).exit_code == 0
    sync = workspace / "wiki" / "Sync.md"
    sync.write_text("---\ntitle: Sync\n---\nKeep notes in step, twice.\n", encoding="utf-8")
    assert json.loads(embed(workspace, "--json").stdout)["embedded"] == 1   # into the log
    log, = (workspace / ".mindgraph" / "vectors" / "default").glob("*.log")
    return log


def _aged(path: Path) -> None:
    """Written a minute ago: not an append still in progress."""
    import os

    os.utime(path, (path.stat().st_atime - 60, path.stat().st_mtime - 60))


def test_embed_says_what_a_damaged_vector_log_lost_and_embeds_it_again(workspace):
    log = _embedded_with_a_log(workspace)
    data = bytearray(log.read_bytes())
    data[-5] ^= 0xFF                          # the last entry's vectors no longer check out
    log.write_bytes(bytes(data))
    _aged(log)

    result = CliRunner().invoke(cli, ["embed", "-C", str(workspace)])
    assert result.exit_code == 0, result.output
    assert f"Warning: {log}: " in result.stderr and "embeds again" in result.stderr
    assert "Embedded 1 of 3 chunks" in result.stdout      # Sync.md's lost vector, again
    again = json.loads(embed(workspace, "--json").stdout)
    assert again["repaired"] == [] and again["embedded"] == 0


def test_a_damaged_log_tail_is_cut_off_by_embed_even_with_nothing_to_embed(workspace):
    log = _embedded_with_a_log(workspace)
    whole = log.read_bytes()
    log.write_bytes(whole + b"JUNK" * 50)               # bytes that are no entry
    _aged(log)
    first = json.loads(embed(workspace, "--json").stdout)
    assert first["embedded"] == 0 and len(first["repaired"]) == 1
    assert log.read_bytes() == whole                    # cut back to its last whole entry
    assert json.loads(embed(workspace, "--json").stdout)["repaired"] == []


@pytest.mark.pg
def test_a_rebuild_waits_for_another_processs_rebuild_of_the_same_index(workspace, pg_dsn,
                                                                        monkeypatch):
    """Two `embed --rebuild-index` at once made PostgreSQL report "deadlock detected" (each
    CREATE INDEX CONCURRENTLY waited for the other's). The second now says it waits for the
    first, does not build again what the first just built, and gives up after
    store.rebuild_wait_s with the fix, without a raw psycopg message."""
    import threading

    import psycopg

    from mindgraph.stores import pg_hnsw

    config = HASHING + "store:\n  backend: pgvector\n  table: mg_test_rebuild_turns\n"
    (workspace / "mindgraph.yml").write_text(config, encoding="utf-8")
    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)

    def other_process(held: threading.Event, seconds: float, builds: bool) -> None:
        """Another rebuild of the index: holds its turn ``seconds``, then builds or fails."""
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            with pg_hnsw.rebuild_turn(conn, name, 60, lambda: None):
                held.set()
                threading.Event().wait(seconds)
                if builds:
                    pg_hnsw.rebuild(conn, name, "mg_test_rebuild_turns", 64, "hashing:v1:64",
                                    pg_hnsw.HnswSettings(16, 256, "halfvec"), "64MB")

    def rebuild_while(seconds: float, builds: bool):
        held = threading.Event()
        other = threading.Thread(target=other_process, args=(held, seconds, builds))
        other.start()
        assert held.wait(30)
        try:
            return embed(workspace, "--rebuild-index")
        finally:
            other.join(60)

    try:
        first = embed(workspace, "--rebuild-index")
        assert first.exit_code == 0, first.output
        name = first.stdout.split("Rebuilt pgvector index ", 1)[1].split()[0]

        waited = rebuild_while(1.0, builds=True)
        assert waited.exit_code == 0, waited.output
        assert f"Another process is rebuilding index {name} of hashing:v1:64 in pgvector at " \
               in waited.stderr
        assert "waiting for it to finish (at most 60 min, store.rebuild_wait_s)." \
               in waited.stderr
        assert f"Index {name} of hashing:v1:64 was rebuilt by the other process meanwhile, " \
               f"with halfvec, m=16, ef_construction=256: not built again." in waited.stdout

        failed_other = rebuild_while(1.0, builds=False)       # it stopped without a build
        assert failed_other.exit_code == 0, failed_other.output
        assert "Another process is rebuilding" in failed_other.stderr
        assert f"Rebuilt pgvector index {name} of hashing:v1:64" in failed_other.stdout

        (workspace / "mindgraph.yml").write_text(config + "  rebuild_wait_s: 0.5\n",
                                                 encoding="utf-8")
        gave_up = rebuild_while(3.0, builds=False)
        assert gave_up.exit_code == 1, gave_up.output
        assert "Traceback" not in gave_up.output and "psycopg" not in gave_up.output
        assert f"another process has been rebuilding index {name} of hashing:v1:64 for more " \
               f"than 0.5 s; let it finish (or stop it; or wait longer: " \
               f"store.rebuild_wait_s), then run `mindgraph embed --rebuild-index` again" \
               in gave_up.output
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS mg_test_rebuild_turns")


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:300])      # a copy or a disk cut short
    _aged(path)


def test_a_truncated_vectors_file_is_reported_as_damaged_and_embed_replaces_it(workspace):
    assert embed(workspace).exit_code == 0
    npz, = (workspace / ".mindgraph" / "vectors" / "default").glob("*.npz")
    _truncated(npz)
    damaged = f"{npz} is damaged (File is not a zip file): none of its vectors of " \
              f"hashing:v1:64 could be read; `mindgraph embed` embeds them again and " \
              f"replaces the file"

    search = CliRunner().invoke(cli, ["search", "--hybrid", "-C", str(workspace), "board"])
    assert search.exit_code == 0, search.output
    assert f"vector retrieval unavailable ({damaged})" in search.output
    assert "yet" not in search.output and "Traceback" not in search.output

    planned = embed(workspace, "--dry-run")
    assert planned.exit_code == 0 and f"Warning: {damaged}." in planned.stderr

    repaired = embed(workspace)
    assert repaired.exit_code == 0, repaired.output
    assert f"Warning: {damaged}." in repaired.stderr
    assert "Embedded 4 of 4 chunks" in repaired.stdout
    again = json.loads(embed(workspace, "--json").stdout)
    assert (again["embedded"], again["repaired"]) == (0, [])
    found = CliRunner().invoke(cli, ["search", "--hybrid", "-C", str(workspace), "board"])
    assert "unavailable" not in found.output and "vector #" in found.output


def test_a_truncated_vectors_file_of_another_model_is_named_and_left_out(workspace):
    (workspace / "mindgraph.yml").write_text(HASHING.replace("64", "32"), encoding="utf-8")
    assert embed(workspace).exit_code == 0
    old, = (workspace / ".mindgraph" / "vectors" / "default").glob("*.npz")
    (workspace / "mindgraph.yml").write_text(HASHING, encoding="utf-8")
    _truncated(old)
    result = embed(workspace)
    assert result.exit_code == 0, result.output
    assert "Embedded 4 of 4 chunks" in result.stdout
    assert f"Warning: {old} is damaged (File is not a zip file): neither its model nor its " \
           f"vectors could be read, so it is left out; delete it" in result.stderr
    assert "Traceback" not in result.output


def test_an_unreadable_page_is_named_as_skipped_not_as_vectors_kept(workspace):
    # the page never had vectors: "kept the stored vectors" was wrong for it
    (workspace / "wiki" / "Broken.md").write_bytes(b"# Broken\n\n\xff\xfe not UTF-8\n")
    result = embed(workspace)
    assert result.exit_code == 0, result.output
    assert "Skipped 1 unreadable page: any vectors stored for it are kept " \
           "(`mindgraph check` says why)." in result.stderr
    report = json.loads(embed(workspace, "--json").stdout)
    assert report["unreadable_pages"] == ["Broken.md"]
