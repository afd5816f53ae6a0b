"""bench/bench_pg_hybrid.py end to end on a small workspace and the test PostgreSQL: pgvector
filled from the embedded store through its upsert, both stores asked the same queries."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
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
        assert set(recall) == {"40", "800"} and recall["800"]["recall_at_10"] == 1.0   # default
        assert first["postgresql"]["index_mb"] >= 0 and "shared_buffers" in first["postgresql"]
        assert run(embedded_workspace, pg_dsn, table)["fill"]["filled"] == "already"
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {table}")


def test_recall_only_measures_each_lever_three_ways(embedded_workspace, pg_dsn):
    table = f"mg_test_bench_{uuid.uuid4().hex[:8]}"
    try:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "--workspace", str(embedded_workspace), "--dsn",
             pg_dsn, "--table", table, "--queries", "6", "--recall-only", "--ef-search", "40",
             "--iterative-scan", "off,strict_order", "--fetch-k", "10,40",
             "--hnsw", "16:64:halfvec,8:32:vector"], capture_output=True, text=True,
            timeout=300)
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        assert "hybrid" not in result and "plans" not in result      # recall only
        grid = result["pgvector_hnsw"]["grid"]
        # 2 builds × 2 ef_search (40 and the configured 800) × 2 scans × 2 fetches
        assert len(grid) == 16
        assert {r["index"]["index"] for r in grid} == {
            "halfvec, m=16, ef_construction=64", "vector, m=8, ef_construction=32"}
        assert {r["iterative_scan"] for r in grid} == {"off", "strict_order"}
        assert {r["fetch_k"] for r in grid} == {10, 40}
        for row in grid:     # 36 rows: the HNSW finds them all, however counted
            assert row["recall_at_10"] == row["id_recall_at_10"] == \
                row["distance_recall_at_10"] == row["page_recall_at_10"] == 1.0
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            index = conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s AND "
                                 "indexdef LIKE '%%hnsw%%'", (table,)).fetchone()[0]
        assert "vector_cosine_ops" in index and "m='8'" in index   # the last build is kept
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {table}")


def test_found_of_counts_ids_ties_and_ann_benchmarks_distance():
    sys.path.insert(0, str(SCRIPT.parent))
    from bench_pg_hybrid import found_of

    q = np.asarray([1.0, 0.0], dtype=np.float32)
    # cosines to q: 1.0, 0.9 ... (row i at angle making cos = 1 - 0.01 i), plus near-ties
    cosines = [1.0 - 0.01 * i for i in range(12)] + [0.9100 - 0.0005, 0.9100 - 0.002]
    x = np.asarray([[c, np.sqrt(1 - c * c)] for c in cosines], dtype=np.float32)
    exact, tenth = set(range(10)), float(x[9] @ q)          # the 10th: cosine 0.91
    assert found_of(x, q, exact, tenth, list(range(10))) == {"id": 10, "ties": 10,
                                                             "distance": 10}
    # row 12 is 0.0005 below the 10th (within ann-benchmarks' 1e-3, not a tie); row 13 0.002
    got = found_of(x, q, exact, tenth, [*range(8), 12, 13])
    assert got == {"id": 8, "ties": 8, "distance": 9}
    # a row tying the 10th exactly counts both as a tie and by distance
    x[13] = x[9]
    assert found_of(x, q, exact, tenth, [*range(9), 13]) == {"id": 9, "ties": 10,
                                                            "distance": 10}


def test_why_reports_the_causes_of_misses_at_the_configured_ef_search(embedded_workspace,
                                                                       pg_dsn):
    table = f"mg_test_bench_{uuid.uuid4().hex[:8]}"
    try:
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "--workspace", str(embedded_workspace), "--dsn",
             pg_dsn, "--table", table, "--queries", "6", "--recall-only", "--why"],
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        why = json.loads(done.stdout)["pgvector_hnsw"]["why"]
        assert set(why) == {"headings"}
        headings = why["headings"]
        # 36 rows: the HNSW finds every one, so nothing is missed and no row is a miss's
        assert headings["queries"] == 6 and headings["recall_at_10"] == 1.0
        assert headings["missed"] == 0 and headings["missed_rows_nn1"] == []
        assert headings["fp16_exact_recall_at_10"] >= 0.9
        assert len(headings["found_rows_nn1"]) == len(headings["random_rows_nn1"]) == 3
        assert headings["far_queries"] + (headings["near_recall"] is not None) >= 1
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
