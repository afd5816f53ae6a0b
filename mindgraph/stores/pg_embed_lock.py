"""One embed at a time per pgvector table and tenant, across workspaces and machines.

The workspace's ``embed.lock`` (vectors/lock.py) is a file in its state folder: two workspaces
(or two machines) writing one PostgreSQL table with the same tenant each planned and embedded
every chunk, and each one's plan removed what the other had just stored. The embed also takes a
session-level advisory lock in the database, keyed on the table and the tenant (rows of other
tenants are disjoint; they embed side by side). It is held on a connection of its own, opened
for the embed and closed after it: the server frees the lock when that session ends, a killed
embed's included. The session's ``application_name`` says who holds it (``mindgraph <holder>
<pid>@<host>``: ``embed`` for the `mindgraph embed` command, ``embed-run`` for another
process's embed run, ``catch-up`` for a server's embedding of the pages that changed), which
the waiting side reads from ``pg_stat_activity``: the database vouches for it, since it is
the name of the very session that holds the lock. In a process that shares one session, it is
the name of the embed that took it.

Within one process the lock is shared: a server's embedding of the pages that changed
(vectors/live.py) takes it without waiting, also at the end of an embed of its own that
holds it (the advisory lock belongs to that embed's session: a second session of the same
process would find it taken, as by a stranger). Two threads of the process asking at once take
turns to take it (one session, then shared), so neither finds the other a stranger; one that
may not wait waits for the other's taking at most ``connect_timeout`` seconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import socket
import threading
from typing import Any, Callable, Iterator

from ..errors import EmbedBusy, StoreError

APPLICATION_PREFIX = "mindgraph "
# what each holder (the word after APPLICATION_PREFIX) is called in the waiting side's notice
HOLDERS = {"embed": "another `mindgraph embed`",
           "embed-run": "an embed run of another mindgraph process (a reindex, sync or upload)",
           "catch-up": "a server's catch-up embed of the pages that changed"}


class _Session:
    """This process's session holding one lock, and how many of its embeds share it: the last
    to end closes it (a server's catch-up may still write after the embed that took it)."""

    def __init__(self, conn: Any):
        self.conn = conn
        self.count = 1


_held: dict[tuple[str, int], _Session] = {}     # (dsn, key) → the session holding it
_held_guard = threading.Lock()
_taking: dict[tuple[str, int], threading.Lock] = {}   # (dsn, key) → held while one takes it


def lock_key(table: str, tenant: str) -> int:
    """The advisory lock's key (a signed 64-bit integer) for ``table`` and ``tenant``."""
    digest = hashlib.sha256(f"mindgraph-embed:{table}:{tenant}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextlib.contextmanager
def pg_embed_lock(dsn: str, table: str, tenant: str, *, wait: bool = True,
                  notice: Callable[[str], None] | None = None, connect_timeout: int = 5,
                  where: str = "", on_error: Callable[[Exception], str] = str,
                  holder: str = "embed-run") -> Iterator[None]:
    """Hold the embed lock of ``table`` and ``tenant`` in the database at ``dsn``. When another
    session holds it: with ``wait``, tell ``notice`` (once) and block until it is free; else
    raise EmbedBusy naming its holder. ``where`` describes the database (no password);
    ``on_error`` turns a driver error into a message (StoreError); ``holder`` (a key of
    HOLDERS) says who takes it, for the notice of whoever waits for it."""
    if holder not in HOLDERS:
        raise ValueError(f"holder {holder!r} is not one of {sorted(HOLDERS)}")
    me = f"{APPLICATION_PREFIX}{holder} {os.getpid()}@{socket.gethostname()}"[:63]
    key = lock_key(table, tenant)
    mine = (dsn, key)
    what = f"is writing table {table} (tenant {tenant}) of {where}"
    with _held_guard:
        taking = _taking.setdefault(mine, threading.Lock())
    if not taking.acquire(timeout=-1 if wait else connect_timeout):
        raise EmbedBusy(f"another embed of this process {what} (it is taking the lock). Run "
                        f"again when it has finished.")
    try:
        with _held_guard:
            session = _held.get(mine)
            if session is not None:     # this process holds it already: share that session's
                session.count += 1
        if session is None:
            session = _take(dsn, key, me, wait, notice, connect_timeout, on_error, what)
            with _held_guard:
                _held[mine] = session
    finally:
        taking.release()
    try:
        yield
    finally:
        with _held_guard:
            session.count -= 1
            last = session.count == 0
            if last:
                del _held[mine]
        if last:
            _release(session, key)


def _release(session: _Session, key: int) -> None:
    """Free the lock before the session ends: a close returns before the server has ended
    the session, so a take right after it (this process's next embed) could find the lock
    still held, naming this very process (1 round in 30 under load)."""
    import psycopg

    try:
        session.conn.execute("SELECT pg_advisory_unlock(%s)", (key,))
    except psycopg.Error:
        pass                        # a lost connection: its server frees the lock itself
    finally:
        session.conn.close()


def _take(dsn: str, key: int, me: str, wait: bool, notice: Callable[[str], None] | None,
          connect_timeout: int, on_error: Callable[[Exception], str], what: str) -> _Session:
    """A new session named ``me`` holding the advisory lock ``key`` (see pg_embed_lock)."""
    import psycopg

    try:
        conn = psycopg.connect(dsn, connect_timeout=connect_timeout, autocommit=True,
                               application_name=me)
    except psycopg.Error as exc:
        raise StoreError(on_error(exc)) from exc
    try:
        if not conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
            what = _holder(conn, key, what)
            if not wait:
                raise EmbedBusy(f"{what}. Run again when it has finished, or leave out "
                                f"--no-wait to wait for it.")
            if notice is not None:
                notice(f"{what}; waiting for it to finish, then embedding what it left")
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
    except psycopg.Error as exc:
        conn.close()
        raise StoreError(on_error(exc)) from exc
    except BaseException:
        conn.close()
        raise
    return _Session(conn)


def _holder(conn: Any, key: int, what: str) -> str:
    """``what`` the session holding ``key`` does, said of it: ``another `mindgraph embed`
    is writing … (pid N on host H)`` from its application_name (HOLDERS), or of "another
    embed" when it is not a mindgraph embed's (or cannot be read)."""
    unsigned = key & 0xFFFF_FFFF_FFFF_FFFF
    try:
        row = conn.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a "
            "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND l.classid::bigint = %s AND l.objid::bigint = %s AND l.objsubid = 1 LIMIT 1",
            (unsigned >> 32, unsigned & 0xFFFF_FFFF)).fetchone()
    except Exception:   # noqa: BLE001 - only the notice's detail is lost
        row = None
    name = (row[0] or "") if row else ""
    holder, _, process = name[len(APPLICATION_PREFIX):].partition(" ") \
        if name.startswith(APPLICATION_PREFIX) else ("", "", "")
    pid, _, host = process.partition("@")
    if holder not in HOLDERS or not pid.isdigit() or not host:
        return f"another embed {what}"
    return f"{HOLDERS[holder]} {what} (pid {pid} on {host})"
