"""The quota ledger's sliding window: a new one fits once the oldest counted one is older
than the window; a refused take records nothing; two ledgers on one file (two processes of
`serve --workers`, or a restart) share the counts."""

from mindgraph.quotas import QuotaLedger


def test_the_window_slides_and_refusals_cost_nothing(tmp_path):
    ledger = QuotaLedger(tmp_path / "quotas.sqlite")
    assert ledger.take("llm_calls", "acme/alice", 1, 2, 100.0, now=0.0) is None
    assert ledger.take("llm_calls", "acme/alice", 1, 2, 100.0, now=10.0) is None
    assert ledger.take("llm_calls", "acme/alice", 1, 2, 100.0, now=50.0) == 50.0
    assert ledger.take("llm_calls", "acme/alice", 1, 2, 100.0, now=60.0) == 40.0
    # the first one has aged out: one fits again (the refusals above took none)
    assert ledger.take("llm_calls", "acme/alice", 1, 2, 100.0, now=100.5) is None
    assert ledger.take("llm_calls", "acme/alice", 1, 2, 100.0, now=101.0) == 9.0
    # another identity, another kind: counted apart
    assert ledger.take("llm_calls", "acme/bob", 1, 2, 100.0, now=101.0) is None
    assert ledger.take("documents", "acme/alice", 2, 2, 100.0, now=101.0) is None


def test_several_at_once_fit_whole_or_not_at_all_and_a_check_records_nothing(tmp_path):
    ledger = QuotaLedger(tmp_path / "quotas.sqlite")
    assert ledger.take("documents", "g/carol", 3, 2, 86400.0, now=0.0) == 86400.0
    assert ledger.take("documents", "g/carol", 1, 2, 86400.0, now=0.0, record=False) is None
    assert ledger.take("documents", "g/carol", 2, 2, 86400.0, now=1.0) is None
    assert ledger.take("documents", "g/carol", 1, 2, 86400.0, now=2.0) == 86399.0
    other = QuotaLedger(tmp_path / "quotas.sqlite")        # another worker, or a restart
    assert other.take("documents", "g/carol", 1, 2, 86400.0, now=3.0) == 86398.0


def test_a_clock_set_back_never_blocks_longer_than_one_window(tmp_path):
    ledger = QuotaLedger(tmp_path / "quotas.sqlite")
    # taken at 10,000 s, then the clock goes back to 0: the row counts as taken now, so
    # the next one fits a window later, not 10,000 s + a window later
    assert ledger.take("llm_calls", "acme/alice", 1, 1, 100.0, now=10_000.0) is None
    assert ledger.take("llm_calls", "acme/alice", 1, 1, 100.0, now=0.0) == 100.0
    assert ledger.take("llm_calls", "acme/alice", 1, 1, 100.0, now=60.0) == 40.0
    assert ledger.take("llm_calls", "acme/alice", 1, 1, 100.0, now=100.5) is None


def test_reserved_rows_are_given_back_by_id(tmp_path):
    ledger = QuotaLedger(tmp_path / "quotas.sqlite")
    wait, ids = ledger.reserve("llm_calls", "g/carol", 2, 3, 3600.0, now=0.0)
    assert wait is None and len(ids) == 2
    assert ledger.take("llm_calls", "g/carol", 1, 3, 3600.0, now=1.0) is None
    ledger.release(ids[:1])                           # one of the two was not used
    assert ledger.take("llm_calls", "g/carol", 1, 3, 3600.0, now=2.0) is None
    assert ledger.take("llm_calls", "g/carol", 1, 3, 3600.0, now=3.0) == 3597.0  # the kept one
