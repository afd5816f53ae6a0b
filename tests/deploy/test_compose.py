"""docker-compose.yml, checked without a container engine: Debian's docker-compose `config`
(interpolation and the compose-spec schema) and what the reference deployment must hold."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from deploy_files import REPO, compose

SECRETS = {"MINDGRAPH_API_TOKEN": "t" * 43, "POSTGRES_PASSWORD": "pw-from-env"}
needs_compose = pytest.mark.skipif(shutil.which("docker-compose") is None and not os.environ.get(
    "CI"), reason="docker-compose not installed (.ci/run installs it)")


def compose_config(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS and "MINDGRAPH" not in k}
    return subprocess.run(["docker-compose", "-f", str(REPO / "docker-compose.yml"),
                           "--project-directory", str(REPO), "config"],
                          capture_output=True, text=True, timeout=60, env={**clean, **env})


@needs_compose
def test_docker_compose_validates_it_and_fills_in_the_secrets_from_the_environment():
    result = compose_config(SECRETS)
    assert result.returncode == 0, result.stderr
    assert "pw-from-env@postgres:5432/mindgraph" in result.stdout
    assert "t" * 43 in result.stdout


@needs_compose
@pytest.mark.parametrize("missing", sorted(SECRETS))
def test_no_default_secret_compose_refuses_to_start_without_each(missing):
    result = compose_config({k: v for k, v in SECRETS.items() if k != missing})
    assert result.returncode != 0
    assert f"set {missing} in .env" in result.stderr


def test_mindgraph_is_built_here_and_waits_for_a_healthy_pgvector():
    services = compose()["services"]
    assert set(services) == {"mindgraph", "postgres"}
    mindgraph, postgres = services["mindgraph"], services["postgres"]
    assert mindgraph["build"] == "."
    assert mindgraph["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert postgres["image"] == "pgvector/pgvector:pg16"
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    assert any(v.endswith(":/workspace") for v in mindgraph["volumes"])
    assert "pgdata:/var/lib/postgresql/data" in postgres["volumes"]


def test_secrets_come_only_from_the_environment_and_ports_stay_on_loopback():
    services = compose()["services"]
    env = services["mindgraph"]["environment"]
    assert re.fullmatch(r"\$\{MINDGRAPH_API_TOKEN:\?[^}]+\}", env["MINDGRAPH_API_TOKEN"])
    assert "${POSTGRES_PASSWORD:?" in env["MINDGRAPH_PG_DSN"]
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith(
        "${POSTGRES_PASSWORD:?")
    assert env["MINDGRAPH_STORE__BACKEND"] == "pgvector"
    for service in services.values():
        assert all(str(p).startswith("127.0.0.1:") for p in service.get("ports", ()))
    example = (REPO / ".env.example").read_text(encoding="utf-8")
    assert re.search(r"^MINDGRAPH_API_TOKEN=$", example, re.M)
    assert re.search(r"^POSTGRES_PASSWORD=$", example, re.M)
    assert ".env" in (REPO / ".gitignore").read_text(encoding="utf-8").split()
