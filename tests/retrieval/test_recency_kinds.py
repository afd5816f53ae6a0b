"""DESIGN's recency: λ 0.003 by default, 0.001 for stable knowledge and 0.005 for fast-moving
decisions. Through the real CLI: a decision decays faster than a plain note of the same age,
a reference page slower, by the factors exp(−λ × days) that `search --hybrid --json` shows."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

NOTES = {
    "Newest.md": "---\ncreated: 2026-01-01\n---\n# Newest\nThe trunk roadmap as of now.\n",
    "Choice.md": "---\ntype: decision\ncreated: 2025-01-01\n---\n# Choice\n"
                 "We chose a blue trunk for the roadmap.\n",
    "Manual.md": "---\ntype: reference\ncreated: 2025-01-01\n---\n# Manual\n"
                 "How a trunk is packed, for the roadmap.\n",
    "Tagged.md": "---\ntags: [decision]\ncreated: 2025-01-01\n---\n# Tagged\n"
                 "A trunk vote on the roadmap.\n",
    "Plain.md": "---\ncreated: 2025-01-01\n---\n# Plain\nA trunk note on the roadmap.\n",
}
AGE = 365          # days older than the vault's newest page, 2026-01-01


def _workspace(tmp_path, retrieval: str = "") -> str:
    for name, text in NOTES.items():
        (tmp_path / "raw").mkdir(exist_ok=True)
        (tmp_path / "raw" / name).write_text(text, encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n"
        f"retrieval:\n  recency: on\n  min_score: 0\n{retrieval}")
    result = CliRunner().invoke(cli, ["ingest", "-C", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return str(tmp_path)


def _factors(workspace: str) -> dict[str, float]:
    result = CliRunner().invoke(cli, ["search", "--hybrid", "trunk roadmap", "-C", workspace,
                                      "--json", "-n", "10"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return {r["page"]: r["boosts"].get("recency", 1.0)
            for r in json.loads(result.output)["results"]}


def test_decisions_decay_faster_and_reference_pages_slower_than_notes(tmp_path):
    factors = _factors(_workspace(tmp_path))
    assert factors["Newest.md"] == 1.0
    assert factors["Plain.md"] == pytest.approx(math.exp(-0.003 * AGE), abs=1e-3)
    assert factors["Choice.md"] == pytest.approx(math.exp(-0.005 * AGE), abs=1e-3)
    assert factors["Tagged.md"] == pytest.approx(math.exp(-0.005 * AGE), abs=1e-3)
    assert factors["Manual.md"] == pytest.approx(math.exp(-0.001 * AGE), abs=1e-3)


def test_an_empty_mapping_gives_every_page_the_one_lambda(tmp_path):
    factors = _factors(_workspace(tmp_path, "  recency_lambdas: {}\n"))
    one = math.exp(-0.003 * AGE)
    assert [factors[p] for p in ("Plain.md", "Choice.md", "Tagged.md", "Manual.md")] == \
        pytest.approx([one] * 4, abs=1e-3)


def test_a_bad_rate_names_the_key(tmp_path):
    (tmp_path / "mindgraph.yml").write_text(
        "retrieval:\n  recency_lambdas: {decision: -1}\n")
    result = CliRunner().invoke(cli, ["search", "x", "-C", str(tmp_path)])
    assert result.exit_code != 0
    assert "retrieval.recency_lambdas" in result.output
    assert "decay rates of 0 or more" in result.output
