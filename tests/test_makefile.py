"""`make demo` / `make test` on a fresh machine: the first step, a quiet pip install, took
minutes with nothing on screen; it is announced before it starts."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("target", ["demo", "test"])
def test_a_fresh_install_says_it_takes_minutes_before_pip_runs(tmp_path, target):
    venv = tmp_path / "venv"        # none yet: the first-time path, as on a fresh clone
    plan = subprocess.run(["make", "-n", f"VENV={venv}", target], cwd=ROOT, text=True,
                          capture_output=True, check=True).stdout.splitlines()
    first_pip = next(i for i, line in enumerate(plan) if "pip install" in line)
    said = [line for line in plan[:first_pip] if line.startswith("echo ")]
    assert said and "a few minutes the first time" in said[0], plan
