"""Benchmark for issue 20's embedded vector index: approximate libraries against exact search.

    python bench/bench_ann.py                     # vault MiniLM vectors + 100k derived from them
    python bench/bench_ann.py --n 100000 --libs usearch,faiss,voyager --json

Data: the real MiniLM vectors of every chunk of the Obsidian Help vault (883 pages, three
languages; embedded once, cached in bench-out/) queried with the 40 vault questions and
SciFact's 300 claims; and ``--n`` vectors derived from them for scale (each a real vector
plus a third of another and noise, renormalised: neighbourhoods like a vault's, not the
structureless random sphere on which every graph index looks broken: with noise of norm 2
instead of 0.25, recall@10 of usearch at ef 256 fell to 0.46).
Each library builds an HNSW graph (M=16, ef_construction=128, 2 threads) and is measured on
one thread: build time, median query time, recall@10 against exact search, file size, load
time; ``mindgraph`` is the embedded store itself (usearch f16, ef 128, 4x candidates re-scored
exactly; exact search below 200,000 rows). State the load average printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_vectors import CACHE, query_texts, vault_chunks  # noqa: E402

from mindgraph.stores.base import VectorRecord  # noqa: E402
from mindgraph.stores.embedded import EmbeddedStore  # noqa: E402


def vault_vectors() -> tuple[np.ndarray, np.ndarray]:
    """(chunk vectors, query vectors) of the vault, embedded once with MiniLM."""
    from mindgraph.providers.embedding.local import LocalMiniLMProvider

    path = CACHE / "ann-vault-minilm.npz"
    if path.is_file():
        with np.load(path) as data:
            return data["corpus"], data["queries"]
    provider = LocalMiniLMProvider()
    texts = [c.text for c in vault_chunks()]
    corpus = np.vstack([provider.embed_documents(texts[i:i + 256])
                        for i in range(0, len(texts), 256)])
    queries = provider.embed_queries(query_texts())
    CACHE.mkdir(exist_ok=True)
    np.savez(path, corpus=corpus, queries=queries)
    return corpus, queries


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def derived(base: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """``n`` vectors with the vault's neighbourhoods (see the module docstring)."""
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(base), n), rng.integers(0, len(base), n)
    noise = rng.standard_normal((n, base.shape[1])) * (0.25 / np.sqrt(base.shape[1]))
    return unit(base[i] + 0.35 * base[j] + noise)


def timed(search: Callable[[np.ndarray], Any], queries: np.ndarray,
          truth: list[set[int]]) -> tuple[float, float]:
    """(median ms, recall@10)."""
    times, found = [], 0
    for q, exact in zip(queries, truth):
        started = time.perf_counter()
        ids = search(q)
        times.append((time.perf_counter() - started) * 1000)
        found += len(exact & {int(i) for i in ids})
    return statistics.median(times), found / (10 * len(queries))


def libraries(x: np.ndarray, tmp: Path, names: list[str]) -> dict[str, Callable[[], tuple]]:
    """name → a function that builds, saves and reloads an index: (build s, file, load s,
    search)."""
    d = x.shape[1]
    out: dict[str, Callable[[], tuple]] = {}

    def usearch(dtype: str) -> tuple:
        from usearch.index import Index

        index = Index(ndim=d, metric="cos", dtype=dtype, connectivity=16, expansion_add=128,
                      expansion_search=128)
        started = time.perf_counter()
        index.add(np.arange(len(x)), x, threads=2)
        build = time.perf_counter() - started
        path = tmp / f"u-{dtype}.usearch"
        index.save(str(path))
        started = time.perf_counter()
        loaded = Index.restore(str(path))
        load_s = time.perf_counter() - started

        def search(ef: int) -> Callable[[np.ndarray], Any]:
            loaded.expansion_search = ef       # a search setting: not saved with the graph
            return lambda q: loaded.search(q, 10, threads=1).keys
        return build, path, load_s, search

    def faiss_hnsw() -> tuple:
        import faiss

        faiss.omp_set_num_threads(2)
        index = faiss.IndexHNSWFlat(d, 16, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 128
        started = time.perf_counter()
        index.add(x)
        build = time.perf_counter() - started
        path = tmp / "f.faiss"
        faiss.write_index(index, str(path))
        started = time.perf_counter()
        loaded = faiss.read_index(str(path))
        load_s = time.perf_counter() - started
        faiss.omp_set_num_threads(1)

        def search(ef: int) -> Callable[[np.ndarray], Any]:
            loaded.hnsw.efSearch = ef
            return lambda q: loaded.search(q[None, :], 10)[1][0]
        return build, path, load_s, search

    def voyager_e4m3() -> tuple:
        import voyager

        index = voyager.Index(voyager.Space.Cosine, num_dimensions=d, M=16, ef_construction=128,
                              storage_data_type=voyager.StorageDataType.E4M3)
        started = time.perf_counter()
        index.add_items(x, num_threads=2)
        build = time.perf_counter() - started
        path = tmp / "v.voy"
        index.save(str(path))
        started = time.perf_counter()
        loaded = voyager.Index.load(str(path))
        return build, path, time.perf_counter() - started, \
            lambda ef: lambda q: loaded.query(q, 10, query_ef=ef)[0]

    def mindgraph() -> tuple:
        store = EmbeddedStore(tmp / "store")
        started = time.perf_counter()
        store.upsert("bench", [VectorRecord(f"{i}", "lead", "lead", str(i), x[i])
                               for i in range(len(x))])
        store.flush()
        build = time.perf_counter() - started
        started = time.perf_counter()
        reader = EmbeddedStore(tmp / "store")
        reader.count("bench")
        size = sum(p.stat().st_size for p in (tmp / "store").iterdir())
        return build, size, time.perf_counter() - started, \
            lambda ef: lambda q: [int(h.page) for h in reader.query(q, 10, "bench")]

    table = {"usearch-f16": lambda: usearch("f16"), "usearch-i8": lambda: usearch("i8"),
             "faiss-hnsw-flat": faiss_hnsw, "voyager-e4m3": voyager_e4m3,
             "mindgraph": mindgraph}
    for name in names:
        out[name] = table[name]
    return out


def measure(x: np.ndarray, queries: np.ndarray, names: list[str],
            efs: list[int]) -> dict[str, Any]:
    truth = [set(np.argpartition(-row, 10)[:10].tolist()) for row in queries @ x.T]
    exact_ms, _ = timed(lambda q: np.argpartition(-(x @ q), 10)[:10], queries, truth)
    out: dict[str, Any] = {"vectors": len(x), "queries": len(queries),
                           "exact_median_ms": round(exact_ms, 3), "libraries": {}}
    with tempfile.TemporaryDirectory(prefix="mindgraph-ann-") as tmp:
        for name, make in libraries(x, Path(tmp), names).items():
            load_before = os.getloadavg()[0]
            build, path, load_s, search = make()
            size = path if isinstance(path, int) else path.stat().st_size
            fig: dict[str, Any] = {"build_s": round(build, 1), "file_mb": round(size / 1e6, 1),
                                   "load_ms": round(load_s * 1000),
                                   "load_average": round(load_before, 1)}
            for ef in ([0] if name == "mindgraph" else efs):
                ms, rec = timed(search(ef), queries, truth)
                fig[f"ef{ef}" if ef else "store"] = {"median_ms": round(ms, 3),
                                                     "recall_at_10": round(rec, 4)}
            out["libraries"][name] = fig
            print(f"  {len(x):>7} {name:16} " + json.dumps(fig), file=sys.stderr, flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="derived vectors for scale")
    parser.add_argument("--libs", default="usearch-f16,faiss-hnsw-flat,voyager-e4m3,"
                                          "mindgraph")
    parser.add_argument("--ef", default="128,256", help="ef_search values (comma-separated)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    names = [n for n in args.libs.split(",") if n]
    efs = [int(v) for v in args.ef.split(",") if v]
    base, queries = vault_vectors()
    result = {"machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg()[0]},
              "vault": measure(unit(base), unit(queries), names, efs)}
    if args.n:
        result["derived"] = measure(derived(unit(base), args.n), unit(queries), names, efs)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for part in ("vault", "derived"):
            if part in result:
                r = result[part]
                print(f"{part}: {r['vectors']} vectors, exact {r['exact_median_ms']} ms")
                for name, fig in r["libraries"].items():
                    print(f"  {name:16} {fig}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
