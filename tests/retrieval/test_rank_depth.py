"""A search for few results shows the first few of a search for 10 (`-n 3` is a prefix of
`-n 10`), through `mindgraph search --hybrid`: before, the candidate pools and the places the
reservations and the language preference consider shrank with -n, so the order of the first
results depended on how many were asked for (agents ask for 3 or 5; `context` for 5)."""

from __future__ import annotations

import json
import random

from click.testing import CliRunner

from mindgraph.cli import cli

WORDS = ("sync vault plugin canvas graph backlink template daily note folder tag search "
         "publish theme snippet hotkey command palette workspace bookmark outline audio pdf "
         "image embed alias property callout table export import mobile desktop").split()


def _workspace(tmp_path):
    """90 notes of random words from one small vocabulary (many near ties), hashing vectors."""
    rng = random.Random(7)
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    raw = tmp_path / "raw"
    raw.mkdir()
    for i in range(90):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 40)))
        more = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 25)))
        (raw / f"Note {i} {rng.choice(WORDS)}.md").write_text(
            f"# Note {i}\n\n{body}.\n\n## {rng.choice(WORDS).title()}\n\n{more}.\n")
    runner = CliRunner()
    for step in (["ingest"], ["embed"]):
        done = runner.invoke(cli, [*step, "-C", str(tmp_path)])
        assert done.exit_code == 0, done.output
    return tmp_path


def _pages(workspace, query, n):
    done = CliRunner().invoke(cli, ["search", "--hybrid", query, "-n", str(n), "--json",
                                    "-C", str(workspace)])
    assert done.exit_code == 0, done.output
    return [(r["page"], r.get("section_id")) for r in json.loads(done.stdout)["results"]]


def test_the_first_results_do_not_depend_on_how_many_are_asked_for(tmp_path):
    workspace = _workspace(tmp_path)
    rng = random.Random(11)
    for _ in range(12):
        query = " ".join(rng.sample(WORDS, 3))
        ten = _pages(workspace, query, 10)
        assert len(ten) == 10
        for n in (1, 3, 5):
            assert _pages(workspace, query, n) == ten[:n], (query, n)
