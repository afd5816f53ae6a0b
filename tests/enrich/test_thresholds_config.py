"""A bad ``enrich.thresholds`` entry is a config error naming where it was written: the file
given with --config (not "mindgraph.yml") and its line, or the environment variable. Through
the CLI."""

from __future__ import annotations

from click.testing import CliRunner

from mindgraph.cli import cli


def workspace(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "wiki").mkdir()
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    return tmp_path


def stats(root, *args, env=None):
    return CliRunner().invoke(cli, ["-C", str(root), *args, "stats"], env=env)


def test_a_bad_cosine_names_the_config_file_given_and_its_line(tmp_path):
    root = workspace(tmp_path)
    other = root / "other.yml"
    other.write_text("embedding:\n  provider: hashing\nenrich:\n  thresholds:\n"
                     "    e5: 0.9\n    minilm: 2\n")
    result = stats(root, "--config", str(other))
    assert result.exit_code == 2, result.output
    assert result.output.startswith(
        f"Error: {other}:6: 'enrich.thresholds.minilm' is 2; give a cosine between 0 and 1")
    assert "mindgraph.yml" not in result.output


def test_a_bad_cosine_from_the_environment_names_the_variable(tmp_path):
    root = workspace(tmp_path)
    result = stats(root, env={"MINDGRAPH_ENRICH__THRESHOLDS": "{e5: high}"})
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Error: Environment variable MINDGRAPH_ENRICH__THRESHOLDS: "
                                    "'enrich.thresholds.e5' is 'high'")
    assert "mindgraph.yml" not in result.output
