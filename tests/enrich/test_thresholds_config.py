"""A bad ``enrich.thresholds`` entry is a config error naming where it was written: the file
given with --config (not "mindgraph.yml") and its line, or the environment variable. An entry
naming no model at all (a typo) was ignored without a word; it is an error like an unknown
key, listing the known models. Through the CLI."""

from __future__ import annotations

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.config import REMOTE_EMBEDDING_MODELS


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


def test_an_entry_naming_no_model_is_an_error_listing_the_known_ones(tmp_path):
    root = workspace(tmp_path)
    (root / "mindgraph.yml").write_text("enrich:\n  thresholds:\n    use-multilingual: 0.6\n"
                                        "    mini-lm: 0.5\n")
    result = stats(root)
    assert result.exit_code == 2, result.output
    message = result.output
    assert message.startswith(f"Error: {root / 'mindgraph.yml'}:4: 'enrich.thresholds.mini-lm' "
                              f"names no embedding model")
    assert "Known models: all-MiniLM-L6-v2, " in message and "multilingual-e5-small" in message
    assert "this workspace embeds with all-MiniLM-L6-v2, use-multilingual-v3." in message
    assert "Remove or rename it." in message


def test_parts_of_known_and_configured_model_names_are_accepted(tmp_path):
    root = workspace(tmp_path)
    (root / "mindgraph.yml").write_text(
        "embedding:\n  provider: openai\n  model: my-own-embedder\n  dimension: 8\n"
        "enrich:\n  thresholds: {e5: 0.9, MiniLM: 0.7, text-embedding-3: 0.5, own-emb: 0.4}\n")
    result = stats(root)
    assert result.exit_code == 0, result.output


def test_the_remote_model_names_are_the_providers():
    from mindgraph.providers.embedding import gemini, openai

    assert set(REMOTE_EMBEDDING_MODELS) == {*gemini.KNOWN_DIMENSIONS, gemini.DEFAULT_MODEL,
                                            *openai.KNOWN_DIMENSIONS, openai.DEFAULT_MODEL}


def test_an_entry_every_model_name_contains_is_an_error(tmp_path):
    """'' and 'e' are in every model's name: one cut-off for all of them, which is
    enrich.link_threshold's job (a tester's finding: they were accepted)."""
    for part in ('""', "e"):
        root = tmp_path / f"ws{len(part)}"
        root.mkdir()
        workspace(root)
        (root / "mindgraph.yml").write_text(f"enrich:\n  thresholds:\n    {part}: 0.5\n")
        result = stats(root)
        assert result.exit_code == 2, result.output
        assert "is part of every model's name (or empty)" in result.output
        assert "enrich.link_threshold" in result.output
