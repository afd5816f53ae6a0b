"""A test run cancelled with SIGTERM (CI's cancel, `timeout 60 make test`) stops the session's
PostgreSQL and deletes its folder, as Ctrl-C does: tests/conftest.py raises SIGTERM as
KeyboardInterrupt so that pytest runs the fixtures' teardown. Real pytest, real server."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for good; only a running postmaster counts
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ", 1)[1].startswith("Z"))


@pytest.mark.timeout(300)
def test_sigterm_stops_the_sessions_postgres_and_removes_its_folder(tmp_path):
    out = tmp_path / "pgdata.txt"
    env = {k: v for k, v in os.environ.items() if k != "MINDGRAPH_TEST_PG_DSN"}
    env["MINDGRAPH_SIGTERM_OUT"] = str(out)
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest", str(HERE / "sigterm_target.py"), "-q",
         "-p", "no:cacheprovider", "-o", "timeout=0"],
        cwd=HERE.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        while not out.exists():
            assert process.poll() is None, process.stdout.read()
            assert time.monotonic() < deadline, "the inner run never started its PostgreSQL"
            time.sleep(0.1)
        pgdata = Path(out.read_text(encoding="utf-8"))
        postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
        assert alive(postmaster)
        process.send_signal(signal.SIGTERM)
        output, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    deadline = time.monotonic() + 30
    while alive(postmaster) and time.monotonic() < deadline:
        time.sleep(0.1)
    orphaned, left = alive(postmaster), pgdata.parent.exists()
    if orphaned:                    # this test's own server: not left behind by a failure
        os.kill(postmaster, signal.SIGTERM)
    if left:
        shutil.rmtree(pgdata.parent, ignore_errors=True)
    assert process.returncode == pytest.ExitCode.INTERRUPTED, output     # not killed: -15
    assert "KeyboardInterrupt" in output
    assert not orphaned, f"PostgreSQL {postmaster} still ran after SIGTERM"
    assert not left, f"{pgdata.parent} was left behind"
