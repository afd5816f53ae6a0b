"""Benchmark for issue 20's embedded vector index: approximate search against exact search.

    python bench/bench_ann.py                      # 250,000 realistic section vectors
    python bench/bench_ann.py --n 300000 --ef 256,512,1024 --libs usearch-f16,mindgraph --json
    python bench/bench_ann.py --data vault,derived --n 50000   # the older sets

Data (``--data``):
- ``realistic`` (default): ``--n`` section vectors made the way bench/gen_corpus.py makes
  notes, from real text: each section is 1-5 consecutive sentences of a SciFact abstract
  (85 % of them with 1-2 sentences from anywhere mixed in), and its vector is the normalised mean of
  MiniLM's vectors of those sentences (43,000 sentences embedded once and cached in
  bench-out/). MiniLM mean-pools its tokens, so this is close to embedding the section's
  text; ``--check`` embeds a sample of sections for real and prints the cosine between the
  two (and between unrelated sections, for contrast). Neighbourhoods come from shared
  sentences and topics, not from copies of a few thousand base vectors.
- ``vault``: the real MiniLM vectors of every chunk of the Obsidian Help vault (6,735).
- ``derived``: ``--n`` vectors derived from the vault's (each a real vector plus a third of
  another and noise, renormalised): many near-duplicates, a hard case for a graph.
Queries: SciFact's 300 claims and the 40 vault questions, embedded by MiniLM.
Each library builds an HNSW graph (M=16, ef_construction=128, 2 threads) and is measured on
one thread: build time, median query time, recall@10 against exact search, file size, load
time, for each ``--ef``; ``mindgraph`` is the embedded store itself (usearch f16, 4x
candidates re-scored exactly; exact search below 200,000 rows), with the ef_search it ships
with swapped for each ``--ef``, and the cost of a flush of 64 changed rows (appended to the
log, against rewriting the whole model file as every flush did before). ``exact`` is numpy's
matrix-vector product over every vector (the store's search below its threshold). State the
load average printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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

from mindgraph.stores import ann  # noqa: E402
from mindgraph.stores.base import VectorRecord  # noqa: E402
from mindgraph.stores.embedded import EmbeddedStore, model_file_name  # noqa: E402
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

SHIPPED_EF = ann.EXPANSION_SEARCH


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


def sentence_vectors(provider: Any = None, limit: int | None = None
                     ) -> tuple[list[list[str]], np.ndarray]:
    """(SciFact's abstracts as lists of sentences, the vector of every sentence in that
    order by ``provider`` (MiniLM when None)), embedded once (~43,000 sentences, ~10 min on
    2 loaded cores for MiniLM) and cached in bench-out/, one file per model. ``limit`` keeps
    only the first abstracts up to that many sentences (a smaller pool, for tests)."""
    from bench_vectors import CORPORA, _sentences

    docs = [_sentences(json.loads(line)["text"]) for line in
            (CORPORA / "scifact" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    docs = [d for d in docs if d]
    if limit is not None:
        kept, total = [], 0
        for d in docs:
            if total + len(d) > limit:
                break
            kept.append(d)
            total += len(d)
        docs = kept
    if provider is None:
        from mindgraph.providers.embedding.local import LocalMiniLMProvider

        provider, name = LocalMiniLMProvider(), "minilm"
    else:
        name = re.sub(r"[^A-Za-z0-9.]+", "-", provider.model_version).strip("-")
    size = "" if limit is None else f"-{sum(map(len, docs))}"
    path = CACHE / f"ann-scifact-sentences-{name}{size}.npz"
    if path.is_file():
        with np.load(path) as data:
            if data["vectors"].shape[0] == sum(map(len, docs)):
                return docs, data["vectors"]
    texts = [s for d in docs for s in d]
    print(f"embedding {len(texts)} sentences once (cached in {path}) ...", file=sys.stderr)
    vectors = np.vstack([provider.embed_documents(texts[i:i + 512])
                         for i in range(0, len(texts), 512)])
    CACHE.mkdir(exist_ok=True)
    np.savez(path, vectors=vectors)
    return docs, vectors


def section_picks(docs: list[list[str]], n: int, seed: int = 0) -> list[list[int]]:
    """``n`` sections written the way bench/gen_corpus.py writes notes from real text, as
    indices into the flat sentence list: each 1-5 sentences in a row of one abstract (picked
    in proportion to its length), and 85 % of them also 1-2 sentences drawn from anywhere
    (gen_corpus mixes sources). Sections overlap the way notes sharing sentences do and are
    rarely copies (43,000 sentences give ~200,000 runs; 250,000 sections have ~2 % exact
    duplicates, which recall counts as ties)."""
    rng = np.random.default_rng(seed)
    sizes = np.asarray([len(d) for d in docs], dtype=np.float64)
    starts = np.cumsum([0] + [len(d) for d in docs])
    chosen_docs = rng.choice(len(docs), size=n, p=sizes / sizes.sum())
    picks: list[list[int]] = []
    for d in chosen_docs.tolist():
        size = min(int(rng.integers(1, 6)), len(docs[d]))
        first = int(rng.integers(len(docs[d]) - size + 1))
        chosen = list(range(starts[d] + first, starts[d] + first + size))
        if rng.random() < 0.85:
            chosen += rng.integers(starts[-1], size=int(rng.integers(1, 3))).tolist()
        picks.append(chosen)
    return picks


def realistic(n: int, seed: int = 0) -> np.ndarray:
    """``n`` section vectors: the normalised mean of the MiniLM vectors of each section's
    sentences (section_picks). MiniLM itself mean-pools its tokens, so this is close to
    embedding the section's text (``--check`` measures how close: the cosine between the two
    on a sample) at the cost of embedding 43,000 sentences once instead of ``n`` sections."""
    docs, vectors = sentence_vectors()
    lengths = np.asarray([len(s) for d in docs for s in d], dtype=np.float32)
    out = np.zeros((n, vectors.shape[1]), dtype=np.float32)
    for i, chosen in enumerate(section_picks(docs, n, seed)):
        out[i] = (vectors[chosen] * lengths[chosen, None]).sum(axis=0)
    return unit(out)


def realistic_for(keys: list[str],
                  pool: tuple[list[list[str]], np.ndarray] | None = None) -> np.ndarray:
    """A realistic() vector for each key (a chunk's text or hash), the same for the same key
    in every run: a stand-in for the model where embedding every chunk would take hours.
    ``pool``: (docs, sentence vectors) of another model (sentence_vectors(provider));
    MiniLM's by default. The same key picks the same sentences in pools of the same docs."""
    import hashlib

    docs, vectors = pool if pool is not None else sentence_vectors()
    lengths = np.asarray([len(s) for d in docs for s in d], dtype=np.float32)
    out = np.zeros((len(keys), vectors.shape[1]), dtype=np.float32)
    for i, key in enumerate(keys):
        seed = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "little")
        chosen = section_picks(docs, 1, seed)[0]
        out[i] = (vectors[chosen] * lengths[chosen, None]).sum(axis=0)
    return unit(out)


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def derived(base: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """``n`` vectors with the vault's neighbourhoods (see the module docstring)."""
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(base), n), rng.integers(0, len(base), n)
    noise = rng.standard_normal((n, base.shape[1])) * (0.25 / np.sqrt(base.shape[1]))
    return unit(base[i] + 0.35 * base[j] + noise)


def exact_tops(x: np.ndarray, queries: np.ndarray) -> list[tuple[set[int], float]]:
    """Per query, the exact top-10 rows and the 10th score (ties_found uses it)."""
    out = []
    for q in queries:
        scores = x @ q
        top = np.argpartition(-scores, 10)[:10]
        out.append((set(top.tolist()), float(scores[top].min())))
    return out


def ties_found(x: np.ndarray, q: np.ndarray, truth: tuple[set[int], float],
               ids: Any) -> int:
    """How many of the exact top-10 a search found, counting a row that scores as high as
    the 10th (a tie: two sections made of the same sentences) as found."""
    exact, tenth = truth
    ids = {int(i) for i in ids}
    hits = len(exact & ids)
    others = np.fromiter(ids - exact, dtype=np.int64)
    if others.size:
        hits += int(np.sum(x[others] @ q >= tenth - 1e-6))
    return min(hits, 10)


def timed(search: Callable[[np.ndarray], Any], queries: np.ndarray, x: np.ndarray,
          truth: list[tuple[set[int], float]]) -> tuple[float, float]:
    """(median ms, recall@10)."""
    times, found = [], 0
    for q, exact in zip(queries, truth):
        started = time.perf_counter()
        ids = search(q)
        times.append((time.perf_counter() - started) * 1000)
        found += ties_found(x, q, exact, ids)
    return statistics.median(times), found / (10 * len(queries))


def libraries(x: np.ndarray, tmp: Path, names: list[str]) -> dict[str, Callable[[], tuple]]:
    """name → a function that builds, saves and reloads an index: (build s, file, load s,
    search)."""
    d = x.shape[1]
    out: dict[str, Callable[[], tuple]] = {}

    def usearch(dtype: str, m: int = 16) -> tuple:
        Index = ann.usearch_index()    # after onnxruntime (see there): the store loads it

        index = Index(ndim=d, metric="cos", dtype=dtype, connectivity=m, expansion_add=128,
                      expansion_search=128)
        started = time.perf_counter()
        index.add(np.arange(len(x)), x, threads=2)
        build = time.perf_counter() - started
        path = tmp / f"u-{dtype}-{m}.usearch"
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
        flushes["flush_64_rows_ms"] = flush_costs(store, x)
        started = time.perf_counter()
        reader = EmbeddedStore(tmp / "store")
        reader.count("bench")
        size = sum(p.stat().st_size for p in (tmp / "store").iterdir())

        def search(ef: int) -> Callable[[np.ndarray], Any]:
            ann.EXPANSION_SEARCH = ef or ann.EXPANSION_SEARCH
            return lambda q: [int(h.page) for h in reader.query(q, 10, "bench")]
        return build, size, time.perf_counter() - started, search

    table = {"usearch-f16": lambda: usearch("f16"), "usearch-i8": lambda: usearch("i8"),
             "usearch-f16-m32": lambda: usearch("f16", 32),
             "faiss-hnsw-flat": faiss_hnsw, "voyager-e4m3": voyager_e4m3,
             "mindgraph": mindgraph}
    for name in names:
        out[name] = table[name]
    return out


flushes: dict[str, Any] = {}


def flush_costs(store: EmbeddedStore, x: np.ndarray, runs: int = 5) -> dict[str, float]:
    """Median ms of flushing 64 changed rows onto the whole table: appended to the log (what
    a flush does) and rewriting the model file (what every flush did before the log; what a
    compaction does now)."""
    table = store._tables["bench"]
    path = store.folder / model_file_name("bench")
    append, rewrite = [], []
    for run in range(runs):
        rows = [VectorRecord(f"{i}", "lead", "lead", f"{i}~{run}", x[i])
                for i in range(64 * run, 64 * run + 64)]
        started = time.perf_counter()
        store.upsert("bench", rows)
        store.flush()
        append.append((time.perf_counter() - started) * 1000)
        if run < 2:    # slow at scale: twice is enough
            started = time.perf_counter()
            store._compact(table, path)
            rewrite.append((time.perf_counter() - started) * 1000)
    return {"append": round(statistics.median(append), 1),
            "rewrite_whole_file": round(statistics.median(rewrite), 1)}


def measure(x: np.ndarray, queries: np.ndarray, names: list[str],
            efs: list[int]) -> dict[str, Any]:
    truth = exact_tops(x, queries)
    exact_ms, _ = timed(lambda q: np.argpartition(-(x @ q), 10)[:10], queries, x, truth)
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
            for ef in efs:
                ms, rec = timed(search(ef), queries, x, truth)
                fig[f"ef{ef}"] = {"median_ms": round(ms, 3), "recall_at_10": round(rec, 4)}
            if name == "mindgraph":
                fig.update(flushes)
                ann.EXPANSION_SEARCH = SHIPPED_EF
            out["libraries"][name] = fig
            print(f"  {len(x):>7} {name:16} " + json.dumps(fig), file=sys.stderr, flush=True)
    return out


def query_vectors() -> np.ndarray:
    """SciFact's 300 claims and the 40 vault questions, embedded by MiniLM (cached)."""
    from mindgraph.providers.embedding.local import LocalMiniLMProvider

    path = CACHE / "ann-queries-minilm.npz"
    texts = query_texts()
    if path.is_file():
        with np.load(path) as data:
            if data["queries"].shape[0] == len(texts):
                return data["queries"]
    queries = LocalMiniLMProvider().embed_queries(texts)
    CACHE.mkdir(exist_ok=True)
    np.savez(path, queries=queries)
    return queries


def check_realistic(sample: int, seed: int = 1) -> dict[str, Any]:
    """How close realistic() is to the model: the cosine between a section's mean of
    sentence vectors and MiniLM's vector of the section's text, over ``sample`` sections;
    and the same for two unrelated sections (what "not close" looks like)."""
    from mindgraph.providers.embedding.local import LocalMiniLMProvider

    docs, vectors = sentence_vectors()
    flat = [s for d in docs for s in d]
    lengths = np.asarray([len(s) for s in flat], dtype=np.float32)
    picks = section_picks(docs, sample, seed)
    approx = unit(np.stack([(vectors[c] * lengths[c, None]).sum(axis=0) for c in picks]))
    real = unit(LocalMiniLMProvider().embed_documents([" ".join(flat[i] for i in c)
                                                       for c in picks]))
    same = np.sum(approx * real, axis=1)
    other = np.sum(approx * np.roll(real, 1, axis=0), axis=1)
    return {"sections": sample, "cosine_median": round(float(np.median(same)), 3),
            "cosine_p5": round(float(np.percentile(same, 5)), 3),
            "unrelated_cosine_median": round(float(np.median(other)), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--n", type=int, default=250_000, help="vectors of the scale sets")
    parser.add_argument("--data", default="realistic",
                        help="realistic (sections of real sentences), derived (from the "
                             "vault's chunks), vault (its chunks themselves); comma-separated")
    parser.add_argument("--libs", default="usearch-f16,mindgraph")
    parser.add_argument("--ef", default="128,256,512", help="ef_search values (comma-separated)")
    parser.add_argument("--check", type=int, default=300,
                        help="sections embedded by the model to check realistic() (0: skip)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    names = [n for n in args.libs.split(",") if n]
    efs = [int(v) for v in args.ef.split(",") if v]
    parts = [p for p in args.data.split(",") if p]
    result: dict[str, Any] = {"machine": {"cpus": os.cpu_count(),
                                          "load_average": os.getloadavg()[0]}}
    if "realistic" in parts:
        if args.check:
            result["realistic_check"] = check_realistic(args.check)
            print(f"  realistic check {result['realistic_check']}", file=sys.stderr)
        result["realistic"] = measure(realistic(args.n), unit(query_vectors()), names, efs)
    if "vault" in parts or "derived" in parts:
        base, queries = vault_vectors()
        if "vault" in parts:
            result["vault"] = measure(unit(base), unit(queries), names, efs)
        if "derived" in parts:
            result["derived"] = measure(derived(unit(base), args.n), unit(queries), names,
                                        efs)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        if "realistic_check" in result:
            print(f"realistic check: {result['realistic_check']}")
        for part in ("realistic", "vault", "derived"):
            if part in result:
                r = result[part]
                print(f"{part}: {r['vectors']} vectors, exact {r['exact_median_ms']} ms")
                for name, fig in r["libraries"].items():
                    print(f"  {name:16} {fig}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
