"""PostgreSQL + pgvector store (psycopg 3), HNSW with cosine distance.

Schema (one table, ``store.table``, default ``mindgraph_sections``)::

    tenant, scope, page, chunk_id, section_id, model_version, content_hash,
    dimension int, embedding vector  -- no fixed width: one table serves every model
    UNIQUE (tenant, page, chunk_id, model_version)

A ``vector(d)`` column needs one fixed width, and an HNSW index needs one too. Instead of a
table per width, each model_version gets its own *partial expression* index::

    CREATE INDEX ... USING hnsw ((embedding::halfvec(d)) halfvec_cosine_ops)
        WITH (m = <store.hnsw_m>, ef_construction = <store.hnsw_ef_construction>)
        WHERE model_version = '<model>'

and queries repeat the same cast and predicate (the model_version inlined as a literal, so
the planner can match the partial index even for a prepared statement). One index per model
also keeps a query's neighbours within its model: a shared index filtered afterwards would
lose recall whenever two models share a width.

The index holds 16-bit floats (``store.index_type: halfvec``, pgvector 0.7 or later): about
half the pages of a 32-bit one (``vector``), so twice the rows fit in shared_buffers, and
widths up to 4,000 (``vector``: 2,000). The top-k it finds is re-scored at full precision,
so scores are exact cosines either way. An index built with the other type keeps answering
(queries cast as it was built) until ``mindgraph embed --rebuild-index``.

Writes: COPY (binary) into a temporary table, then one INSERT ... ON CONFLICT DO UPDATE.
The HNSW index of a new model is built after its first batch is loaded (faster than inserting
into an empty index). One connection is opened lazily and reused (reopened if it broke);
``hnsw.ef_search`` is set on it from ``store.ef_search``.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from typing import Any, Callable, Collection, Iterator, Sequence, TypeVar

import numpy as np

from ..config import StoreSettings
from ..errors import StoreError
from . import pg_hnsw
from .base import ChunkMove, VectorHit, VectorRecord, as_query_vector, prepared_matrix

QUERY_TIMEOUT_MS = 10_000
# how long a model's index type is trusted before it is read again (another process's
# `embed --rebuild-index` may change it; until then a query cannot use the new index)
KIND_TTL_S = 10.0
# a peer that stops answering (a network partition) is noticed in ~15 s instead of never
_KEEPALIVES = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2,
               "keepalives_count": 3, "tcp_user_timeout": 15_000}
# maintenance_work_mem for an HNSW build: the whole graph in memory (pgvector builds many times
# slower once it spills), sized by the rows (~1.9 kB a row of 384 floats), within these MB
INDEX_BUILD_MEMORY_MB = (512, 4096)
# Filters that keep few rows are searched exactly (the rows through the btree, then sorted):
# a list of at most EXACT_PAGES pages (a hybrid query's scores for the other retriever's
# pages), or a tenant with at most EXACT_TENANT_ROWS rows and under EXACT_TENANT_SHARE of the
# model's rows (an index scan would read mostly other tenants' rows and give up after
# hnsw.max_scan_tuples, 20,000 by default, with fewer than k or none).
EXACT_PAGES = 2_000
EXACT_TENANT_ROWS = 50_000
EXACT_TENANT_SHARE = 0.05
# A longer page list (a view) is kept out of the statement: the index is asked for
# VIEW_FIRST_FETCH × k rows, then more, up to VIEW_MAX_FETCH, before the list goes to SQL.
VIEW_FIRST_FETCH = 4
VIEW_MAX_FETCH = 20_000
T = TypeVar("T")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")


def mask_dsn(dsn: str) -> str:
    """The DSN with its password replaced by ***, safe to print."""
    # Greedy up to the last "@" before any "?": a password may itself contain "@".
    masked = re.sub(r"(://[^:/@?]*:)([^?]*)(@)", r"\1***\3", dsn)
    masked = re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", masked,
                    flags=re.IGNORECASE)
    return masked


def scrub(text: str, dsn: str) -> str:
    """``text`` (a driver's error message) without the DSN's password: drivers quote the DSN
    they could not parse, and the message reaches logs, REST and MCP clients."""
    text = text.replace(dsn, mask_dsn(dsn))
    secrets = re.findall(r"://[^:/@?]*:([^?]*)@", dsn)
    secrets += re.findall(r"password\s*=\s*'((?:[^'\\]|\\.)*)'|password\s*=\s*(\S+)", dsn,
                          flags=re.IGNORECASE)
    for secret in secrets:
        for value in (secret if isinstance(secret, tuple) else (secret,)):
            if len(value) >= 3:
                text = text.replace(value, "***")
    return text


def connection_help(dsn: str, dsn_env: str, detail: str) -> str:
    """The message for a PostgreSQL that cannot be reached, with the ways to fix it."""
    detail = scrub(detail.strip(), dsn).rstrip(".")
    if "password authentication failed" in detail or "no password supplied" in detail:
        return (f"Cannot connect to PostgreSQL at {mask_dsn(dsn)}: {detail}. Fix: check the "
                f"user and password in {dsn_env}.")
    return (f"Cannot connect to PostgreSQL at {mask_dsn(dsn)}: {detail}. "
            f"Fix: start the server (`docker compose up -d` runs pgvector/pgvector:pg16), "
            f"or point {dsn_env} at a reachable database, "
            f"or use the embedded store (store.backend: embedded in mindgraph.yml).")


def index_build_memory(rows: int, dimension: int, m: int = StoreSettings.hnsw_m) -> str:
    """maintenance_work_mem for building an HNSW index over ``rows`` vectors of ``dimension``
    floats: the vectors plus the graph (~26 bytes a row per unit of ``m``: 2·m neighbours on
    the bottom layer), with a fifth to spare (565,000 chunks of 100,000 notes need ~1.3 GB
    at m=16, more than a fixed 512 MB)."""
    low, high = INDEX_BUILD_MEMORY_MB
    need = rows * (dimension * 4 + 26 * m) * 1.2 / 2**20
    return f"{int(min(max(need, low), high))}MB"


def _duration(seconds: float) -> str:
    """"60 min", "2 s": a wait, for messages."""
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def _array(value: Any) -> np.ndarray:
    """A vector read back (pgvector's ``Vector`` when the column has no width) as float32."""
    return np.asarray(value.to_numpy() if hasattr(value, "to_numpy") else value,
                      dtype=np.float32)


def _version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3])


class PgVectorStore:
    """Chunk vectors in PostgreSQL with one HNSW cosine index per model_version."""

    remote = True      # queries wait on the server: retrieval overlaps them with keywords

    def __init__(self, dsn: str, *, table: str = "mindgraph_sections", tenant: str = "default",
                 ef_search: int = StoreSettings.ef_search,
                 m: int = StoreSettings.hnsw_m,
                 ef_construction: int = StoreSettings.hnsw_ef_construction,
                 index_type: str = StoreSettings.index_type,
                 dsn_env: str = "MINDGRAPH_PG_DSN", connect_timeout: int = 5,
                 rebuild_wait_s: float = StoreSettings.rebuild_wait_s):
        if not _IDENT.match(table):
            raise StoreError(f"Table name {table!r} is not a plain identifier; use letters, "
                             f"digits and _ in store.table.")
        self._dsn = dsn
        self._table = table
        self._tenant = tenant
        self._ef_search = int(ef_search)
        self._hnsw = pg_hnsw.HnswSettings(int(m), int(ef_construction), index_type)
        self._halfvec = True                 # the server's pgvector has halfvec (0.7+)
        self._dsn_env = dsn_env
        self._connect_timeout = connect_timeout
        self.rebuild_wait_s = rebuild_wait_s   # for another process's rebuild of an index
        self._conn: Any = None
        self._lock = threading.RLock()
        self._indexed: dict[str, int] = {}   # model_version → dimension, index known to exist
        # model_version → (the type its index was built with, when read): read again after
        # KIND_TTL_S, since another process may rebuild the index with another type
        self._kinds: dict[str, tuple[str, float]] = {}
        self._shares: dict[str, tuple[int, int]] = {}   # model → (this tenant's rows, all)

    @property
    def description(self) -> str:
        """"pgvector at <masked dsn> (table t, tenant x)"."""
        return f"pgvector at {mask_dsn(self._dsn)} (table {self._table}, tenant {self._tenant})"

    def repairs(self) -> list[str]:
        """None: PostgreSQL keeps its own files whole."""
        return []

    def index_warnings(self, model_version: str) -> list[str]:
        """Warnings about the model's HNSW index: built with other settings than configured
        (its reloptions; CREATE INDEX IF NOT EXISTS keeps an existing one), or larger than
        shared_buffers (each query then reads most of its pages from the OS)."""
        name = self._index_name(model_version)
        built, size = self._run(lambda conn: (pg_hnsw.index_settings(conn, name),
                                              pg_hnsw.footprint(conn, name, self._table)))
        warnings = [None if built is None else
                    pg_hnsw.mismatch_warning(name, model_version, built, self._wanted()),
                    None if size is None else pg_hnsw.buffers_warning(name, model_version, size)]
        return [w for w in warnings if w]

    def rebuild_index(self, model_version: str,
                      notice: Callable[[str], None] | None = None) -> str:
        """Build the model's HNSW index again with the configured settings (beside the old
        one, which answers queries until the swap); say what was done. While another process
        rebuilds the same index, this one says so through ``notice`` and waits for it, at most
        ``store.rebuild_wait_s``; when that one has just built it with these settings, it is
        not built a second time."""
        import psycopg

        name = self._index_name(model_version)

        def facts(conn: Any) -> tuple[Any, int | None, int]:
            rows = conn.execute(f"SELECT count(*) FROM {self._table} WHERE model_version = %s",
                                (model_version,)).fetchone()[0]
            return (pg_hnsw.index_settings(conn, name),
                    self._model_dimension(conn, model_version), int(rows))

        built, dimension, rows = self._run(facts)
        if dimension is None:
            return f"no vectors of {model_version} in {self.description}: no index to build"
        memory = index_build_memory(rows, dimension, self._hnsw.m)
        wanted = self._wanted()
        waiting = (f"another process is rebuilding index {name} of {model_version} in "
                   f"{self.description}; waiting for it to finish (at most "
                   f"{_duration(self.rebuild_wait_s)}, store.rebuild_wait_s)")
        try:
            with psycopg.connect(self._dsn, connect_timeout=self._connect_timeout,
                                 autocommit=True, **_KEEPALIVES) as conn:
                before = pg_hnsw.index_oid(conn, name)
                with pg_hnsw.rebuild_turn(conn, name, self.rebuild_wait_s,
                                          lambda: (notice or (lambda _: None))(waiting)) as waited:
                    now = pg_hnsw.index_settings(conn, name)
                    if waited and now == wanted and pg_hnsw.index_oid(conn, name) != before:
                        self._indexed[model_version] = dimension
                        self._kinds[model_version] = (wanted.kind, time.monotonic())
                        return (f"index {name} of {model_version} was rebuilt by the other "
                                f"process meanwhile, with {now}: not built again")
                    pg_hnsw.rebuild(conn, name, self._table, dimension, model_version,
                                    wanted, memory)
        except pg_hnsw.RebuildBusy:
            raise StoreError(
                f"{self.description}: another process has been rebuilding index {name} of "
                f"{model_version} for more than {_duration(self.rebuild_wait_s)}; let it "
                f"finish (or stop it; or wait longer: store.rebuild_wait_s), then run "
                f"`{pg_hnsw.REBUILD_COMMAND}` again if its settings are not the configured "
                f"{wanted}.") from None
        except psycopg.Error as exc:
            raise StoreError(f"{self.description}: rebuilding index {name} failed: "
                             f"{scrub(str(exc), self._dsn).strip()}") from exc
        self._indexed[model_version] = dimension
        self._kinds[model_version] = (wanted.kind, time.monotonic())
        before_settings = "none" if built is None else str(built)
        return (f"rebuilt pgvector index {name} of {model_version} over {rows} vectors with "
                f"{wanted} (was {before_settings})")

    def _wanted(self) -> pg_hnsw.HnswSettings:
        """The configured build settings, as vector where the server has no halfvec."""
        if self._hnsw.kind == "halfvec" and not self._halfvec:
            return pg_hnsw.HnswSettings(self._hnsw.m, self._hnsw.ef_construction, "vector")
        return self._hnsw

    # -- connection -------------------------------------------------------------------------

    def embed_lock(self, *, wait: bool = True, notice: Callable[[str], None] | None = None,
                   holder: str = "embed-run") -> Any:
        """A context manager holding this table and tenant's embed lock in the database (one
        embed at a time across workspaces; ``holder`` says who takes it: pg_embed_lock.py)."""
        from .pg_embed_lock import pg_embed_lock

        return pg_embed_lock(self._dsn, self._table, self._tenant, wait=wait, notice=notice,
                             holder=holder,
                             connect_timeout=self._connect_timeout,
                             where=f"PostgreSQL at {mask_dsn(self._dsn)}",
                             on_error=lambda exc: connection_help(self._dsn, self._dsn_env,
                                                                  str(exc)))

    def _connect(self) -> Any:
        import psycopg
        from pgvector.psycopg import register_vector

        try:
            conn = psycopg.connect(self._dsn, connect_timeout=self._connect_timeout,
                                   **_KEEPALIVES)
        except psycopg.Error as exc:
            raise StoreError(connection_help(self._dsn, self._dsn_env, str(exc))) from exc
        # two processes setting up one database at once must not race (a unique-violation on
        # pg_class for the second CREATE ... IF NOT EXISTS): one waits for the other
        lock = int(hashlib.sha256(f"mindgraph:{self._table}".encode()).hexdigest()[:15], 16)
        try:
            # set up only what is missing: a read replica (read-only) refuses even
            # CREATE ... IF NOT EXISTS, and serve processes may read from one
            if not self._schema_ready(conn):
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                register_vector(conn)
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
                    self._create_schema(conn)
            else:
                register_vector(conn)
            conn.execute(f"SET hnsw.ef_search = {self._ef_search}")
            version = conn.execute("SELECT extversion FROM pg_extension "
                                   "WHERE extname = 'vector'").fetchone()[0]
            self._halfvec = _version_tuple(version) >= (0, 7)
            if _version_tuple(version) >= (0, 8):
                # Filters (tenant, scope, page) are applied after the index scan; iterative
                # scans keep reading the graph until k rows pass them instead of coming up short.
                conn.execute("SET hnsw.iterative_scan = relaxed_order")
            conn.commit()
        except psycopg.Error as exc:
            conn.close()
            hint = ("Install pgvector on the server (the pgvector/pgvector:pg16 image has it) "
                    "or ask an administrator to run CREATE EXTENSION vector."
                    if "vector" in str(exc) else "Check the database user's privileges.")
            raise StoreError(f"PostgreSQL at {mask_dsn(self._dsn)} is reachable but the "
                             f"vector schema could not be set up: "
                             f"{scrub(str(exc), self._dsn).strip().rstrip('.')}. {hint}") \
                from exc
        return conn

    def _run(self, work: Callable[[Any], T]) -> T:
        """Run ``work(conn)`` in one transaction, reconnecting once if the connection dropped.

        Every operation of this store is idempotent, so running it again after a dropped
        connection (server restart, idle timeout) is safe.
        """
        import psycopg

        with self._lock:
            for attempt in (1, 2):
                if self._conn is None or self._conn.closed or self._conn.broken:
                    self._conn = self._connect()
                try:
                    with self._conn.transaction():
                        return work(self._conn)
                except psycopg.OperationalError as exc:
                    broken = self._conn.broken or self._conn.closed
                    self._conn.close()
                    self._conn = None
                    if attempt == 1 and broken:
                        continue
                    raise StoreError(connection_help(self._dsn, self._dsn_env,
                                                     str(exc))) from exc
                except psycopg.Error as exc:
                    raise StoreError(f"{self.description}: {scrub(str(exc), self._dsn)}") \
                        from exc
        raise AssertionError("unreachable")

    def _schema_ready(self, conn: Any) -> bool:
        """The vector extension, the table and its page index all exist already."""
        with conn.transaction():
            return bool(conn.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') "
                "AND to_regclass(%s) IS NOT NULL AND to_regclass(%s) IS NOT NULL",
                (self._table, f"{self._table}_model_page")).fetchone()[0])

    def _create_schema(self, conn: Any) -> None:
        t = self._table
        conn.execute(f"""
            CREATE TABLE IF NOT EXISTS {t} (
                id bigserial PRIMARY KEY,
                tenant text NOT NULL,
                scope text NOT NULL DEFAULT '',
                page text NOT NULL,
                chunk_id text NOT NULL,
                section_id text NOT NULL,
                model_version text NOT NULL,
                content_hash text NOT NULL,
                dimension integer NOT NULL,
                embedding vector NOT NULL,
                updated_at timestamptz NOT NULL DEFAULT now(),
                CONSTRAINT {t}_key UNIQUE (tenant, page, chunk_id, model_version),
                CONSTRAINT {t}_width CHECK (vector_dims(embedding) = dimension)
            )""")
        conn.execute(f"CREATE INDEX IF NOT EXISTS {t}_model_page "
                     f"ON {t} (model_version, tenant, page)")

    def _index_name(self, model_version: str) -> str:
        digest = hashlib.sha256(model_version.encode("utf-8")).hexdigest()[:12]
        return f"{self._table}_hnsw_{digest}"

    def _model_dimension(self, conn: Any, model_version: str) -> int | None:
        row = conn.execute(f"SELECT dimension FROM {self._table} WHERE model_version = %s "
                           f"LIMIT 1", (model_version,)).fetchone()
        return int(row[0]) if row else None

    def _ensure_index(self, conn: Any, model_version: str, dimension: int) -> None:
        if self._indexed.get(model_version) == dimension:
            return
        from psycopg import sql

        rows = conn.execute(f"SELECT count(*) FROM {self._table} WHERE model_version = %s",
                            (model_version,)).fetchone()[0]
        memory = index_build_memory(rows, dimension, self._hnsw.m)
        conn.execute(f"SET LOCAL maintenance_work_mem = '{memory}'")
        conn.execute(pg_hnsw.create_statement(self._index_name(model_version), self._table,
                                              dimension, model_version, self._wanted()))
        self._kinds.pop(model_version, None)    # IF NOT EXISTS may have kept another type
        # Fresh statistics, so the planner sees how many rows the model has and prefers the
        # HNSW index over scanning the btree and sorting every distance.
        conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(self._table)))
        self._indexed[model_version] = dimension

    # -- contract ---------------------------------------------------------------------------

    def upsert(self, model_version: str, records: Sequence[VectorRecord]) -> int:
        """COPY into a temp table, then upsert; builds the model's index on first use."""
        if not records:
            return 0
        matrix = prepared_matrix(records, model_version, self.description)
        dimension = int(matrix.shape[1])

        def work(conn: Any) -> int:
            known = self._model_dimension(conn, model_version)
            if known is not None and known != dimension:
                raise StoreError(f"{self.description}: {model_version} holds vectors of "
                                 f"{known} dimensions, not {dimension}. A model_version "
                                 f"must name its dimension.")
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS _mg_stage (scope text, page text, "
                         "chunk_id text, section_id text, content_hash text, "
                         "embedding vector) ON COMMIT DELETE ROWS")
            with conn.cursor() as cur:
                with cur.copy("COPY _mg_stage (scope, page, chunk_id, section_id, "
                              "content_hash, embedding) FROM STDIN WITH (FORMAT BINARY)") as copy:
                    copy.set_types(["text", "text", "text", "text", "text", "vector"])
                    for r, vec in zip(records, matrix):
                        copy.write_row((r.scope, r.page, r.chunk_id, r.section_id,
                                        r.content_hash, vec))
            conn.execute(f"""
                INSERT INTO {self._table} (tenant, scope, page, chunk_id, section_id,
                                           model_version, content_hash, dimension, embedding)
                SELECT %s, scope, page, chunk_id, section_id, %s, content_hash, %s, embedding
                FROM _mg_stage
                ON CONFLICT (tenant, page, chunk_id, model_version) DO UPDATE SET
                    scope = EXCLUDED.scope, section_id = EXCLUDED.section_id,
                    content_hash = EXCLUDED.content_hash, embedding = EXCLUDED.embedding,
                    updated_at = now()""", (self._tenant, model_version, dimension))
            self._ensure_index(conn, model_version, dimension)
            counted = self._shares.get(model_version)
            if counted is not None and counted[0] <= EXACT_TENANT_ROWS:
                del self._shares[model_version]    # may no longer be few: count again
            return len(records)

        return self._run(work)

    def delete(self, page: str, chunk_ids: Collection[str] | None = None, *,
               model_version: str | None = None) -> int:
        """Remove a page's chunks of one model or of every model."""
        where = ["tenant = %s", "page = %s"]
        params: list[Any] = [self._tenant, page]
        if chunk_ids is not None:
            if not chunk_ids:
                return 0
            where.append("chunk_id = ANY(%s)")
            params.append(list(chunk_ids))
        if model_version is not None:
            where.append("model_version = %s")
            params.append(model_version)
        statement = f"DELETE FROM {self._table} WHERE {' AND '.join(where)}"
        self._shares.clear()
        return self._run(lambda conn: int(conn.execute(statement, params).rowcount))

    def move_chunks(self, model_version: str, moves: Sequence[ChunkMove]) -> int:
        """Give stored chunks to another page: their rows change page and hash, in one
        transaction (a row already at the new name is replaced)."""
        if not moves:
            return 0
        key = "tenant = %s AND page = %s AND chunk_id = %s AND model_version = %s"

        def work(conn: Any) -> int:
            moved = 0
            with conn.cursor() as cur:
                for m in moves:
                    cur.execute(f"DELETE FROM {self._table} WHERE {key}",
                                (self._tenant, m.new_page, m.chunk_id, model_version))
                    cur.execute(f"UPDATE {self._table} SET page = %s, content_hash = %s "
                                f"WHERE {key}", (m.new_page, m.content_hash, self._tenant,
                                                 m.old_page, m.chunk_id, model_version))
                    moved += cur.rowcount
            return moved

        return self._run(work)

    def _kind(self, conn: Any, model_version: str) -> str:
        """The type the model's index casts to (read once; "vector" when it has none)."""
        known = self._kinds.get(model_version)
        now = time.monotonic()
        if known is not None and now - known[1] < KIND_TTL_S:
            return known[0]
        built = pg_hnsw.index_settings(conn, self._index_name(model_version))
        kind = "vector" if built is None else built.kind
        self._kinds[model_version] = (kind, now)
        return kind

    def query_sql(self, model_version: str, dimension: int, *, scopes: bool = False,
                  pages: bool = False, exact: bool = False, kind: str = "vector") -> Any:
        """The top-k statement: the cast and predicate match the model's partial HNSW index
        (``kind``: the type it was built with; a halfvec index's top-k is re-scored at full
        precision).

        ``exact``: the rows passing the filters first (through the (model_version, tenant,
        page) btree), then every distance sorted: exact, for filters that keep few rows."""
        from psycopg import sql

        filters = [sql.SQL("model_version = {}").format(sql.Literal(model_version)),
                   sql.SQL("tenant = %(tenant)s")]
        if scopes:
            filters.append(sql.SQL("scope = ANY(%(scopes)s)"))
        if pages:
            filters.append(sql.SQL("page = ANY(%(pages)s)"))
        cast = sql.SQL("embedding::vector({})").format(sql.Literal(dimension))
        distance = sql.SQL("{cast} <=> %(q)s::vector({dim})").format(
            cast=cast, dim=sql.Literal(dimension))
        where = sql.SQL(" AND ").join(filters)
        table = sql.Identifier(self._table)
        if exact:    # a materialized CTE is an optimisation fence: the index cannot order it
            return sql.SQL(
                "WITH kept AS MATERIALIZED (SELECT page, chunk_id, section_id, scope, "
                "{distance} AS distance FROM {table} WHERE {where}) "
                "SELECT * FROM kept ORDER BY distance LIMIT %(k)s").format(
                    distance=distance, table=table, where=where)
        if kind == "halfvec":
            near = sql.SQL("embedding::halfvec({dim}) <=> %(q)s::halfvec({dim})").format(
                dim=sql.Literal(dimension))
            return sql.SQL(
                "SELECT page, chunk_id, section_id, scope, {distance} AS distance FROM "
                "(SELECT page, chunk_id, section_id, scope, embedding FROM {table} "
                "WHERE {where} ORDER BY {near} LIMIT %(k)s) AS near "
                "ORDER BY distance").format(distance=distance, near=near, table=table,
                                            where=where)
        return sql.SQL(
            "SELECT page, chunk_id, section_id, scope, {distance} AS distance FROM {table} "
            "WHERE {where} ORDER BY {distance} LIMIT %(k)s").format(
                distance=distance, table=table, where=where)

    def _few_rows(self, conn: Any, model_version: str) -> bool:
        """True when this tenant holds a small share of the model's rows (counted once per
        store; writes through this store count again): such a tenant is searched exactly,
        since an index scan over every tenant's rows would mostly read other tenants'."""
        counted = self._shares.get(model_version)
        if counted is None:
            row = conn.execute(
                f"SELECT count(*) FILTER (WHERE tenant = %s), count(*) FROM {self._table} "
                f"WHERE model_version = %s", (self._tenant, model_version)).fetchone()
            self._shares[model_version] = counted = (int(row[0]), int(row[1]))
        mine, every = counted
        return mine <= EXACT_TENANT_ROWS and mine < EXACT_TENANT_SHARE * every

    def _view_rows(self, conn: Any, model_version: str, dimension: int,
                   params: dict[str, Any], view: set[str], scoped: bool) -> list[Any] | None:
        """The top-k inside a long page list (a scoped identity's view), or None: the index
        is asked for the nearest rows without the list and they are kept in Python, asking
        for more (by the share kept) until k are in the view. With the list in the
        statement PostgreSQL estimated each of its pages while planning: 124 ms of planning
        for 3,300 pages against 43 ms of execution (10,000 notes, load 26)."""
        k = params["k"]
        fetch = k * VIEW_FIRST_FETCH
        statement = self.query_sql(model_version, dimension, scopes=scoped,
                                   kind=self._kind(conn, model_version))
        while fetch <= VIEW_MAX_FETCH:
            rows = conn.execute(statement, {**params, "k": fetch}).fetchall()
            kept = sorted((r for r in rows if r[0] in view), key=lambda r: r[4])
            if len(kept) >= k:
                return kept[:k]
            if len(rows) < fetch:     # the scan stopped (or read every row): ask with the list
                return None
            fetch = max(fetch * 2, int(fetch * k / max(len(kept), 1) * 1.5))
        return None      # a view with little of the model's rows: the list goes to SQL

    def query(self, vector: np.ndarray, k: int, model_version: str, *,
              scopes: Collection[str] | None = None,
              pages: Collection[str] | None = None) -> list[VectorHit]:
        """Top-k by cosine distance: through the model's HNSW index (iterative scans skip rows
        the filters drop), or exactly when the filters keep few rows (a short page list, a
        small tenant); an index scan that comes back short of k (it stops after
        ``hnsw.max_scan_tuples`` rows the filters dropped) is answered exactly instead."""
        if k <= 0:
            return []

        def work(conn: Any) -> list[Any]:
            dimension = self._indexed.get(model_version) or \
                self._model_dimension(conn, model_version)
            if dimension is None:
                return []
            q = as_query_vector(vector, dimension, model_version, self.description)
            params: dict[str, Any] = {"tenant": self._tenant, "q": q, "k": int(k),
                                      "scopes": list(scopes or ()), "pages": list(pages or ())}
            shape = {"scopes": scopes is not None, "pages": pages is not None}
            exact = (pages is not None and len(pages) <= EXACT_PAGES) or \
                self._few_rows(conn, model_version)
            # a query that hangs must not hold a server's queries behind it (searches answer
            # from keywords meanwhile); index builds in `embed` are not bounded this way
            conn.execute(f"SET LOCAL statement_timeout = {QUERY_TIMEOUT_MS}")
            if pages is not None and not exact:
                rows = self._view_rows(conn, model_version, dimension, params, set(pages),
                                       scopes is not None)
                if rows is not None:
                    return rows
            rows = conn.execute(self.query_sql(model_version, dimension, exact=exact,
                                               kind=self._kind(conn, model_version), **shape),
                                params).fetchall()
            if len(rows) < k and not exact:
                rows = max(rows, conn.execute(self.query_sql(
                    model_version, dimension, exact=True, **shape), params).fetchall(), key=len)
            return rows

        rows = self._run(work)
        hits = [VectorHit(page=r[0], chunk_id=r[1], section_id=r[2], scope=r[3],
                          score=1.0 - float(r[4])) for r in rows]
        hits.sort(key=lambda h: (-h.score, h.page, h.chunk_id))
        return hits

    def hashes(self, model_version: str) -> dict[str, dict[str, str]]:
        """page → chunk_id → content hash, for one model."""
        rows = self._run(lambda conn: conn.execute(
            f"SELECT page, chunk_id, content_hash FROM {self._table} "
            f"WHERE tenant = %s AND model_version = %s",
            (self._tenant, model_version)).fetchall())
        out: dict[str, dict[str, str]] = {}
        for page, chunk_id, digest in rows:
            out.setdefault(page, {})[chunk_id] = digest
        return out

    def count(self, model_version: str | None = None) -> int:
        """Stored chunks of one model, or of all."""
        if model_version is None:
            statement = f"SELECT count(*) FROM {self._table} WHERE tenant = %s"
            params: tuple[str, ...] = (self._tenant,)
        else:
            statement = (f"SELECT count(*) FROM {self._table} WHERE tenant = %s "
                         f"AND model_version = %s")
            params = (self._tenant, model_version)
        return self._run(lambda conn: int(conn.execute(statement, params).fetchone()[0]))

    def count_within(self, model_version: str, *, scopes: Collection[str] | None = None,
                     pages: Collection[str] | None = None) -> int:
        """Stored chunks of one model in this tenant inside the filters (as ``query``
        applies them)."""
        statement = (f"SELECT count(*) FROM {self._table} WHERE tenant = %(tenant)s "
                     f"AND model_version = %(model)s"
                     + (" AND scope = ANY(%(scopes)s)" if scopes is not None else "")
                     + (" AND page = ANY(%(pages)s)" if pages is not None else ""))
        params = {"tenant": self._tenant, "model": model_version,
                  "scopes": list(scopes or ()), "pages": list(pages or ())}
        return self._run(lambda conn: int(conn.execute(statement, params).fetchone()[0]))

    def model_versions(self) -> dict[str, int]:
        """Every model with stored vectors in this tenant."""
        rows = self._run(lambda conn: conn.execute(
            f"SELECT model_version, count(*) FROM {self._table} WHERE tenant = %s "
            f"GROUP BY model_version", (self._tenant,)).fetchall())
        return {str(name): int(n) for name, n in rows}

    def drop_model(self, model_version: str) -> int:
        """Delete a model's rows in this tenant; its index goes when no tenant uses it."""
        from psycopg import sql

        def work(conn: Any) -> int:
            cur = conn.execute(f"DELETE FROM {self._table} WHERE tenant = %s AND "
                               f"model_version = %s", (self._tenant, model_version))
            self._shares.pop(model_version, None)
            if self._model_dimension(conn, model_version) is None:
                conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(
                    sql.Identifier(self._index_name(model_version))))
                self._indexed.pop(model_version, None)
                self._kinds.pop(model_version, None)
            return int(cur.rowcount)

        return self._run(work)

    def records(self, model_version: str,
                batch_size: int = 2000) -> Iterator[list[VectorRecord]]:
        """The model's records in batches, in (page, chunk_id) order, one statement each."""
        after: tuple[str, str] | None = None
        while True:
            where = "" if after is None else "AND (page, chunk_id) > (%s, %s)"
            statement = (f"SELECT page, chunk_id, section_id, content_hash, scope, embedding "
                         f"FROM {self._table} WHERE tenant = %s AND model_version = %s "
                         f"{where} ORDER BY page, chunk_id LIMIT %s")
            params = (self._tenant, model_version, *(after or ()), batch_size)
            rows = self._run(lambda conn: conn.execute(statement, params).fetchall())
            if not rows:
                return
            yield [VectorRecord(page=r[0], chunk_id=r[1], section_id=r[2], content_hash=r[3],
                                scope=r[4], vector=_array(r[5]))
                   for r in rows]
            after = (rows[-1][0], rows[-1][1])

    def flush(self) -> None:
        """Nothing to do: every call commits."""

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> "PgVectorStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def drop_table(self) -> None:
        """Remove the whole table and its indexes (every tenant, every model)."""
        self._run(lambda conn: conn.execute(f"DROP TABLE IF EXISTS {self._table}"))
        self._indexed.clear()
        self._shares.clear()
        self._kinds.clear()
