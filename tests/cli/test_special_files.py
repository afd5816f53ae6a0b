"""A FIFO (or any non-regular file) anywhere we read is skipped with a report, never a hang.

Each command runs through the real CLI with a short pytest timeout: before the fix, opening a
FIFO for reading blocked forever (timeline over raw/, check/stats/search over wiki/,
coverage over the codebase folder, usage over the log).
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


@pytest.fixture
def workspace_with_fifos(tmp_path):
    """A compiled workspace with a FIFO in raw/, in wiki/, in a codebase and as the usage log."""
    base = tmp_path / "kb"
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(base)]).exit_code == 0
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    (base / "raw" / "Canvas.md").write_text("---\ncreated: 2024-03-01\n---\n# Canvas\n\n"
                                            "Canvas was released on 2024-03-01.\n")
    result = runner.invoke(cli, ["ingest", "-C", str(base)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    os.mkfifo(base / "raw" / "pipe.md")
    os.mkfifo(base / "wiki" / "pipe.md")
    code = tmp_path / "code"
    code.mkdir()
    (code / "api.py").write_text('"""The API."""\n\ndef canvas():\n    """Canvas."""\n')
    os.mkfifo(code / "pipe.py")
    return base, code


@pytest.mark.timeout(60)
def test_timeline_skips_a_fifo_in_raw(workspace_with_fifos):
    base, _ = workspace_with_fifos
    result = CliRunner().invoke(cli, ["timeline", "Canvas", "-C", str(base), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Canvas" in result.output


@pytest.mark.timeout(60)
@pytest.mark.parametrize("command", [["check"], ["stats"], ["search", "canvas"],
                                     ["ingest"], ["embed"], ["get", "Canvas"]])
def test_wiki_commands_skip_a_fifo(workspace_with_fifos, command):
    base, _ = workspace_with_fifos
    result = CliRunner().invoke(cli, [*command, "-C", str(base)], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output


@pytest.mark.timeout(60)
def test_check_names_the_fifo_in_wiki(workspace_with_fifos):
    base, _ = workspace_with_fifos
    result = CliRunner().invoke(cli, ["check", "-C", str(base), "--json"],
                                catch_exceptions=False)
    assert "pipe.md" in result.output and "not a regular file" in result.output


@pytest.mark.timeout(60)
def test_coverage_skips_a_fifo_and_names_it(workspace_with_fifos):
    base, code = workspace_with_fifos
    result = CliRunner().invoke(cli, ["coverage", str(code), "-C", str(base), "--json"],
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.output)
    assert [u["unit"] for u in report["units"]] == ["api.py"]
    assert any("pipe.py" in note and "not a regular file" in note for note in report["notes"])


@pytest.mark.timeout(60)
def test_usage_skips_a_fifo_log(workspace_with_fifos):
    base, _ = workspace_with_fifos
    (base / ".mindgraph").mkdir(exist_ok=True)
    os.mkfifo(base / ".mindgraph" / "usage.jsonl")
    result = CliRunner().invoke(cli, ["usage", "-C", str(base)], catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.mark.timeout(60)
def test_a_fifo_config_is_a_clear_error(tmp_path):
    os.mkfifo(tmp_path / "mindgraph.yml")
    result = CliRunner().invoke(cli, ["stats", "-C", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 2
    assert "mindgraph.yml" in result.output and "not a regular file" in result.output


@pytest.mark.timeout(60)
def test_ingest_replaces_a_fifo_where_its_page_belongs(workspace_with_fifos):
    base, _ = workspace_with_fifos
    (base / "raw" / "Blocked.md").write_text("# Blocked\n\nA note whose page is a FIFO.\n")
    os.mkfifo(base / "wiki" / "Blocked.md")
    result = CliRunner().invoke(cli, ["ingest", "-C", str(base)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (base / "wiki" / "Blocked.md").is_file()
    assert "A note whose page is a FIFO." in (base / "wiki" / "Blocked.md").read_text()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_a_config_given_with_config_that_is_not_a_regular_file_is_a_clear_error(tmp_path, kind):
    """--config /dev/null said the file "does not exist"; a folder was click's usage error."""
    config = {"device": "/dev/null", "fifo": str(tmp_path / "pipe.yml"),
              "folder": str(tmp_path / "kb")}[kind]
    if kind == "fifo":
        os.mkfifo(config)
    if kind == "folder":
        assert CliRunner().invoke(cli, ["init", config]).exit_code == 0
    result = CliRunner().invoke(cli, ["--config", config, "stats"], catch_exceptions=False)
    assert result.exit_code == 2
    expected = {"device": "a device", "fifo": "a named pipe (FIFO)", "folder": "a folder"}[kind]
    assert f"Error: Config file {config} is {expected}, not a regular file;" in result.output
    if kind == "folder":
        assert f"--config {config}/mindgraph.yml) or the folder with -C" in result.output
    assert "Traceback" not in result.output and "does not exist" not in result.output
