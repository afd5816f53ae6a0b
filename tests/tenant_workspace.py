"""A compiled multi-tenant workspace for tests that go through the real entry points: the
owner's CLI and a REST client per identity (importable from any test folder: tests/ is on
sys.path through its conftest)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from fastapi.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

LOCAL = "http://127.0.0.1:8765"     # the Host a loopback server answers to


def owner(base: Path, *args: str):
    """`mindgraph -C base ARGS` as the workspace's owner; it must succeed."""
    result = CliRunner().invoke(cli, ["-C", str(base), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def tenant_clients(base: Path, monkeypatch, tokens: dict[str, str], config: str,
                   files: dict[str, str]) -> dict[str, TestClient]:
    """Write ``config`` and ``files`` (paths relative to ``base``) into ``base``, set each
    identity's token in TOKEN_<NAME>, ingest, and return a REST client per identity."""
    for name, token in tokens.items():
        monkeypatch.setenv(f"TOKEN_{name.upper()}", token)
    (base / "mindgraph.yml").write_text(config)
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    owner(base, "ingest")
    app = create_app(Mindgraph.open(base))
    return {name: TestClient(app, base_url=LOCAL, headers={"Authorization": f"Bearer {token}"})
            for name, token in tokens.items()}
