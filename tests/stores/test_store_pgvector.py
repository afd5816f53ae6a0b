"""pgvector specifics, on a real PostgreSQL: schema, HNSW index, connection handling."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest

from mindgraph.config import StoreSettings
from mindgraph.errors import StoreError
from mindgraph.stores.base import VectorRecord
from mindgraph.stores.pgvector import PgVectorStore, mask_dsn

pytestmark = pytest.mark.pg

MODEL = "test:pg:16"


def records(n: int, dim: int = 16, seed: int = 1, page: str = "p") -> list[VectorRecord]:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return [VectorRecord(page=f"{page}{i}.md", chunk_id="lead", section_id="lead",
                         content_hash=str(i), vector=m[i]) for i in range(n)]


def test_mask_dsn_hides_passwords_in_both_forms():
    assert mask_dsn("postgresql://me:s3cr@t@db.example:5432/x") == \
        "postgresql://me:***@db.example:5432/x"
    assert mask_dsn("host=db user=me password=hunter2 dbname=x") == \
        "host=db user=me password=*** dbname=x"
    assert mask_dsn("host=db password='a b' dbname=x") == "host=db password=*** dbname=x"
    assert mask_dsn("postgresql://me@db/x") == "postgresql://me@db/x"


def test_a_dsn_the_driver_cannot_parse_never_shows_its_password():
    for dsn in ("mysql://admin:S3cretPassw0rd@db.example/x",
                "host=db password='S3cret Passw0rd' dbname=x port=notaport"):
        with pytest.raises(StoreError) as caught:
            PgVectorStore(dsn, connect_timeout=2).count()
        assert "S3cret" not in str(caught.value), str(caught.value)


def test_unreachable_server_names_masked_dsn_and_fix():
    store = PgVectorStore("postgresql://me:topsecret@127.0.0.1:1/nothing", dsn_env="MY_PG",
                          connect_timeout=2)
    with pytest.raises(StoreError) as caught:
        store.count()
    message = str(caught.value)
    assert "postgresql://me:***@127.0.0.1:1/nothing" in message
    assert "topsecret" not in message
    assert "MY_PG" in message and "docker compose up -d" in message
    assert "store.backend: embedded" in message


def test_bad_table_name_is_refused(pg_dsn):
    with pytest.raises(StoreError, match="store.table"):
        PgVectorStore(pg_dsn, table="x; drop table y")


def test_schema_has_unique_key_and_a_partial_hnsw_index_per_model(pg_store, pg_dsn, pg_table):
    pg_store.upsert(MODEL, records(5))
    pg_store.upsert("test:pg:8", records(3, dim=8))
    with psycopg.connect(pg_dsn) as conn:
        indexes = dict(conn.execute("SELECT indexname, indexdef FROM pg_indexes "
                                    "WHERE tablename = %s", (pg_table,)).fetchall())
        cons = conn.execute("SELECT pg_get_constraintdef(oid) FROM pg_constraint "
                            "WHERE conrelid = %s::regclass AND contype = 'u'",
                            (pg_table,)).fetchall()
        columns = {r[0] for r in conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s",
            (pg_table,)).fetchall()}
    assert cons == [("UNIQUE (tenant, page, chunk_id, model_version)",)]
    assert {"tenant", "scope", "section_id", "content_hash", "embedding"} <= columns
    hnsw = [d for d in indexes.values() if "USING hnsw" in d]
    assert len(hnsw) == 2
    by_model = {m: next(d for d in hnsw if f"'{m}'" in d) for m in (MODEL, "test:pg:8")}
    for model, width in ((MODEL, 16), ("test:pg:8", 8)):
        definition = by_model[model]
        # 16-bit floats by default (store.index_type: halfvec)
        assert f"::halfvec({width})" in definition and "halfvec_cosine_ops" in definition
        # the shipped build values (ef_construction 256: bench_pg_hybrid.py --recall-only)
        assert "m='16'" in definition and "ef_construction='256'" in definition
    pg_store.drop_model("test:pg:8")
    with psycopg.connect(pg_dsn) as conn:
        left = conn.execute("SELECT count(*) FROM pg_indexes WHERE tablename = %s AND "
                            "indexdef LIKE '%%USING hnsw%%'", (pg_table,)).fetchone()[0]
    assert left == 1


def test_query_statement_uses_the_models_hnsw_index(pg_store, pg_dsn):
    pg_store.upsert(MODEL, records(3000))
    statement = pg_store.query_sql(MODEL, 16, scopes=True, kind="halfvec")
    q = np.ones(16, dtype=np.float32)
    with psycopg.connect(pg_dsn) as conn:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        # The planner can only pick the index when the query's cast and predicate match the
        # partial index definition (below ~2,000 rows it rightly prefers an exact sort).
        plan = "\n".join(r[0] for r in conn.execute(
            psycopg.sql.SQL("EXPLAIN ") + statement,
            {"tenant": "default", "q": q, "k": 10, "scopes": [""]}).fetchall())
    assert f"Index Scan using {pg_store._index_name(MODEL)}" in plan, plan


def test_ef_search_is_set_on_the_connection(pg_dsn, pg_table):
    store = PgVectorStore(pg_dsn, table=pg_table, ef_search=77)
    try:
        store.count()
        assert store._conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "77"
    finally:
        store.drop_table()
        store.close()


def test_the_largest_ef_search_config_allows_holds_after_pgvector_loads(pg_store, pg_dsn,
                                                                        pg_table):
    """store.ef_search's bound (config.py) is pgvector's own: 1000 survives the library's load
    at the first vector query (a larger value is reset to pgvector's default 40 there)."""
    pg_store.upsert(MODEL, records(5))
    store = PgVectorStore(pg_dsn, table=pg_table, ef_search=1000)
    try:
        assert store.query(records(1)[0].vector, 1, MODEL)
        assert store._conn.execute("SHOW hnsw.ef_search").fetchone()[0] == "1000"
    finally:
        store.close()


def test_reconnects_after_the_connection_is_killed(pg_store, pg_dsn):
    pg_store.upsert(MODEL, records(3))
    pid = pg_store._conn.info.backend_pid
    with psycopg.connect(pg_dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert pg_store.count(MODEL) == 3
    assert pg_store._conn.info.backend_pid != pid


def test_bulk_upsert_of_many_rows_in_one_call(pg_store):
    assert pg_store.upsert(MODEL, records(2000, seed=3)) == 2000
    assert pg_store.count(MODEL) == 2000
    # Re-upserting the same keys updates in place.
    changed = [VectorRecord(r.page, r.chunk_id, r.section_id, "new", r.vector)
               for r in records(2000, seed=4)]
    pg_store.upsert(MODEL, changed)
    hashes = pg_store.hashes(MODEL)
    assert len(hashes) == 2000 and {h["lead"] for h in hashes.values()} == {"new"}


def test_a_wrong_password_is_told_to_check_the_credentials_not_to_start_a_server():
    from mindgraph.stores.pgvector import connection_help

    message = connection_help("postgresql://me:hunter22@db/x", "MY_PG",
                              'connection failed: FATAL:  password authentication failed for '
                              'user "me".')
    assert "check the user and password in MY_PG" in message
    assert "docker compose" not in message and "hunter22" not in message


def test_a_store_opened_without_ef_search_uses_the_configured_default(pg_dsn, pg_table):
    # the class defaulted to 40 while store.ef_search defaulted to 100: a store opened in
    # code (benches, tools) searched a smaller candidate list than `serve` and lost recall
    store = PgVectorStore(pg_dsn, table=pg_table)
    try:
        store.count()
        assert store._conn.execute("SHOW hnsw.ef_search").fetchone()[0] == \
            str(StoreSettings().ef_search)
    finally:
        store.drop_table()
        store.close()


def around(centre: np.ndarray, n: int, page: str, seed: int) -> list[VectorRecord]:
    """``n`` records close to ``centre`` (cosine ~0.95), one page each."""
    rng = np.random.default_rng(seed)
    m = centre + 0.3 * rng.standard_normal((n, centre.shape[0])).astype(np.float32)
    return [VectorRecord(f"{page}{i}.md", "lead", "lead", str(i), m[i]) for i in range(n)]


AXIS = np.eye(8, dtype=np.float32)[0]      # the query of the filtered-search tests


def tenants(pg_dsn: str, pg_table: str, *names: str) -> list[PgVectorStore]:
    """One store a tenant, all on one table."""
    return [PgVectorStore(pg_dsn, table=pg_table, tenant=name, ef_search=40) for name in names]


def exact_top(rows: list[VectorRecord], q: np.ndarray, k: int) -> list[str]:
    m = np.stack([r.vector / np.linalg.norm(r.vector) for r in rows])
    return [rows[i].page for i in np.argsort(-(m @ (q / np.linalg.norm(q))))[:k]]


def test_a_tenant_far_from_the_query_among_others_near_it_gets_its_exact_top_k(pg_dsn,
                                                                                pg_table):
    # Another tenant's 4,000 rows lie around the query, this tenant's 1,500 on the far side:
    # the HNSW scan reads the near rows first, drops them (tenant filter) and gives up after
    # hnsw.max_scan_tuples (20,000 by default; 1,000 here for the same effect at this size):
    # the answer had no rows at all. It is now answered exactly.
    q = AXIS
    near, far = around(q, 4000, "near", seed=1), around(-q, 1500, "far", seed=2)
    others, mine = tenants(pg_dsn, pg_table, "others", "mine")
    try:
        others.upsert("test:pg:8", near)
        mine.upsert("test:pg:8", far)
        mine._run(lambda conn: conn.execute("SET hnsw.max_scan_tuples = 1000"))
        for k in (10, 80):
            hits = mine.query(q, k, "test:pg:8")
            assert [h.page for h in hits] == exact_top(far, q, k)
        assert [h.page for h in others.query(q, 10, "test:pg:8")] == exact_top(near, q, 10)
    finally:
        mine.close()
        others.drop_table()
        others.close()


def test_a_small_tenant_and_a_short_page_list_are_searched_exactly(pg_dsn, pg_table):
    q = AXIS
    near, few = around(q, 3000, "near", seed=3), around(-q, 100, "few", seed=4)
    big, small = tenants(pg_dsn, pg_table, "big", "small")
    try:
        big.upsert("test:pg:8", near + few)
        small.upsert("test:pg:8", few)
        shape = {"tenant": "small", "q": q, "k": 10, "scopes": [], "pages": []}
        with psycopg.connect(pg_dsn) as conn:
            from pgvector.psycopg import register_vector

            register_vector(conn)
            plan = "\n".join(r[0] for r in conn.execute(
                psycopg.sql.SQL("EXPLAIN ") + small.query_sql("test:pg:8", 8, exact=True),
                shape).fetchall())
        assert "hnsw" not in plan and "_model_page" in plan, plan
        assert [h.page for h in small.query(q, 10, "test:pg:8")] == exact_top(few, q, 10)
        assert small._few_rows(small._conn, "test:pg:8")      # 100 of 3,200 rows
        pages = [r.page for r in few[:30]]
        hits = big.query(q, 100_000, "test:pg:8", pages=pages)
        assert [h.page for h in hits] == exact_top(few[:30], q, 30)
    finally:
        small.close()
        big.drop_table()
        big.close()


def test_the_index_build_memory_grows_with_the_rows_it_must_hold():
    from mindgraph.stores.pgvector import index_build_memory

    # a fixed 512 MB spilled the HNSW build of 100,000 notes' 565,000 chunks to disk
    assert index_build_memory(1000, 384) == "512MB"
    assert 1200 <= int(index_build_memory(565_000, 384)[:-2]) <= 1400
    assert index_build_memory(10_000_000, 1536) == "4096MB"
    # a wider graph (store.hnsw_m) needs more: m=32 holds twice the neighbours a row
    assert int(index_build_memory(565_000, 384, m=32)[:-2]) - \
        int(index_build_memory(565_000, 384)[:-2]) >= 250


def test_the_index_footprint_is_read_from_the_server(pg_store):
    from mindgraph.stores import pg_hnsw

    pg_store.upsert(MODEL, records(300))
    name = pg_store._index_name(MODEL)
    size = pg_store._run(lambda conn: pg_hnsw.footprint(conn, name, pg_store._table))
    with psycopg.connect(pg_store._dsn, autocommit=True) as conn:
        index, table = conn.execute("SELECT pg_relation_size(%s::regclass), "
                                    "pg_relation_size(%s::regclass)",
                                    (name, pg_store._table)).fetchone()
        buffers = conn.execute("SELECT pg_size_bytes(current_setting('shared_buffers'))"
                               ).fetchone()[0]
    assert size == pg_hnsw.Footprint(index, table, buffers) and index > 0
    assert pg_store._run(lambda conn: pg_hnsw.footprint(conn, "no_such_index",
                                                        pg_store._table)) is None


def test_the_buffers_warning_names_the_sizes_and_a_setting_that_holds_both():
    from mindgraph.stores.pg_hnsw import Footprint, buffers_warning

    mb = 2**20
    # 100,000 notes: an 870 MB index and an 894 MB table against pgvector's default 128 MB
    warning = buffers_warning("t_hnsw", "local:m:384", Footprint(870 * mb, 894 * mb, 128 * mb))
    assert "takes 870 MB, more than PostgreSQL's shared_buffers (128 MB)" in warning
    assert "Set shared_buffers to 1792 MB or more (the index and the table, 894 MB)" in warning
    assert "ALTER SYSTEM SET shared_buffers = '1792MB'" in warning
    assert buffers_warning("t", "m", Footprint(128 * mb, 894 * mb, 128 * mb)) is None
    assert buffers_warning("t", "m", Footprint(128 * mb + 1, 0, 128 * mb)) is not None


def test_a_long_view_is_searched_without_its_page_list_in_the_statement(pg_dsn, pg_table):
    # A scoped identity's view of 3,300 pages in the statement cost PostgreSQL 124 ms of
    # planning a query (it estimates every page) against 43 ms of execution: the nearest
    # rows are asked for without the list and kept in Python, the exact top-k of the view.
    q = AXIS
    rows = around(q, 3000, "p", seed=5) + around(-q, 2500, "far", seed=6)
    store = PgVectorStore(pg_dsn, table=pg_table, ef_search=100)
    sent: list[str] = []
    try:
        store.upsert("test:pg:8", rows)
        inside = rows[::2]                       # 2,750 pages: past EXACT_PAGES
        view = frozenset(r.page for r in inside)
        store.count()
        conn = store._conn
        original = conn.execute

        def recording(statement, params=None, **kwargs):
            sent.append(statement.as_string(conn) if hasattr(statement, "as_string")
                        else str(statement))
            return original(statement, params, **kwargs)

        conn.execute = recording       # the real connection, its statements written down
        for k in (10, 80):
            hits = store.query(q, k, "test:pg:8", pages=view)
            assert [h.page for h in hits] == exact_top(inside, q, k)
        assert sent and not any("page = ANY" in statement for statement in sent)
        # a view far from the query: the nearest rows hold too few of it, the list goes to SQL
        far = [r for r in inside if r.page.startswith("far")]
        hits = store.query(q, 10, "test:pg:8", pages=frozenset(r.page for r in far))
        assert [h.page for h in hits] == exact_top(far, q, 10)
    finally:
        store.drop_table()
        store.close()


def test_the_hnsw_index_is_built_with_the_configured_m_and_ef_construction(pg_dsn, pg_table,
                                                                            monkeypatch):
    # store.hnsw_m / store.hnsw_ef_construction reach the CREATE INDEX through the factory
    # (the build parameters decide the recall an ef_search can reach; they were constants)
    from mindgraph.config import settings_from_dict
    from mindgraph.stores import create_store

    monkeypatch.setenv("MG_TEST_PG", pg_dsn)
    settings = settings_from_dict({"store": {"backend": "pgvector", "dsn_env": "MG_TEST_PG",
                                             "table": pg_table, "hnsw_m": 24,
                                             "hnsw_ef_construction": 80}})
    store = create_store(settings)
    try:
        store.upsert(MODEL, records(50))
        (definition,) = store._run(lambda conn: conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s",
            (store._index_name(MODEL),)).fetchone())
        assert "m='24'" in definition and "ef_construction='80'" in definition, definition
        assert [h.page for h in store.query(records(50)[7].vector, 1, MODEL)] == ["p7.md"]
    finally:
        store.drop_table()
        store.close()


@pytest.mark.parametrize("values, key", [({"hnsw_m": 1}, "store.hnsw_m"),
                                         ({"hnsw_m": 32, "hnsw_ef_construction": 48},
                                          "store.hnsw_ef_construction")])
def test_hnsw_build_settings_outside_pgvectors_range_are_config_errors(values, key):
    from mindgraph.config import settings_from_dict
    from mindgraph.errors import ConfigError

    with pytest.raises(ConfigError, match=key.replace(".", r"\.") + "' must be between"):
        settings_from_dict({"store": {"backend": "pgvector", **values}})


def exact_scores(rows: list[VectorRecord], q: np.ndarray) -> dict[str, float]:
    unit = q / np.linalg.norm(q)
    return {r.page: float(r.vector @ unit / np.linalg.norm(r.vector)) for r in rows}


@pytest.mark.parametrize("index_type", ["halfvec", "vector"])
def test_either_index_type_answers_through_its_index_with_exact_cosines(pg_dsn, pg_table,
                                                                        index_type):
    """A halfvec index finds the top-k; the scores are the full-precision cosines, as the
    vector index's and the embedded store's are."""
    rows = records(3000, seed=4)
    store = PgVectorStore(pg_dsn, table=pg_table, ef_search=100, index_type=index_type)
    try:
        store.upsert(MODEL, rows)
        (definition,) = store._run(lambda conn: conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = %s",
            (store._index_name(MODEL),)).fetchone())
        assert f"{index_type}_cosine_ops" in definition
        q = records(1, seed=99)[0].vector
        plan = store._run(lambda conn: "\n".join(r[0] for r in conn.execute(
            psycopg.sql.SQL("EXPLAIN ") + store.query_sql(MODEL, 16, kind=index_type),
            {"tenant": "default", "q": q, "k": 10}).fetchall()))
        assert f"Index Scan using {store._index_name(MODEL)}" in plan, plan
        hits = store.query(q, 10, MODEL)
        truth = exact_scores(rows, q)
        for hit in hits:
            assert hit.score == pytest.approx(truth[hit.page], abs=1e-6)
        best = sorted(truth, key=truth.get, reverse=True)[:10]
        assert len(set(h.page for h in hits) & set(best)) >= 9
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    finally:
        store.drop_table()
        store.close()


def test_an_index_of_the_other_type_keeps_answering_until_it_is_rebuilt(pg_dsn, pg_table):
    """An index built as vector (before halfvec was the default) is still used by a store
    configured for halfvec: queries cast as the index was built, a warning names the
    settings and the fix, and --rebuild-index's rebuild makes it halfvec."""
    rows = records(3000, seed=5)
    old = PgVectorStore(pg_dsn, table=pg_table, index_type="vector")
    new = PgVectorStore(pg_dsn, table=pg_table)          # the default, halfvec
    try:
        old.upsert(MODEL, rows)
        q = rows[42].vector
        assert new.query(q, 1, MODEL)[0].page == "p42.md"
        assert new._kinds[MODEL][0] == "vector"
        (warning,) = new.index_warnings(MODEL)
        assert "was built with vector, m=16" in warning and "not the configured halfvec" \
            in warning and "store.index_type" in warning
        assert "mindgraph embed --rebuild-index" in warning
        said = new.rebuild_index(MODEL)
        assert "with halfvec, m=16, ef_construction=256 (was vector, m=16" in said
        assert new.index_warnings(MODEL) == []
        assert new.query(q, 1, MODEL)[0].page == "p42.md"
        # the old handle reads the type again once its cached one is older than KIND_TTL_S
        old._kinds[MODEL] = ("vector", 0.0)
        assert old.query(q, 1, MODEL)[0].page == "p42.md"
        assert old._kinds[MODEL][0] == "halfvec"
    finally:
        new.drop_table()
        old.close()
        new.close()


def test_a_model_wider_than_2000_dimensions_gets_a_halfvec_index(pg_store):
    """pgvector indexes vector up to 2,000 dimensions, halfvec up to 4,000: a 3,072-wide
    model (OpenAI's text-embedding-3-large) is searched through its index."""
    rows = records(20, dim=3072, seed=6)
    pg_store.upsert("test:wide:3072", rows)
    definition = pg_store._run(lambda conn: conn.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = %s",
        (pg_store._index_name("test:wide:3072"),)).fetchone())
    assert definition is not None and "halfvec(3072)" in definition[0]
    assert pg_store.query(rows[3].vector, 1, "test:wide:3072")[0].page == "p3.md"


def test_index_type_is_a_setting_with_two_values():
    from mindgraph.config import settings_from_dict
    from mindgraph.errors import ConfigError

    assert settings_from_dict({}).store.index_type == "halfvec"
    assert settings_from_dict({"store": {"index_type": "vector"}}).store.index_type == "vector"
    with pytest.raises(ConfigError, match="index_type"):
        settings_from_dict({"store": {"index_type": "float8"}})


def test_an_index_built_with_the_previous_defaults_keeps_answering_until_it_is_rebuilt(
        pg_dsn, pg_table):
    """A database indexed before ef_construction became 256 (halfvec, m 16,
    ef_construction 128): a store with today's defaults keeps using that index (CREATE INDEX
    IF NOT EXISTS leaves it, writes go into it), says how it was built and the command that
    migrates it, and `rebuild_index` (what `mindgraph embed --rebuild-index` calls) builds it
    again with 256 while the old one answers."""
    rows = records(3000, seed=7)
    old = PgVectorStore(pg_dsn, table=pg_table, ef_construction=128)
    new = PgVectorStore(pg_dsn, table=pg_table)                  # today's defaults
    try:
        assert (new._hnsw.m, new._hnsw.ef_construction, new._ef_search) == (16, 256, 800)
        old.upsert(MODEL, rows[:2000])
        new.upsert(MODEL, rows[2000:])                # into the old index, not a new one
        with psycopg.connect(pg_dsn) as conn:
            (definition,) = [d for (d,) in conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE tablename = %s AND indexdef LIKE "
                "'%%USING hnsw%%'", (pg_table,)).fetchall()]
        assert "ef_construction='128'" in definition
        for i in (7, 2500):
            assert new.query(rows[i].vector, 1, MODEL)[0].page == f"p{i}.md"
        (warning,) = new.index_warnings(MODEL)
        assert "was built with halfvec, m=16, ef_construction=128, not the configured " \
               "halfvec, m=16, ef_construction=256" in warning
        assert "mindgraph embed --rebuild-index" in warning
        said = new.rebuild_index(MODEL)
        assert said.startswith("rebuilt pgvector index ") and "over 3000 vectors with " \
            "halfvec, m=16, ef_construction=256 (was halfvec, m=16, ef_construction=128)" in said
        assert new.index_warnings(MODEL) == []
        for i in (7, 2500):
            assert new.query(rows[i].vector, 1, MODEL)[0].page == f"p{i}.md"
            assert old.query(rows[i].vector, 1, MODEL)[0].page == f"p{i}.md"
    finally:
        new.drop_table()
        old.close()
        new.close()
