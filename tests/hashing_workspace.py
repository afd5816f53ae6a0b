"""A workspace of numbered two-section notes embedded with the fast hashing model, for tests of
embedding runs (progress, locks, kills) through the real CLI (importable from any test folder:
tests/ is on sys.path through its conftest)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mindgraph.cli import cli


def hashing_workspace(root: Path, notes: int, *, ingest: bool = True) -> Path:
    """``notes`` notes of two sections each under ``root``/raw (2 × notes chunks), compiled
    by `mindgraph ingest` unless ``ingest`` is false; returns ``root``."""
    (root / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    (root / "raw").mkdir()
    for i in range(notes):
        (root / "raw" / f"Note {i}.md").write_text(
            f"# Note {i}\n\nText of note {i}.\n\n## Part\nMore about topic {i}.\n")
    if ingest:
        run = CliRunner().invoke(cli, ["ingest", "-C", str(root)])
        assert run.exit_code == 0, run.output
    return root
