"""`mindgraph check` on symlinks in wiki/: a symlinked folder that leads out of the wiki is
named once (scans skip it), and a finding's message does not repeat the path it is about."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")


@pytest.fixture
def workspace(tmp_path):
    base = tmp_path / "kb"
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(base)]).exit_code == 0
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    (base / "raw" / "Canvas.md").write_text("# Canvas\n\nCanvas is a board for notes.\n")
    assert runner.invoke(cli, ["ingest", "-C", str(base)]).exit_code == 0
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "Secret.md").write_text("# Secret\n\nNot part of the wiki.\n")
    (outside / "deep" / "More.md").write_text("# More\n\nNor this.\n")
    (outside / "config.md").write_text("# Config\n")
    os.symlink(outside, base / "wiki" / "leakdir")
    os.symlink(outside / "config.md", base / "wiki" / "config.md")
    return base


def test_check_names_a_symlinked_folder_once(workspace):
    result = CliRunner().invoke(cli, ["check", "-C", str(workspace), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    folders = [f for f in report["findings"] if f["kind"] == "symlinked-folder"]
    assert [f["path"] for f in folders] == ["leakdir"]
    assert folders[0]["severity"] == "warning"
    assert str(workspace.parent / "outside") in folders[0]["message"]
    assert "not follow" in folders[0]["message"]
    # its pages are skipped, not read
    assert not any("Secret" in f["path"] or "More" in f["path"] for f in report["findings"])


def test_check_does_not_repeat_the_path_in_its_message(workspace):
    result = CliRunner().invoke(cli, ["check", "-C", str(workspace), "--limit", "0"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.output.splitlines() if "config.md" in ln]
    assert lines and "symlink points outside the vault" in lines[0]
    assert "config.md: config.md" not in result.output
    leak = [ln for ln in result.output.splitlines() if ln.startswith("warning symlinked-folder")]
    assert len(leak) == 1 and "leakdir: a symlink to a folder outside the wiki" in leak[0]
