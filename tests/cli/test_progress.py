"""Long work without a terminal (CI, a pipe, an agent) prints a line of progress now and
then on stderr; short runs print nothing extra, and stdout stays the command's answer."""

import json
import re

import pytest
from click.testing import CliRunner
from hashing_workspace import hashing_workspace

from mindgraph.cli import cli, progress


@pytest.fixture()
def workspace(tmp_path):
    """A workspace of 12 notes, embedded with the fast hashing model."""
    return hashing_workspace(tmp_path, 12, ingest=False)


def run(workspace, *args):
    result = CliRunner().invoke(cli, [*args, "-C", str(workspace)])   # stderr: not a TTY
    assert result.exit_code == 0, result.output
    return result


def test_without_a_terminal_long_work_prints_progress_lines_on_stderr(workspace,
                                                                      monkeypatch):
    monkeypatch.setattr(progress, "EVERY_S", 0.0)     # every update is "long enough"
    ingest = run(workspace, "ingest")
    lines = ingest.stderr.splitlines()
    phases = ("Reading: ", "Linking: ", "Checking: ", "Compiling: ")     # in this order
    assert lines and all(line.startswith(phases) for line in lines), lines
    assert [p for p in phases if any(line.startswith(p) for line in lines)] == list(phases)
    for phase in phases:        # each phase reports until it is done
        assert [line for line in lines if line.startswith(phase)][-1].startswith(
            f"{phase}12 of 12 notes (100%), ")
    assert "Compiling" not in ingest.stdout

    embed = run(workspace, "embed", "--json")
    lines = embed.stderr.splitlines()
    total = json.loads(embed.stdout)["embedded"]      # stdout is still pure JSON
    assert total > 12 and lines[-1].startswith(f"Embedding: {total} of {total} chunks (100%)")


def test_a_progress_line_before_the_end_says_how_long_the_rest_will_take(workspace,
                                                                         monkeypatch):
    monkeypatch.setattr(progress, "EVERY_S", 0.0)
    for i in range(12, 60):                           # more chunks than one batch of 64
        (workspace / "raw" / f"Note {i}.md").write_text(f"# Note {i}\n\nText {i}.\n")
    run(workspace, "ingest")
    lines = run(workspace, "embed").stderr.splitlines()
    assert len(lines) >= 2, lines
    assert all(re.fullmatch(r"Embedding: \d+ of \d+ chunks \(\d+%\), \d+ s, ETA \d+ s", line)
               for line in lines[:-1]), lines
    assert "ETA" not in lines[-1]                     # done: nothing left to wait for


def test_short_work_prints_no_progress(workspace):
    assert run(workspace, "ingest").stderr == ""
    assert run(workspace, "embed").stderr == ""



def test_lint_says_how_far_it_is_on_stderr(workspace, monkeypatch):
    """`mindgraph lint` read 519 pages of the Help vault's three languages for 15 s and
    printed nothing until its answer; it reports each phase as ingest does now."""
    run(workspace, "ingest")
    assert run(workspace, "lint").stderr == ""                # short work: nothing extra
    monkeypatch.setattr(progress, "EVERY_S", 0.0)
    lint = run(workspace, "lint", "--json")
    lines = lint.stderr.splitlines()
    phases = ("Reading: ", "Comparing facts: ", "Finding deprecations: ", "Indexing text: ",
              "Finding near-duplicates: ")                     # in this order
    assert lines and all(line.startswith(phases) for line in lines), lines
    assert [p for p in phases if any(line.startswith(p) for line in lines)] == list(phases)
    for phase in phases:        # each phase reports until it is done
        assert [line for line in lines if line.startswith(phase)][-1].startswith(
            f"{phase}12 of 12 pages (100%), ")
    assert json.loads(lint.stdout)["pages"] == 12            # stdout is still pure JSON
    assert run(workspace, "lint", "--no-progress").stderr == ""
