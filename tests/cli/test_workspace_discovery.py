"""Which workspace a command works on: -C before or after the command, the nearest
mindgraph.yml upwards (as git finds its repository), and a clear error outside any."""

import json

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli


@pytest.fixture()
def workspace(tmp_path):
    """An initialised workspace at tmp_path/notes with one note ingested."""
    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(tmp_path / "notes")]).exit_code == 0
    (tmp_path / "notes" / "raw" / "topics").mkdir()
    (tmp_path / "notes" / "raw" / "topics" / "Alpha.md").write_text(
        "# Alpha\nAlpha talks about zebras, released 2024-03-01.\n")
    result = runner.invoke(cli, ["ingest", "-C", str(tmp_path / "notes")])
    assert result.exit_code == 0, result.output
    return tmp_path / "notes"


def search_paths(result):
    assert result.exit_code == 0, result.output
    return [r["page"] for r in json.loads(result.output)["results"]]


def test_dir_option_works_before_the_command_as_well_as_after(workspace, tmp_path,
                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    after = runner.invoke(cli, ["search", "zebras", "--json", "-C", "notes"])
    before = runner.invoke(cli, ["-C", "notes", "search", "zebras", "--json"])
    assert search_paths(before) == search_paths(after) == ["topics/Alpha.md"]
    config = runner.invoke(cli, ["--config", "notes/mindgraph.yml", "-C", "notes",
                                 "stats", "--json"])
    assert config.exit_code == 0, config.output
    assert json.loads(config.output)["pages"] == 1


def test_an_option_after_the_command_wins_over_one_before(workspace, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["-C", "empty", "search", "zebras", "--json", "-C",
                                      "notes"])
    assert search_paths(result) == ["topics/Alpha.md"]


def test_a_command_run_in_a_sub_folder_finds_the_workspace_above(workspace, monkeypatch):
    monkeypatch.chdir(workspace / "raw" / "topics")
    runner = CliRunner()
    assert search_paths(runner.invoke(cli, ["search", "zebras", "--json"])) == [
        "topics/Alpha.md"]
    timeline = runner.invoke(cli, ["timeline", "Alpha", "--json", "--no-git"])
    assert timeline.exit_code == 0, timeline.output
    assert [e["path"] for e in json.loads(timeline.output)["entries"]] == ["topics/Alpha.md"]


def test_init_honours_a_dir_given_before_the_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["-C", "outer", "init", "kb"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "outer" / "kb" / "mindgraph.yml").is_file()


@pytest.mark.parametrize("command", [["timeline", "Alpha"], ["usage"], ["pull"],
                                     ["search", "x"], ["stats"]])
def test_commands_outside_a_workspace_say_so_instead_of_answering_empty(command, tmp_path,
                                                                        monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv in (command, [*command, "-C", str(tmp_path)]):
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code == 2, (argv, result.output)
        assert "is not a mindgraph workspace" in result.output
        assert "pass -C DIR" in result.output and "mindgraph init" in result.output
    assert list(tmp_path.iterdir()) == []      # nothing written outside a workspace


def test_context_finds_the_workspace_above_and_logs_itself_as_cli(workspace, monkeypatch):
    monkeypatch.chdir(workspace / "raw" / "topics")
    result = CliRunner().invoke(cli, ["context", "zebras", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["status"] == "ok", data
    assert any("topics/Alpha.md" in source for source in data["sources"])
    log = (workspace / ".mindgraph" / "usage.jsonl").read_text().splitlines()
    assert [json.loads(line)["interface"] for line in log][-1] == "cli"


def test_context_offers_the_same_workspace_options_as_the_other_commands():
    def option_help(command):
        result = CliRunner().invoke(cli, [*command, "--help"])
        assert result.exit_code == 0, result.output
        text = " ".join(result.output.split())
        return text[text.index("-C, --dir"):text.index("--config")]

    assert option_help(["context", "x"]) == option_help(["search", "x"])
    assert "[default: .]" not in option_help(["context", "x"])


def test_dir_option_works_between_a_group_and_its_subcommand(workspace, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    runner = CliRunner()
    for argv in (["graph", "-C", "notes", "hubs", "--json"],
                 ["-C", "empty", "graph", "-C", "notes", "hubs", "--json"],
                 ["graph", "-C", "empty", "hubs", "--json", "-C", "notes"],
                 ["graph", "--config", "notes/mindgraph.yml", "-C", "notes", "hubs", "--json"]):
        result = runner.invoke(cli, argv)
        assert result.exit_code == 0, (argv, result.output)
        assert [h["path"] for h in json.loads(result.output)["hubs"]] == ["topics/Alpha.md"]


def test_help_says_an_explicit_dir_is_not_searched_upwards(workspace):
    for argv in (["--help"], ["graph", "--help"], ["graph", "hubs", "--help"],
                 ["search", "--help"], ["context", "--help"]):
        help_text = " ".join(CliRunner().invoke(cli, argv).output.split())
        assert "is not searched upwards" in help_text, argv
    sub = workspace / "raw" / "topics"
    result = CliRunner().invoke(cli, ["graph", "-C", str(sub), "hubs"])
    assert result.exit_code == 2 and "is not a mindgraph workspace" in result.output
