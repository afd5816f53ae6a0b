"""`retrieval.keyword_only_penalty` through `mindgraph search --hybrid --json`: a page BM25
found that the vector side did not rank, though it has vectors, loses that share (0.1) of its
fused score; a page not embedded yet keeps its own (retrieval/weakvector.py)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

QUERY = "glider thermals over the ridge"


def search(workspace, monkeypatch, penalty: str) -> dict[str, dict]:
    monkeypatch.setenv("MINDGRAPH_RETRIEVAL__KEYWORD_ONLY_PENALTY", penalty)
    out = CliRunner().invoke(cli, ["search", "--hybrid", QUERY, "-n", "30", "-C",
                                   str(workspace), "--json"])
    assert out.exit_code == 0, out.output
    return {r["page"]: r for r in json.loads(out.stdout)["results"]}


def test_keyword_hits_the_vector_side_did_not_rank_lose_a_tenth(tmp_path, monkeypatch):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    for i in range(120):   # more pages than the vector side ranks (3 × -n 30)
        (wiki / f"Flight {i}.md").write_text(
            f"# Flight {i}\n\nLog {i}: a glider over field {i}, landing at dusk {i}.\n")
    for j in range(3):     # the query's rare words among 60 others: BM25 ranks these high,
        other = " ".join(f"w{(j * 997 + k * 31) % 3000}" for k in range(60))   # vectors not
        (wiki / f"Almanac {j}.md").write_text(f"# Almanac {j}\n\n{other} thermals ridge\n")
    (tmp_path / "mindgraph.yml").write_text(
        "embedding: {provider: hashing, dimension: 256}\n")
    assert CliRunner().invoke(cli, ["embed", "-C", str(tmp_path)]).exit_code == 0
    (wiki / "Fresh.md").write_text("# Fresh\n\nA glider rode thermals over the ridge, written after the embed.\n")
    on, off = search(tmp_path, monkeypatch, "0.1"), search(tmp_path, monkeypatch, "0")
    unbacked = [p for p, r in off.items() if "keyword" in r["sources"]
                and "vector" not in r["sources"] and p != "Fresh.md"]
    backed = [p for p, r in off.items() if "vector" in r["sources"]]
    assert [p for p in unbacked if p.startswith("Almanac")]
    assert backed and "Fresh.md" in off
    for page in unbacked:
        assert on[page]["score"] == pytest.approx(0.9 * off[page]["score"], abs=2e-4)
    for page in backed + ["Fresh.md"]:      # backed by vectors, or none to judge it by
        assert on[page]["score"] == off[page]["score"]
    monkeypatch.setenv("MINDGRAPH_RETRIEVAL__KEYWORD_ONLY_PENALTY", "1")
    bad = CliRunner().invoke(cli, ["search", "--hybrid", QUERY, "-C", str(tmp_path)])
    assert bad.exit_code != 0 and "retrieval.keyword_only_penalty" in bad.output
