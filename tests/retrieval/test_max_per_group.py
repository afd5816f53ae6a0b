"""keyword.max_per_group: the best section of each page in linear time, equal to
np.maximum.at on any input (ties included, as the row choice on a tied score relies on)."""

import numpy as np
from hypothesis import given, strategies as st

from mindgraph.retrieval.keyword import max_per_group


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 4)), max_size=300))
def test_equals_maximum_at(pairs):
    groups = np.asarray([g for g, _ in pairs], dtype=np.int64)
    values = np.asarray([v for _, v in pairs], dtype=np.float64)
    got, want = np.zeros(10), np.zeros(10)
    max_per_group(got, groups, values)
    np.maximum.at(want, groups, values)
    assert (got == want).all()
    rows = np.arange(len(pairs))
    top = values == got[groups]
    got_row, want_row = np.full(10, -1), np.full(10, -1)
    max_per_group(got_row, groups[top], rows[top])
    np.maximum.at(want_row, groups[top], rows[top])
    assert (got_row == want_row).all()      # on a tie, the later row
