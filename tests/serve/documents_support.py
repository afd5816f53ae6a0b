"""Helpers of the documents API tests (imported by module name: tests/serve has its own
conftest, so ``from conftest import`` would not find the root one)."""

from click.testing import CliRunner

from mindgraph.cli import cli


def compiled_tenants(base, monkeypatch, config, notes, tokens):
    """``base`` as a compiled workspace: ``config`` as mindgraph.yml, ``notes`` (raw path →
    text) under raw/, each identity's token in ``TOKEN_<NAME>``; returns ``base``."""
    for name, token in tokens.items():
        monkeypatch.setenv(f"TOKEN_{name.upper()}", token)
    (base / "mindgraph.yml").write_text(config)
    for path, text in notes.items():
        (base / "raw" / path).parent.mkdir(parents=True, exist_ok=True)
        (base / "raw" / path).write_text(text)
    result = CliRunner().invoke(cli, ["-C", str(base), "ingest"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return base
