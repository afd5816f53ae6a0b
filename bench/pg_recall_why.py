"""Why an approximate index misses rows of the exact top-10 (issue 20), from its answers.

    python bench/bench_pg_hybrid.py --workspace W --dsn DSN --recall-only --questions --why

For each query set, with the rows an index returned (its first 10 of each query) and the
exact top-10 over the same float32 rows, it tells apart the causes a miss can have:

- ``fp16_exact_recall_at_10``: the exact top-10 of the rows rounded to 16-bit floats (what a
  halfvec index compares) against the float32 one: rounding, when well below 1.
- ``far_queries`` / ``far_recall`` / ``near_recall``: queries whose best exact cosine is
  below FAR_COSINE (no row is close to them) against the rest.
- ``query_mean_to_rows_mean``: the cosine between the mean query and the mean row: near 1
  when the queries are drawn from where the rows are, low when they lie elsewhere.
- ``missed_rows_nn1`` / ``found_rows_nn1`` / ``random_rows_nn1``: the cosine of a row to its
  nearest other row (10th, 50th, 90th percentiles): an HNSW graph links a row from the rows
  that have it among their nearest, so an isolated row (low nn1) has few links into it and a
  search reaches it rarely, however wide.
- ``most_missed_row_share`` / ``rows_in_5_plus_top_10s``: how concentrated the misses and the
  answers are (one row missed by many queries: a hub of these queries).
- ``exact_rows_duplicated``: the share of rows with an identical twin (ties).

    python bench/pg_recall_why.py      # the vault's heading queries against its own vectors

prints how far the Obsidian Help vault's heading queries lie from its chunks' own MiniLM
vectors (vault_headings), to set beside a generated corpus' ``far_queries``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

FAR_COSINE = 0.4
NN_SAMPLE = 600        # rows whose nearest neighbour is computed (exactly) for each group


def nearest_other(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The cosine of each of ``rows`` to its nearest other row of ``x`` (exact; a row's
    identical twins are skipped, so a duplicate counts by its nearest distinct row)."""
    out = np.empty(len(rows), dtype=np.float32)
    for start in range(0, len(rows), 200):
        part = rows[start:start + 200]
        scores = x[part] @ x.T
        scores[scores > 0.9999] = -2.0       # itself and identical twins
        out[start:start + 200] = scores.max(axis=1)
    return out


def _percentiles(values: np.ndarray) -> list[float]:
    return [round(float(v), 3) for v in np.percentile(values, [10, 50, 90])] if len(values) \
        else []


def why(x: np.ndarray, vectors: list[np.ndarray], truths: list[tuple[set[int], float]],
        returned: list[list[int]], seed: int = 0) -> dict[str, Any]:
    """The causes above for one query set: ``vectors`` the queries, ``truths`` their exact
    top-10 (rows) and 10th score, ``returned`` the rows the index gave (first 10 used)."""
    rng = np.random.default_rng(seed)
    x16 = x.astype(np.float16).astype(np.float32)
    best, per, fp16, missed, found = [], [], 0, [], []
    for q, (exact, tenth), got in zip(vectors, truths, returned):
        scores = x @ q
        best.append(float(scores.max()))
        first = set(got[:10])
        hits = len(exact & first) + sum(1 for r in first - exact if scores[r] >= tenth - 1e-6)
        per.append(min(10, hits))
        rounded = np.argpartition(-(x16 @ q), 10)[:10]
        fp16 += min(10, len(exact & set(rounded.tolist())) + sum(
            1 for r in set(rounded.tolist()) - exact if scores[r] >= tenth - 1e-6))
        for r in exact:
            (found if r in first else missed).append(r)
    best_a, per_a = np.asarray(best), np.asarray(per) / 10
    far = best_a < FAR_COSINE
    rows_mean = x.mean(axis=0)
    query_mean = np.mean(vectors, axis=0)
    misses = Counter(missed)
    answers = Counter(r for exact, _ in truths for r in exact)
    keys = np.round(x, 4)
    _, counts = np.unique(keys.view(np.dtype((np.void, keys.dtype.itemsize * x.shape[1])))
                          .ravel(), return_counts=True)

    def sample(rows: list[int]) -> np.ndarray:
        rows_a = np.asarray(rows, dtype=np.int64)
        return rows_a if len(rows_a) <= NN_SAMPLE else rng.choice(rows_a, NN_SAMPLE,
                                                                  replace=False)

    return {
        "queries": len(vectors),
        "recall_at_10": round(float(per_a.mean()), 4),
        "fp16_exact_recall_at_10": round(fp16 / (10 * len(vectors)), 4),
        "far_queries": int(far.sum()),
        "far_recall": round(float(per_a[far].mean()), 4) if far.any() else None,
        "near_recall": round(float(per_a[~far].mean()), 4) if (~far).any() else None,
        "best_cosine_percentiles": _percentiles(best_a),
        "query_mean_to_rows_mean": round(float(
            rows_mean @ query_mean / np.linalg.norm(rows_mean) / np.linalg.norm(query_mean)), 3),
        "missed": len(missed),
        "missed_rows_nn1": _percentiles(nearest_other(x, sample(missed))),
        "found_rows_nn1": _percentiles(nearest_other(x, sample(found))),
        "random_rows_nn1": _percentiles(nearest_other(
            x, rng.choice(len(x), min(NN_SAMPLE, len(x)), replace=False))),
        "distinct_missed_rows": len(misses),
        "most_missed_row_share": round(misses.most_common(1)[0][1] / len(missed), 3)
        if missed else 0.0,
        "rows_in_5_plus_top_10s": sum(1 for n in answers.values() if n >= 5),
        "their_share_of_top_10_slots": round(sum(n for n in answers.values() if n >= 5)
                                             / max(1, sum(answers.values())), 3),
        "exact_rows_duplicated": round(float(counts[counts > 1].sum()) / len(x), 4),
    }


def vault_headings(n: int = 200, seed: int = 11) -> dict[str, Any]:
    """The heading queries ("<heading> <title>", as bench_scale_query.section_queries asks)
    of the Obsidian Help vault against its chunks' own MiniLM vectors (bench_ann's cached
    ones): how many are far and how the mean query lies to the mean row, to set beside a
    generated corpus whose chunk vectors are not their text's."""
    import random
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import shared_corpora
    from bench_ann import vault_vectors
    from bench_vectors import CORPORA

    from mindgraph.page.vault import load_vault
    from mindgraph.providers.embedding.local import LocalMiniLMProvider

    shared_corpora.require(CORPORA, "obsidian-help")
    corpus, _ = vault_vectors()
    vault = load_vault(CORPORA / "obsidian-help")
    texts = sorted({f"{s.heading} {p.title}".strip() for p in vault.pages.values()
                    for s in p.sections if s.heading})
    random.Random(seed).shuffle(texts)
    x = np.asarray(corpus, dtype=np.float32)
    queries = np.asarray(LocalMiniLMProvider().embed_queries(texts[:n]), dtype=np.float32)
    best = (queries @ x.T).max(axis=1)
    rows_mean, query_mean = x.mean(axis=0), queries.mean(axis=0)
    return {"rows": len(x), "queries": len(queries),
            "far_queries": int((best < FAR_COSINE).sum()),
            "best_cosine_percentiles": _percentiles(best),
            "query_mean_to_rows_mean": round(float(rows_mean @ query_mean / np.linalg.norm(
                rows_mean) / np.linalg.norm(query_mean)), 3)}


if __name__ == "__main__":
    import argparse
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import shared_corpora

    parser = argparse.ArgumentParser(description="How far the Obsidian Help vault's heading "
                                     "queries lie from its chunks' own MiniLM vectors.")
    shared_corpora.add_option(parser)
    parser.parse_args()
    print(json.dumps(vault_headings()))
