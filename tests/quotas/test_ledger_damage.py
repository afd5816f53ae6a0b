"""A quota ledger that is not one — not a database, truncated, a database of other tables —
is moved aside (``quotas.sqlite.corrupt-<time>``) and counting starts afresh (quotas/
repair.py), where before every LLM request of every identity was a 503 telling the owner to
check that the folder was writable and had room. Several processes finding the damage at
once move it once and never move aside the fresh ledger one of them made.
"""

import logging
import sqlite3
import threading

import pytest

from mindgraph.quotas import QuotaLedger


def damage(path, how: str) -> None:
    """Make ``path`` a ledger damaged in one of the ways a file gets damaged."""
    if how == "not-a-database":
        path.write_bytes(b"quota counts, overwritten by something else\n" * 100)
    elif how == "truncated":
        ledger = QuotaLedger(path)
        for n in range(300):
            ledger.take("llm_calls", f"acme/agent{n}", 1, 5, 3600.0)
        path.write_bytes(path.read_bytes()[:8192])      # a copy cut short, a full disk
    elif how == "other-tables":
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE events (id INTEGER, payload TEXT)")
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["not-a-database", "truncated", "other-tables"])
def test_a_damaged_ledger_is_moved_aside_and_counting_starts_afresh(tmp_path, how, caplog):
    path = tmp_path / "quotas.sqlite"
    damage(path, how)
    before = path.read_bytes()
    with caplog.at_level(logging.WARNING, logger="mindgraph.quotas"):
        assert QuotaLedger(path).take("llm_calls", "g/carol", 1, 1, 3600.0, now=0.0) is None
    moved = sorted(tmp_path.glob("quotas.sqlite.corrupt-*"))
    assert len(moved) == 1 and moved[0].read_bytes() == before     # kept, to look at
    assert "not a quota ledger" in caplog.text and moved[0].name in caplog.text
    # the fresh ledger counts: the quota of one is used
    assert QuotaLedger(path).take("llm_calls", "g/carol", 1, 1, 3600.0, now=1.0) == 3599.0


def test_workers_finding_the_damage_at_once_move_it_once(tmp_path):
    path = tmp_path / "quotas.sqlite"
    damage(path, "not-a-database")
    ledgers = [QuotaLedger(path) for _ in range(6)]     # six workers, each its own ledger
    start = threading.Barrier(len(ledgers))
    waits: list = []

    def take(ledger: QuotaLedger) -> None:
        start.wait()
        waits.append(ledger.take("llm_calls", "g/carol", 1, 100, 3600.0))

    threads = [threading.Thread(target=take, args=(ledger,)) for ledger in ledgers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert waits == [None] * 6
    assert len(list(tmp_path.glob("quotas.sqlite.corrupt-*"))) == 1
    with sqlite3.connect(path) as db:       # all six counted in the one fresh ledger
        assert db.execute("SELECT count(*) FROM events").fetchone()[0] == 6


def test_a_worker_whose_ledger_was_moved_aside_by_another_makes_it_anew(tmp_path):
    path = tmp_path / "quotas.sqlite"
    worker = QuotaLedger(path)
    assert worker.take("llm_calls", "g/carol", 1, 5, 3600.0, now=0.0) is None
    path.rename(tmp_path / "quotas.sqlite.corrupt-earlier")   # another worker moved it
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"quotas.sqlite{suffix}").unlink(missing_ok=True)
    assert worker.take("llm_calls", "g/carol", 1, 5, 3600.0, now=1.0) is None
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM events").fetchone()[0] == 1
