"""The embedded store's exact search multiplies its rows in blocks that BLAS does not split
over threads (OpenBLAS's spinning workers made one query of 6,735 rows take 48 ms wall and
8 ms CPU on the loaded 2-core machine, 0.2 ms in blocks)."""

import numpy as np

from mindgraph.stores.ann import BLOCK_ELEMENTS, cosines, nearest_rows

PRODUCTS: list[tuple[int, ...]] = []


class Recording(np.ndarray):
    """Rows that note the shape of every matrix product they take part in."""

    def __matmul__(self, other):
        PRODUCTS.append(self.shape)
        return np.asarray(self) @ other


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_exact_search_multiplies_blocks_small_enough_for_one_thread():
    x, q = _unit(5000, 384, 1), _unit(1, 384, 2)[0]
    PRODUCTS.clear()
    rows, scores = nearest_rows(x.view(Recording), None, q, 10, None)
    assert PRODUCTS and all(r * d <= BLOCK_ELEMENTS for r, d in PRODUCTS)
    expected = np.argsort(-(np.asarray(x) @ q))[:10]
    assert sorted(rows.tolist()) == sorted(expected.tolist())
    PRODUCTS.clear()
    some = np.arange(0, 5000, 2, dtype=np.int64)
    rows, _ = nearest_rows(x.view(Recording), None, q, 10, some)
    assert PRODUCTS and all(r * d <= BLOCK_ELEMENTS for r, d in PRODUCTS)
    assert set(rows.tolist()) <= set(some.tolist())


def test_blocks_give_each_row_the_value_of_one_product():
    for dim in (384, 1536):
        x, q = _unit(3000, dim, dim), _unit(1, dim, 7)[0]
        assert np.array_equal(cosines(x, q), x @ q)
