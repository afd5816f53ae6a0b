"""The embedded store's HNSW settings side by side at a workspace's size: recall@10 against
exact search and the CPU a query costs, for each search width and over-fetch, over the
graph the store saved and over graphs built with other settings on the same rows.

    python bench/bench_ann_settings.py WORKSPACE                       # the saved graph
    python bench/bench_ann_settings.py WORKSPACE --builds 32:128:f16 16:256:f16 --ef 512 1024

WORKSPACE is one whose embedded store holds a model above stores/ann.py's EXACT_BELOW rows
(bench/bench_scale_query.py --workspace fills one with realistic vectors). Queries are, by
default, those bench_scale_query.py times there: "<heading> <title>" of random sections of
the workspace, embedded by MiniLM (``--queries-from claims``: SciFact's 300 claims and the
vault's 40 questions, bench_ann.query_vectors, which lie much nearer the realistic vectors'
SciFact sentences and are found far more easily). For each graph, search width (``--ef``) and over-fetch (``--fetch``:
candidates asked of the graph per hit wanted, re-scored exactly from the float32 rows, as
stores/ann.py does), and for k = 10 (a plain top-10) and k = 80 (the vector side of a hybrid
query) it prints recall@10 of the re-scored answer (ties with the exact 10th counted as found)
and the median and p95 CPU milliseconds of the graph search plus the re-scoring (one thread,
time.process_time). Exact search over every row is timed the same way. The load average is
printed with every figure: CPU time is what compares under load.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_ann import query_vectors, ties_found  # noqa: E402

from mindgraph.stores import ann  # noqa: E402
from mindgraph.stores.embedded import _Table  # noqa: E402


def load() -> float:
    return round(os.getloadavg()[0], 1)


def store_table(workspace: Path) -> tuple[Path, Any]:
    """(the model file, its table) of the largest model in the workspace's embedded store."""
    files = sorted((workspace / ".mindgraph").rglob("*.npz"), key=lambda p: p.stat().st_size)
    if not files:
        raise SystemExit(f"no embedded store in {workspace}/.mindgraph: run "
                         f"bench/bench_scale_query.py --workspace {workspace} first")
    table = _Table.from_file(files[-1])
    table.catch_up(files[-1])          # the entries its log holds beyond the file
    return files[-1], table


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def measure(graph: Any, x: np.ndarray, queries: np.ndarray, truth: list[Any], ef: int,
            fetch: int, k: int, floor: int) -> dict[str, Any]:
    """Recall@10 and CPU ms of the graph's ``max(fetch * k, floor)`` candidates re-scored
    exactly."""
    cpu, found = [], 0
    count = max(fetch * k, floor)
    for q, exact in zip(queries, truth):
        started = time.process_time()
        graph.expansion_search = max(ef, count)
        keys = np.asarray(graph.search(q, count, threads=1).keys, dtype=np.int64)
        scores = ann.cosines(x[keys], q)
        top = keys[np.argsort(-scores)[:10]]
        cpu.append((time.process_time() - started) * 1000)
        found += ties_found(x, q, exact, top)
    return {"ef": ef, "fetch": fetch, "floor": floor, "k": k, "recall_at_10": round(found / (10 * len(queries)),
                                                                   4),
            "cpu_median_ms": round(statistics.median(cpu), 2),
            "cpu_p95_ms": round(percentile(cpu, 95), 2), "load": load()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--builds", nargs="*", default=[],
                        help="more graphs over the same rows, CONNECTIVITY:EXPANSION_ADD:DTYPE "
                             "(dtype f16, f32, i8, bf16)")
    parser.add_argument("--skip-saved", action="store_true",
                        help="only the --builds graphs, not the graph the store saved")
    parser.add_argument("--ef", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--fetch", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--k", type=int, nargs="+", default=[10, 80])
    parser.add_argument("--floor", type=int, nargs="+", default=[0],
                        help="at least this many candidates whatever k (0: fetch * k)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--queries-from", choices=("workspace", "claims"), default="workspace")
    args = parser.parse_args()

    path, table = store_table(args.workspace)
    x = table.vectors[:len(table)]
    if args.queries_from == "claims":
        queries = query_vectors()[:args.queries]
    else:
        from bench_scale_query import fresh_queries

        from mindgraph.providers.embedding.local import LocalMiniLMProvider

        texts = fresh_queries(args.workspace, args.queries, seed=11)
        queries = LocalMiniLMProvider().embed_queries(texts)
    truth, exact_cpu = [], []
    for q in queries:
        started = time.process_time()
        scores = ann.cosines(x, q)
        top = np.argpartition(-scores, 10)[:10]
        exact_cpu.append((time.process_time() - started) * 1000)
        truth.append((set(top.tolist()), float(scores[top].min())))
    print(json.dumps({"rows": len(table), "model": table.model_version,
                      "queries": len(queries), "exact_cpu_median_ms":
                      round(statistics.median(exact_cpu), 2), "load": load()}), flush=True)
    graphs: list[tuple[str, Any]] = []
    if not args.skip_saved:
        saved = ann.AnnIndex.load(ann.index_path(path), table.dimension)
        if saved is None:
            raise SystemExit(f"no usable saved graph beside {path}")
        graphs.append((f"saved ({saved.settings()})", saved._index))
    for spec in args.builds:
        connectivity, expansion_add, dtype = spec.split(":")
        Index = ann.usearch_index()
        graph = Index(ndim=table.dimension, metric="cos", dtype=dtype,
                      connectivity=int(connectivity), expansion_add=int(expansion_add))
        started, cpu_started = time.perf_counter(), time.process_time()
        graph.add(np.arange(len(table), dtype=np.uint64), x, threads=2)
        print(json.dumps({"build": spec, "s": round(time.perf_counter() - started, 1),
                          "cpu_s": round(time.process_time() - cpu_started, 1),
                          "mb": round(getattr(graph, "memory_usage", 0) / 1e6), "load": load()}), flush=True)
        graphs.append((spec, graph))
    for name, graph in graphs:
        for ef in args.ef:
            for fetch in args.fetch:
                for k in args.k:
                    for floor in args.floor:
                        print(json.dumps({"graph": name, **measure(
                            graph, x, queries, truth, ef, fetch, k, floor)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
