"""bench/pg_recall_why.py: the causes of an index's misses told apart on rows made for it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from pg_recall_why import nearest_other, why  # noqa: E402


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def rows_and_queries() -> tuple[np.ndarray, list[np.ndarray]]:
    """400 rows in four tight clusters, one isolated row (index 400) on an axis of its own,
    and 20 queries: 10 inside the clusters (near), 10 pointing between the isolated row and
    a cluster (far: no row is close to them)."""
    rng = np.random.default_rng(4)
    centres = np.eye(32, dtype=np.float32)[:4]
    x = [unit(centres[i % 4] + 0.05 * rng.standard_normal(32)) for i in range(400)]
    x.append(unit(np.eye(32, dtype=np.float32)[10]))
    near = [unit(centres[i % 4] + 0.05 * rng.standard_normal(32)) for i in range(10)]
    far = [unit(0.4 * np.eye(32)[10] + np.eye(32)[20] + 0.3 * np.eye(32)[i % 4]
                + 0.01 * rng.standard_normal(32)) for i in range(10)]
    return np.stack(x), near + far


def exact_top(x: np.ndarray, q: np.ndarray) -> tuple[set[int], float]:
    scores = x @ q
    top = np.argsort(-scores)[:10]
    return set(top.tolist()), float(scores[top[-1]])


def test_an_index_that_misses_one_isolated_row_is_told_from_rounding_and_duplicates():
    x, queries = rows_and_queries()
    truths = [exact_top(x, q) for q in queries]
    # the index answers exactly, except that it never reaches the isolated row
    returned = []
    for q in queries:
        scores = x @ q
        scores[400] = -2.0
        returned.append(np.argsort(-scores)[:10].tolist())
    out = why(x, queries, truths, returned)
    assert out["queries"] == 20
    assert out["far_queries"] == 10 and out["near_recall"] == 1.0
    assert out["far_recall"] == 0.9          # each far query misses its nearest row: 400
    assert out["recall_at_10"] == 0.95
    assert out["fp16_exact_recall_at_10"] >= 0.99          # rounding is not the cause
    assert out["missed"] == 10 and out["distinct_missed_rows"] == 1
    assert out["most_missed_row_share"] == 1.0
    assert out["missed_rows_nn1"][1] < 0.6 < out["found_rows_nn1"][1]   # isolated vs not
    assert out["exact_rows_duplicated"] == 0.0
    assert out["rows_in_5_plus_top_10s"] >= 1


def test_nearest_other_skips_the_row_itself_and_its_identical_twins():
    x = unit(np.asarray([[1, 0, 0], [1, 0, 0], [0.8, 0.6, 0], [0, 0, 1]], dtype=np.float32))
    assert np.allclose(nearest_other(x, np.asarray([0, 3])), [0.8, 0.0], atol=1e-6)
