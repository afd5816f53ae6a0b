"""The bench scripts that compare this checkout with ``--baseline`` take it from one helper
(bench/programs.py): a baseline that is no executable is a usage error at once, before the
corpora are read or a workspace is built (it was a traceback once the baseline first ran)."""

import subprocess
import sys

import pytest

from bench_script_support import BENCH


@pytest.mark.parametrize("script", ["bench_one_language_vault", "bench_recency",
                                    "bench_timeline"])
def test_a_baseline_that_cannot_run_is_a_usage_error(script, tmp_path):
    missing = tmp_path / "no-such" / "mindgraph"
    run = subprocess.run([sys.executable, str(BENCH / f"{script}.py"), "--baseline",
                          str(missing), "--corpora", str(tmp_path / "no-corpora")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert f"--baseline {missing}: no such executable" in run.stderr
