"""bench/bench_pg_hybrid.py end to end on a small workspace and the test PostgreSQL: pgvector
filled from the embedded store through its upsert, both stores asked the same queries."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.core import Mindgraph

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "bench_pg_hybrid.py"
pytestmark = pytest.mark.pg


@pytest.fixture
def embedded_workspace(tmp_path: Path) -> Path:
    """Twelve pages of three sections each, embedded (hashing vectors) in the embedded store."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    topics = ["sync", "canvas", "graph", "search", "plugins", "themes", "publish", "backlinks",
              "templates", "daily notes", "tags", "properties"]
    for n, topic in enumerate(topics):
        (wiki / f"{topic.title()}.md").write_text(
            f"# {topic.title()}\n\nAbout {topic}.\n\n## Set up {topic}\nTurn {topic} on in "
            f"settings, step {n}.\n\n## Fix {topic}\nWhen {topic} fails, restart it.\n",
            encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 64\n",
                                            encoding="utf-8")
    result = CliRunner().invoke(cli, ["embed", "-C", str(tmp_path)])
    assert result.exit_code == 0, result.output
    return tmp_path


def run(workspace: Path, dsn: str, table: str) -> dict:
    done = subprocess.run([sys.executable, str(SCRIPT), "--workspace", str(workspace), "--dsn",
                           dsn, "--table", table, "--queries", "6", "--warm-store", "3",
                           "--ef-search", "40"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_pgvector_gets_the_embedded_stores_rows_and_both_answer_the_same_queries(
        embedded_workspace, pg_dsn):
    table = f"mg_test_bench_{uuid.uuid4().hex[:8]}"
    try:
        first = run(embedded_workspace, pg_dsn, table)
        mg = Mindgraph.open(embedded_workspace)
        try:
            model = mg.embedding_provider().model_version
            rows = mg.vector_store().hashes(model)
        finally:
            mg.close()
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            copied = conn.execute(f"SELECT page, chunk_id, content_hash FROM {table} WHERE "
                                  f"model_version = %s", (model,)).fetchall()
        assert first["fill"]["rows"] == len(copied) == sum(map(len, rows.values())) == 36
        assert {(p, c): h for p, c, h in copied} == \
            {(p, c): h for p, chunks in rows.items() for c, h in chunks.items()}
        assert "copy_and_index_s" in first["fill"]
        for kind in ("keyword", "hybrid"):
            assert first[kind]["queries"] == 6
            assert first[kind]["embedded"]["p50_ms"] > 0 and first[kind]["pgvector"]["p50_ms"] > 0
        # the same rows: keyword search is the same index, hybrid the same vectors
        assert first["keyword"]["same_top_10_pages"] == 1.0
        assert first["hybrid"]["same_top_10_pages"] == 1.0
        assert first["hybrid"]["pgvector"]["store_queries"]       # it asked PostgreSQL
        recall = first["pgvector_hnsw"]["by_ef_search"]
        assert set(recall) == {"40", "400"} and recall["400"]["recall_at_10"] == 1.0
        assert first["postgresql"]["index_mb"] >= 0 and "shared_buffers" in first["postgresql"]
        assert run(embedded_workspace, pg_dsn, table)["fill"]["filled"] == "already"
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
