"""Run by tests/test_sigterm_cleanup.py in a pytest of its own (not collected otherwise: the
name is not test_*.py): starts the session's PostgreSQL, says where it runs, then waits for
the SIGTERM that the outer test sends."""

import os
import time
from pathlib import Path

import psycopg


def test_wait_for_sigterm(pg_dsn):
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        data = conn.execute("SHOW data_directory").fetchone()[0]
    out = Path(os.environ["MINDGRAPH_SIGTERM_OUT"])
    out.with_suffix(".tmp").write_text(data, encoding="utf-8")
    out.with_suffix(".tmp").rename(out)
    time.sleep(120)
