"""Two workspaces embedding into one pgvector table: the file lock is per state folder, so
both embedded at once (each planned every chunk). The embed also holds an advisory lock in
the database (stores/pg_embed_lock.py): the second waits, naming the first, or with
--no-wait exits 1. Real processes and a real PostgreSQL; the holder killed with SIGKILL frees
the lock (its session ends)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import psycopg
import pytest
from embed_runs import finish, slow_embed_command, start_against, wait_for_line
from hashing_workspace import hashing_workspace

pytestmark = [pytest.mark.pg,
              pytest.mark.skipif(not hasattr(os, "fork"), reason="needs flock (POSIX)")]

TABLE = "mg_test_embed_lock"


@pytest.fixture
def two_workspaces(tmp_path, pg_dsn):
    """Two workspaces of the same 150 notes (300 chunks), both storing into one table."""
    made = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        workspace = hashing_workspace(tmp_path / name, 150)
        (workspace / "mindgraph.yml").write_text(
            f"embedding:\n  provider: hashing\nstore:\n  backend: pgvector\n  table: {TABLE}\n")
        made.append(workspace)
    yield made
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {TABLE}")


def slow_embed(pg_dsn, workspace):
    # 1.5 s a batch (7.5 s in all): the other process, started meanwhile, must find it
    # running even when a loaded machine takes seconds to start Python
    return start_against(pg_dsn, slow_embed_command(workspace, pause=1.5))



@pytest.mark.timeout(180)
def test_an_embed_from_another_workspace_waits_for_the_first(two_workspaces, pg_dsn):
    first_ws, second_ws = two_workspaces
    first = slow_embed(pg_dsn, first_ws)
    wait_for_line(first, "Embedding: ")                 # it holds the table's lock
    second = start_against(pg_dsn, [sys.executable, "-m", "mindgraph", "embed", "--json",
                                    "-C", str(second_ws)])
    waiting = wait_for_line(second, "Another `mindgraph embed` is writing")[-1]
    assert f"table {TABLE} (tenant default) of PostgreSQL at " in waiting
    assert f"(pid {first.pid} on {socket.gethostname()}); waiting for it to finish" in waiting
    code_first, out_first, err_first = finish(first)
    code_second, out_second, err_second = finish(second)
    assert (code_first, code_second) == (0, 0), err_first + err_second
    assert json.loads(out_first)["embedded"] == 300
    # the same notes: the second found every chunk stored by the first, embedded none
    assert json.loads(out_second)["embedded"] == 0
    assert json.loads(out_second)["unchanged"] == 300


@pytest.mark.timeout(180)
def test_no_wait_exits_1_and_a_killed_holder_frees_the_table(two_workspaces, pg_dsn):
    first_ws, second_ws = two_workspaces
    first = slow_embed(pg_dsn, first_ws)
    wait_for_line(first, "Embedding: ")
    busy = subprocess.run([sys.executable, "-m", "mindgraph", "embed", "--no-wait",
                           "-C", str(second_ws)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "MINDGRAPH_PG_DSN": pg_dsn})
    assert busy.returncode == 1, busy.stderr
    assert (f"Error: another `mindgraph embed` is writing table {TABLE} (tenant default) "
            f"of PostgreSQL at ") in busy.stderr
    assert f"(pid {first.pid} on " in busy.stderr
    assert "Run again when it has finished, or leave out --no-wait" in busy.stderr
    assert "Traceback" not in busy.stderr
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    after = start_against(pg_dsn, [sys.executable, "-m", "mindgraph", "embed", "--no-wait",
                                   "--json", "-C", str(second_ws)])
    code, out, err = finish(after)
    assert code == 0, err
    report = json.loads(out)
    assert report["embedded"] + report["unchanged"] == 300 and report["unchanged"] > 0


@pytest.mark.timeout(120)
def test_two_threads_of_one_process_share_the_lock_without_waiting(pg_dsn):
    """A server's catch-up and an embed of the same process asking at the same moment: both
    get the lock (one session, shared). Before, each opened a session of its own and the
    second found the first's lock taken, naming its own pid, in 29 of 30 rounds; and a round
    right after another could find the lock the last one closed still held by the server
    (freed explicitly now, before the session closes; the old code failed within 300 rounds)."""
    import threading

    from mindgraph.errors import EmbedBusy
    from mindgraph.stores.pg_embed_lock import _held, pg_embed_lock

    for _ in range(100):    # each round starts right after the last one's release
        start_together = threading.Barrier(2)
        inside = threading.Barrier(2, timeout=30)
        outcomes: list[str] = []

        def take() -> None:
            start_together.wait()
            try:
                with pg_embed_lock(pg_dsn, TABLE, "t", wait=False):
                    outcomes.append("held")
                    inside.wait()           # both hold it at once
            except EmbedBusy as exc:
                outcomes.append(str(exc))
                inside.abort()
            except threading.BrokenBarrierError:
                pass

        threads = [threading.Thread(target=take) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert outcomes == ["held", "held"], outcomes
        assert not _held                    # the last holder closed the session
