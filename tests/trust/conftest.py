"""Fixtures for trust tests: a compiled workspace, and a CLI runner for it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from trust_support import NOTES

@pytest.fixture
def mg() -> Callable[..., object]:
    """mg(workspace, "verify", ...) → click Result (catch_exceptions off)."""

    def run(base: Path, *args: str):
        return CliRunner().invoke(cli, [*args, "-C", str(base)], catch_exceptions=False)

    return run


@pytest.fixture
def compiled(tmp_path: Path, mg) -> Path:
    """A workspace whose raw notes (one with a Japanese path) are compiled into wiki/."""
    for rel, text in NOTES.items():
        path = tmp_path / "raw" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    # the evidence servers of these tests listen on 127.0.0.1: the private network allowed
    (tmp_path / "mindgraph.yml").write_text("paths:\n  raw: raw\ntrust:\n  fetch_private_hosts: "
                                            "true\n", encoding="utf-8")
    result = mg(tmp_path, "ingest")
    assert result.exit_code == 0, result.output
    return tmp_path
