"""A workspace whose raw/ is a vault outside it (`paths: {raw: ../vault}`, as the README
allows): what a new user meets on the first run, through the CLI."""

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


@pytest.fixture
def ws(tmp_path):
    vault = tmp_path / "vault"
    (vault / "people").mkdir(parents=True)
    (vault / "Home.md").write_text("# Home\n\nSee [[Bob]] and [[Alice]].\n")
    (vault / "people" / "Alice.md").write_text("# Alice\n\nAlice works with Bob.\n")
    (vault / "people" / "Bob.md").write_text("---\ntags: [people\n---\n# Bob\n\nBob is here.\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "mindgraph.yml").write_text("paths:\n  raw: ../vault\n")
    assert run("ingest", "-C", str(workspace)).exit_code in (0, 1)
    return workspace


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_lint_accepts_provenance_sources_in_a_raw_folder_outside_the_workspace(ws):
    page = (ws / "wiki" / "Home.md").read_text()
    assert "Home.md" in page.split("---")[1]        # the compiler recorded its source
    result = run("lint", "-C", str(ws), "--json")
    findings = json.loads(result.stdout)["findings"]
    assert [f for f in findings if f["rule"] == "dangling-reference"] == []

