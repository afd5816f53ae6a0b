"""Ctrl-C in a command: said in words with what is kept and how to go on (click printed
"Aborted!" and exited 1, and a user could not tell whether the workspace was broken)."""

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.ingest.applying import ApplySteps


@pytest.fixture()
def workspace(tmp_path):
    """A workspace with five notes in raw/, none compiled."""
    assert CliRunner().invoke(cli, ["init", str(tmp_path / "ws")]).exit_code == 0
    for n in range(5):
        (tmp_path / "ws" / "raw" / f"Note {n}.md").write_text(f"# Note {n}\n\nAbout {n}.\n")
    return tmp_path / "ws"


def test_ctrl_c_in_ingest_says_what_is_kept_and_the_next_run_goes_on(workspace, monkeypatch):
    stored = []
    store = ApplySteps._store

    def store_then_ctrl_c(self, note, text, index):
        if len(stored) == 2:
            raise KeyboardInterrupt
        stored.append(note)
        return store(self, note, text, index)

    monkeypatch.setattr(ApplySteps, "_store", store_then_ctrl_c)
    result = CliRunner().invoke(cli, ["ingest", "-C", str(workspace)])
    assert result.exit_code == 130
    assert result.output == ("Error: Interrupted (Ctrl-C): the notes compiled so far keep "
                             "their pages. Run `mindgraph ingest` again to go on from there.\n")
    monkeypatch.setattr(ApplySteps, "_store", store)
    again = CliRunner().invoke(cli, ["ingest", "--json", "-C", str(workspace)])
    report = json.loads(again.output)
    assert (report["ingested"], report["unchanged"], report["failed"]) == (3, 2, 0)


def test_ctrl_c_in_a_command_that_keeps_nothing_is_said_plainly(workspace, monkeypatch):
    from mindgraph.cli import stats_cmd

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(stats_cmd, "open_core", ctrl_c)
    result = CliRunner().invoke(cli, ["stats", "-C", str(workspace)])
    assert (result.exit_code, result.output) == (130, "Error: Interrupted (Ctrl-C).\n")
