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


def test_postgres_gets_buffers_for_the_hnsw_index_and_shared_memory_for_its_build():
    # the image's defaults (shared_buffers 128 MB, Docker's 64 MB /dev/shm) held a seventh of
    # 100,000 notes' index and failed a parallel HNSW build of more than 64 MB
    from mindgraph.stores.pgvector import INDEX_BUILD_MEMORY_MB

    postgres = compose()["services"]["postgres"]
    command = " ".join(postgres["command"])
    buffers = re.search(r"shared_buffers=\$\{POSTGRES_SHARED_BUFFERS:-(\d+)GB\}", command)
    assert buffers and int(buffers.group(1)) * 1024 >= 1800, command  # 100k notes: 1.7 GB
    shm = re.fullmatch(r"\$\{POSTGRES_SHM_SIZE:-(\d+)gb\}", postgres["shm_size"])
    assert shm and int(shm.group(1)) * 1024 >= INDEX_BUILD_MEMORY_MB[1], postgres["shm_size"]
    example = (REPO / ".env.example").read_text(encoding="utf-8")
    assert "# POSTGRES_SHARED_BUFFERS=" in example and "# POSTGRES_SHM_SIZE=" in example


@needs_compose
def test_docker_compose_fills_in_the_postgres_memory_settings():
    result = compose_config({**SECRETS, "POSTGRES_SHARED_BUFFERS": "3GB"})
    assert result.returncode == 0, result.stderr
    assert "shared_buffers=3GB" in result.stdout
    default = compose_config(SECRETS)
    assert "shared_buffers=2GB" in default.stdout
