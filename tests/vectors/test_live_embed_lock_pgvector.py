"""A server's embedding of the pages that change (vectors/live.py) takes the same advisory
lock in PostgreSQL as `mindgraph embed` (stores/pg_embed_lock.py), without waiting: while
another workspace's embed writes the shared table, a changed page waits (the answer says so)
and the request is answered at once; once the lock is free the page is embedded. Before, the
two wrote the table at once. Real processes, a real PostgreSQL and the REST app in-process."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import psycopg
import pytest
from click.testing import CliRunner
from embed_runs import finish, slow_embed_command, start_against, wait_for_line
from fastapi.testclient import TestClient
from hashing_workspace import hashing_workspace
from test_live_embedding import embed_meanwhile, hold_embed, serving, up_to_date

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

pytestmark = [pytest.mark.pg,
              pytest.mark.skipif(not hasattr(os, "fork"), reason="needs flock (POSIX)")]

TABLE = "mg_test_live_embed_lock"


def _workspace(root, notes, dimension):
    root.mkdir()
    hashing_workspace(root, notes)
    (root / "mindgraph.yml").write_text(
        f"embedding:\n  provider: hashing\n  dimension: {dimension}\n"
        f"store:\n  backend: pgvector\n  table: {TABLE}\n")
    return root


@pytest.fixture
def two_workspaces(tmp_path, pg_dsn, monkeypatch):
    """Workspace a (150 notes, 300 chunks) and b (10 notes, served here) storing into one
    table and tenant; models of two widths keep their rows apart."""
    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    yield _workspace(tmp_path / "a", 150, 64), _workspace(tmp_path / "b", 10, 32)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")


def _vectors_of(mg, page):
    return mg.vector_store().hashes(mg.embedding_provider().model_version).get(page, {})


@pytest.mark.timeout(240)
def test_a_servers_live_embed_waits_for_another_workspaces_embed(two_workspaces, pg_dsn):
    a, b = two_workspaces
    embedded = CliRunner().invoke(cli, ["embed", "-C", str(b)])
    assert embedded.exit_code == 0, embedded.output
    mg = Mindgraph.open(b)
    client = TestClient(create_app(mg), base_url="http://127.0.0.1:8765")
    assert client.get("/smart_search", params={"q": "topic"}).status_code == 200
    before = _vectors_of(mg, "Note 1.md")
    assert before

    # 3 s a batch, 5 batches: it holds the table's lock for 15 s
    other = start_against(pg_dsn, slow_embed_command(a, pause=3.0))
    try:
        wait_for_line(other, "Embedding: ")
        (b / "wiki" / "Note 1.md").write_text("# Note 1\n\nZeppelins carry trunks.\n\n"
                                              "## Part\nMore about airships.\n")
        answer = client.get("/smart_search", params={"q": "zeppelins"}).json()
        assert other.poll() is None         # answered while the other embed still runs
        waiting = [n for n in answer["degradation"] if n.startswith("changed pages wait")]
        assert waiting and f"another `mindgraph embed` is writing table {TABLE}" in waiting[0]
        assert "tried again in 10 s" in waiting[0]
        assert _vectors_of(mg, "Note 1.md") == before       # not written meanwhile
    finally:
        code, out, err = finish(other)
    assert code == 0, err

    # the lock is free: the next change embeds the waiting page too
    (b / "wiki" / "Note 2.md").write_text("# Note 2\n\nBalloons float.\n\n## Part\nHigh up.\n")
    answer = client.get("/smart_search", params={"q": "balloons"}).json()
    assert not any(n.startswith("changed pages") for n in answer["degradation"]), answer
    assert _vectors_of(mg, "Note 1.md") != before


@pytest.mark.timeout(120)
def test_the_catch_up_at_the_end_of_an_embed_shares_its_lock(tmp_path, pg_dsn, monkeypatch):
    # an embed of this process holds the table's lock on a session of its own; the pages
    # that changed meanwhile are embedded as it ends, under that lock, not refused as busy
    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    try:
        wiki, mg = serving(tmp_path, f"store:\n  backend: pgvector\n  table: {TABLE}\n")
        worker, release = embed_meanwhile(mg, wiki)
        meanwhile = mg.smart_search("version")
        assert any("wait for the `embed` running now" in d for d in meanwhile.degradation)
        release.set()
        worker.join(30)
        assert up_to_date(mg)
        assert mg.smart_search("version three last").degradation == ()
    finally:
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {TABLE}")


@pytest.mark.timeout(180)
def test_an_embed_waiting_for_a_servers_catch_up_names_it(two_workspaces, pg_dsn):
    # the notice said "another `mindgraph embed` is writing" whoever held the lock: here the
    # holder is this process's embedding of a changed page, before a query it answers
    a, b = two_workspaces
    embedded = CliRunner().invoke(cli, ["embed", "-C", str(b)])
    assert embedded.exit_code == 0, embedded.output
    mg = Mindgraph.open(b)
    mg.smart_search("topic")                        # vectors in use: changed pages embedded
    inside, release = hold_embed(mg, "query")
    (b / "wiki" / "Note 1.md").write_text("# Note 1\n\nZeppelins carry trunks.\n")
    query = threading.Thread(target=mg.smart_search, args=("zeppelins",), name="query")
    query.start()
    try:
        assert inside.wait(30)                      # the catch-up holds the table's lock
        busy = subprocess.run([sys.executable, "-m", "mindgraph", "embed", "--no-wait",
                               "-C", str(a)], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "MINDGRAPH_PG_DSN": pg_dsn})
    finally:
        release.set()
        query.join(30)
    assert busy.returncode == 1, busy.stderr
    assert (f"Error: a server's catch-up embed of the pages that changed is writing table "
            f"{TABLE} (tenant default) of PostgreSQL at ") in busy.stderr
    assert f"(pid {os.getpid()} on {socket.gethostname()})" in busy.stderr
    assert "`mindgraph embed`" not in busy.stderr
