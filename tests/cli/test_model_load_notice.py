"""A slow first load of the multilingual model is said on stderr, once, and never on stdout.

The first Japanese or Chinese hybrid query of a process waits for use-multilingual-v3 (~3–6 s
of numpy reading its weights) and the CLI used to say nothing meanwhile. A real `mindgraph`
process is run (a fresh process is the case): `--json` on stdout must still parse.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

pytestmark = pytest.mark.slow

NOTICE = "loading the multilingual embedding model use-multilingual-v3 (first query only)…"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("notice")
    wiki = root / "wiki"
    wiki.mkdir()
    (wiki / "同期.md").write_text("# 同期\n\nスマートフォン、タブレット、パソコンのすべての端末"
                                  "で保管庫を同じ状態に保ちます。\n")
    (wiki / "Canvas.md").write_text("# Canvas\n\nDraw cards and arrows on an infinite "
                                    "board.\n")
    (root / "mindgraph.yml").write_text("paths: {wiki: wiki, state: state}\n")
    result = CliRunner().invoke(cli, ["embed", "-C", str(root), "--json"])
    assert result.exit_code == 0, result.output
    return root


def mindgraph(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "mindgraph", *args, "-C", str(workspace)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    return done


def test_the_first_japanese_query_says_it_loads_the_model_on_stderr(workspace):
    done = mindgraph(workspace, "search", "--hybrid", "端末で保管庫を同じに保つ", "--json")
    answer = json.loads(done.stdout)                  # stdout is the JSON and nothing else
    assert answer["results"][0]["page"] == "同期.md"
    assert NOTICE not in done.stdout
    assert done.stderr.count(NOTICE) == 1, done.stderr
    text = mindgraph(workspace, "search", "--hybrid", "端末で保管庫を同じに保つ")
    assert NOTICE not in text.stdout and NOTICE in text.stderr
    context = mindgraph(workspace, "context", "端末で保管庫を同じに保つ", "--json")
    assert json.loads(context.stdout)["sources"] and NOTICE in context.stderr


def test_an_english_query_over_english_pages_loads_no_multilingual_model(workspace):
    done = mindgraph(workspace, "search", "--hybrid", "cards and arrows", "--json")
    assert json.loads(done.stdout)["results"][0]["page"] == "Canvas.md"
    assert "loading the multilingual" not in done.stderr
