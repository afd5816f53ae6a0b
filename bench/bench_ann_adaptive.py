"""Calibrate and evaluate the embedded store's exact fallback (stores/ann.py's
EXACT_WHEN_BEST_BELOW) at a workspace's size: a query whose best cosine among the HNSW
graph's candidates is below the threshold is searched exactly.

    python bench/bench_ann_adaptive.py WORKSPACE [--queries 400] [--target 0.96]

WORKSPACE is one whose embedded store holds a model above stores/ann.py's EXACT_BELOW rows
(bench/bench_scale_query.py --workspace fills one). Two families of queries, each split into
calibration and held-out evaluation queries that share nothing: the workspace's queries as
bench_scale_query.py makes them ("<heading> <title>" of random sections; calibration drawn
with seed 7, evaluation with seed 11 — bench_ann_settings.py's — minus any text also drawn
for calibration) and SciFact's claims with the vault's questions (bench_ann.query_vectors;
even-numbered calibrate, odd-numbered evaluate). The threshold is calibrated on the
calibration queries alone — the lowest on a grid of 0.01 that keeps recall@10 >= ``--target``
on each family (the graph's answer where the best cosine reaches it, exact search below) —
then the held-out queries go through stores/ann.nearest_rows itself with the graph alone
(threshold 0), the calibrated threshold and the shipped one, beside exact search. Printed for
each: recall@10 of chunks (ties with the exact 10th counted as found) and of pages (the first
10 distinct pages of the top 240 chunks, what the vector side of a hybrid query ranks: 30
pages × 8 chunks), the share searched exactly, and the median, mean and p95 CPU milliseconds
a query (one thread, time.process_time), with the load average: CPU time is what compares
under load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
from bench_ann_settings import percentile, store_table  # noqa: E402

from mindgraph.stores import ann  # noqa: E402

PAGE_CHUNKS = 240          # the vector side's store query: 30 pages × CHUNKS_PER_PAGE 8


def load() -> float:
    return round(os.getloadavg()[0], 1)


def workspace_queries(workspace: Path, n: int) -> tuple[list[str], list[str]]:
    """(calibration, evaluation) texts of the workspace, disjoint; the evaluation ones are
    bench_scale_query.fresh_queries(workspace, n, seed=11) (the vault is read once)."""
    from bench_scale_query import section_queries

    from mindgraph.core import Mindgraph

    mg = Mindgraph.open(workspace)
    try:
        every = section_queries(mg)
    finally:
        mg.close()
    evaluation = list(every)
    random.Random(11).shuffle(evaluation)
    evaluation = evaluation[:n]
    held = set(evaluation)
    calibration = list(every)
    random.Random(7).shuffle(calibration)
    return [t for t in calibration if t not in held][:n], evaluation


def first_pages(rows: list[list[str]], found: np.ndarray, scores: np.ndarray) -> list[str]:
    """The first 10 distinct pages of chunks ranked by score."""
    pages: list[str] = []
    for j in found[np.argsort(-scores, kind="stable")].tolist():
        if rows[j][0] not in pages:
            pages.append(rows[j][0])
            if len(pages) == 10:
                break
    return pages


def truths(x: np.ndarray, rows: list[list[str]], queries: np.ndarray) -> list[dict[str, Any]]:
    """Exact search's top-10 chunks (set, 10th score), first 10 pages and CPU ms."""
    out = []
    for q in queries:
        started = time.process_time()
        scores = ann.cosines(x, q)
        top = np.argpartition(-scores, 10)[:10]
        cpu = (time.process_time() - started) * 1000
        wide = np.argpartition(-scores, PAGE_CHUNKS)[:PAGE_CHUNKS]
        out.append({"chunks": (set(top.tolist()), float(scores[top].min())),
                    "pages": first_pages(rows, wide, scores[wide]), "cpu": cpu})
    return out


def graph_only(x: np.ndarray, graph: Any, queries: np.ndarray,
               truth: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """Per query: the best cosine among the graph's candidates for a top-10 and the chunks
    recall@10 of the graph's answer."""
    best, recall = [], []
    for q, exact in zip(queries, truth):
        found, scores = ann.nearest_rows(x, graph, q, 10, None, exact_when_best_below=0.0)
        best.append(float(scores.max()))
        recall.append(ties_found(x, q, exact["chunks"], found) / 10)
    return np.asarray(best), np.asarray(recall)


def calibrate(families: dict[str, tuple[np.ndarray, np.ndarray]], target: float) -> float:
    """The lowest threshold (0.01 steps) keeping recall@10 >= target on every family."""
    for step in range(0, 101):
        threshold = step / 100
        if all(np.where(best < threshold, 1.0, recall).mean() >= target
               for best, recall in families.values()):
            return threshold
    return 1.0


def evaluate(x: np.ndarray, rows: list[list[str]], graph: Any, queries: np.ndarray,
             truth: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """Recall@10 of chunks and pages through nearest_rows at ``threshold``, with CPU ms."""
    cpu, chunks, pages, exact = [], 0, 0, 0
    for q, want in zip(queries, truth):
        started = time.process_time()
        found, scores = ann.nearest_rows(x, graph, q, 10, None,
                                         exact_when_best_below=threshold)
        cpu.append((time.process_time() - started) * 1000)
        chunks += ties_found(x, q, want["chunks"], found)
        wide, wide_scores = ann.nearest_rows(x, graph, q, PAGE_CHUNKS, None,
                                             exact_when_best_below=threshold)
        pages += len(set(first_pages(rows, wide, wide_scores)) & set(want["pages"]))
        exact += int(float(scores.max()) < threshold)
    n = len(queries)
    return {"threshold": threshold, "chunks_recall_at_10": round(chunks / (10 * n), 3),
            "pages_recall_at_10": round(pages / (10 * n), 3),
            "searched_exactly": round(exact / n, 3),
            "cpu_median_ms": round(statistics.median(cpu), 2),
            "cpu_mean_ms": round(statistics.fmean(cpu), 2),
            "cpu_p95_ms": round(percentile(cpu, 95), 2), "load": load()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workspace", type=Path)
    parser.add_argument("--queries", type=int, default=400,
                        help="workspace queries per half (calibration, evaluation)")
    parser.add_argument("--target", type=float, default=0.96,
                        help="recall@10 the calibration keeps on each family")
    args = parser.parse_args()

    path, table = store_table(args.workspace)
    x, rows = table.vectors[:len(table)], table.rows
    graph = ann.AnnIndex.load(ann.index_path(path), table.dimension)
    if graph is None:
        raise SystemExit(f"no usable saved graph beside {path}")
    from mindgraph.providers.embedding.local import LocalMiniLMProvider

    calibration_texts, evaluation_texts = workspace_queries(args.workspace, args.queries)
    provider = LocalMiniLMProvider()
    claims = query_vectors()
    sets = {"calibration": {"workspace": provider.embed_queries(calibration_texts),
                            "claims": claims[0::2]},
            "evaluation": {"workspace": provider.embed_queries(evaluation_texts),
                           "claims": claims[1::2]}}
    print(json.dumps({"rows": len(table), "model": table.model_version,
                      "graph": graph.settings(), "ef_search": ann.EXPANSION_SEARCH,
                      "queries": {k: {f: len(v) for f, v in s.items()}
                                  for k, s in sets.items()}, "load": load()}), flush=True)
    families = {}
    for family, queries in sets["calibration"].items():
        truth = truths(x, rows, queries)
        families[family] = graph_only(x, graph, queries, truth)
    threshold = calibrate(families, args.target)
    print(json.dumps({"calibrated_threshold": threshold, "target": args.target,
                      "shipped": ann.EXACT_WHEN_BEST_BELOW, "load": load()}), flush=True)
    for family, queries in sets["evaluation"].items():
        truth = truths(x, rows, queries)
        print(json.dumps({"family": family, "exact_cpu_median_ms": round(statistics.median(
            t["cpu"] for t in truth), 2), "load": load()}), flush=True)
        for chosen in sorted({0.0, threshold, ann.EXACT_WHEN_BEST_BELOW}):
            print(json.dumps({"family": family, **evaluate(x, rows, graph, queries, truth,
                                                            chosen)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
