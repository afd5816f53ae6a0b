"""Helpers of the documents API tests (imported by module name: tests/serve has its own
conftest, so ``from conftest import`` would not find the root one)."""

import hashlib

from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"
HASHING = "embedding:\n  provider: hashing\n  dimension: 64\n"


def compiled_tenants(base, monkeypatch, config, notes, tokens):
    """``base`` as a compiled workspace: ``config`` as mindgraph.yml, ``notes`` (raw path →
    text) under raw/, each identity's token in ``TOKEN_<NAME>``; returns ``base``."""
    for name, token in tokens.items():
        monkeypatch.setenv(f"TOKEN_{name.upper()}", token)
    (base / "mindgraph.yml").write_text(config)
    for path, text in notes.items():
        (base / "raw" / path).parent.mkdir(parents=True, exist_ok=True)
        (base / "raw" / path).write_text(text)
    result = CliRunner().invoke(cli, ["-C", str(base), "ingest"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return base


def raw_hashes(raw):
    """Each file under ``raw`` (relative path) → its SHA-256: what a refused write must leave."""
    return {p.relative_to(raw).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(raw.rglob("*")) if p.is_file()}


def served_workspace(base, config=""):
    """``base`` compiled with one note (raw/Kept.md), hashing embeddings and ``config``; a
    test client of its REST app (owner, no token)."""
    (base / "mindgraph.yml").write_text(HASHING + config)
    (base / "raw").mkdir()
    (base / "raw" / "Kept.md").write_text("# Kept\n\nTrunks stay.\n")
    result = CliRunner().invoke(cli, ["-C", str(base), "ingest"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return TestClient(create_app(Mindgraph.open(base)), base_url=LOCAL)
