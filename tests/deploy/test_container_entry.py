"""What the container runs, run here without an engine: the image's ENTRYPOINT and CMD with its
ENV and compose's environment, over a real PostgreSQL with pgvector; then its HEALTHCHECK."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest
from deploy_files import arguments, compose, env, instructions
from deploy_servers import TOKEN, free_port, start_serve, stop, wait_healthy

pytestmark = pytest.mark.pg


def container_env(workspace, pg_dsn: str, port: int, token: str | None) -> dict[str, str]:
    """The image's ENV, then compose's environment with its secrets filled in."""
    values = {**env(), "MINDGRAPH_SERVE__PORT": str(port)}
    for key, value in compose()["services"]["mindgraph"]["environment"].items():
        values[key] = str(value)
    values["MINDGRAPH_PG_DSN"] = pg_dsn       # `postgres:5432` is the compose network's name
    values["MINDGRAPH_API_TOKEN"] = token or ""
    return values


def container_command(workspace) -> tuple[str, ...]:
    words = dict((word, arguments(rest)) for word, rest in instructions()
                 if word in ("ENTRYPOINT", "CMD"))
    assert words["ENTRYPOINT"] == ["mindgraph"]
    return tuple(str(workspace) if a == "/workspace" else a for a in words["CMD"])


@pytest.fixture()
def workspace(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "wiki").mkdir()
    (tmp_path / "raw" / "Zeppelins.md").write_text("# Zeppelins\n\nAirships carry trunks.\n")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 32\n")
    return tmp_path


def test_the_container_serves_the_workspace_on_pgvector_and_its_healthcheck_passes(
        workspace, pg_dsn):
    port = free_port()
    server = start_serve(workspace, container_env(workspace, pg_dsn, port, TOKEN),
                         command=container_command(workspace))
    try:
        wait_healthy(server, f"http://127.0.0.1:{port}")
        check = next(rest for word, rest in instructions() if word == "HEALTHCHECK")
        probe = arguments(check.split(" CMD ", 1)[1])
        assert probe[0] == "python"
        code = probe[2].replace(":8765/", f":{port}/")
        assert subprocess.run([sys.executable, "-c", code], timeout=30).returncode == 0
        headers = {"Authorization": f"Bearer {TOKEN}"}
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/stats", timeout=30).status_code == 401
        for _ in range(150):      # --watch compiles raw/ at start
            hits = httpx.get(f"{base}/search", params={"q": "airships"}, headers=headers,
                             timeout=30).json()["results"]
            if hits:
                break
            subprocess.run(["sleep", "0.2"])
        assert hits[0]["page"] == "Zeppelins.md"
        status = httpx.get(f"{base}/health", timeout=30).json()
        assert status["status"] == "ok"
    finally:
        stop(server)


def test_without_a_token_the_container_refuses_to_start(workspace, pg_dsn):
    port = free_port()
    server = start_serve(workspace, container_env(workspace, pg_dsn, port, None),
                         command=container_command(workspace))
    try:
        assert server.wait(timeout=60) == 2
        assert "needs a bearer token" in server.stderr.read().decode()
    finally:
        stop(server)
