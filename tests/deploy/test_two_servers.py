"""Two `mindgraph serve` processes over one PostgreSQL (pgvector) answer identically and stay
consistent while the wiki changes: a third process (the CLI) ingests and embeds, both answer.

Each server is a real subprocess on a free port. They share the workspace (raw/, wiki/, as a
volume shared between machines would) and the database; every piece of state a server needs
is either in PostgreSQL or rebuilt from the wiki by each process — so each is also given a
state folder of its own here, as a stateless process on another machine would have. The second
server reads PostgreSQL as from a read replica (every transaction read-only)."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from click.testing import CliRunner
from deploy_servers import TOKEN, free_port, start_serve, stop, wait_healthy

from mindgraph.cli import cli

pytestmark = pytest.mark.pg

QUERIES = ("airships trunks", "dive deep", "kyoto temples", "boats")
HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def snapshot(base: str, shared_state: bool) -> dict:
    """Every answer that must agree between the servers (timings left out; raw/'s counts come
    from the ingest ledger, which is in the writer's state folder: compared when shared)."""
    out: dict = {}
    with httpx.Client(base_url=base, headers=HEADERS, timeout=60) as http:
        for q in QUERIES:
            for route in ("/search", "/smart_search"):
                body = http.get(route, params={"q": q, "limit": 5}).json()
                out[route, q] = [(r["page"], r["section_id"], round(r["score"], 6),
                                  sorted(r.get("retrievers", ()))) for r in body["results"]]
        stats = http.get("/stats").json()
        out["stats"] = {k: v for k, v in stats.items() if shared_state or k != "raw"}
        out["check"] = http.get("/check").json()
        for page in ("Zeppelins.md", "Submarines.md", "Kyoto.md"):
            answer = http.get("/page", params={"page": page})
            body = answer.json()
            out["page", page] = (answer.status_code, body.get("backlinks"), body.get("outgoing"))
        out["communities"] = http.get("/communities").json()
    return out


def read_only(dsn: str) -> str:
    """The DSN with every transaction read-only, as on a hot-standby replica."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    return make_conninfo(**{**conninfo_to_dict(dsn),
                            "options": "-c default_transaction_read_only=on"})


def cli_run(workspace, *args):
    result = CliRunner().invoke(cli, ["-C", str(workspace), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture()
def own_dsn(pg_dsn):
    """A database of this test's own on the shared server (other tests' vectors stay out)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    name = f"two_servers_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    dsn = make_conninfo(**{**conninfo_to_dict(pg_dsn), "dbname": name})
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    yield dsn
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture()
def workspace(tmp_path):
    base = tmp_path / "ws"
    (base / "raw").mkdir(parents=True)
    (base / "raw" / "Zeppelins.md").write_text(
        "# Zeppelins\n\nAirships carry trunks across the sea. See [[Submarines]].\n")
    (base / "raw" / "Submarines.md").write_text("# Submarines\n\nThey dive deep. #boats\n")
    (base / "raw" / "Ferries.md").write_text("# Ferries\n\nBoats that carry cars. #boats\n")
    (base / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 64\n"
        "store:\n  backend: pgvector\n  dsn_env: MINDGRAPH_PG_DSN\n")
    return base


@pytest.mark.parametrize("shared_state", [True, False], ids=["shared-state", "own-state"])
def test_two_servers_over_one_postgres_agree_before_and_after_changes(
        workspace, tmp_path, own_dsn, monkeypatch, shared_state):
    pg_dsn = own_dsn
    monkeypatch.setenv("MINDGRAPH_PG_DSN", pg_dsn)
    cli_run(workspace, "ingest")
    cli_run(workspace, "embed")
    servers, bases = [], []
    try:
        for name in ("a", "b"):
            port = free_port()
            # b reads as from a replica: every transaction read-only
            dsn = pg_dsn if name == "a" else read_only(pg_dsn)
            env = {"MINDGRAPH_PG_DSN": dsn, "MINDGRAPH_API_TOKEN": TOKEN}
            if not shared_state:    # caches rebuilt from the wiki by each process
                env["MINDGRAPH_PATHS__STATE"] = str(tmp_path / f"state-{name}")
            servers.append(start_serve(workspace, env, "--port", str(port)))
            bases.append(f"http://127.0.0.1:{port}")
        for server, base in zip(servers, bases):
            wait_healthy(server, base)
        first = [snapshot(base, shared_state) for base in bases]
        assert first[0] == first[1]
        assert first[0]["/search", "airships trunks"][0][0] == "Zeppelins.md"

        # the wiki changes: one note added, one edited, one deleted; the CLI ingests + embeds
        (workspace / "raw" / "Kyoto.md").write_text(
            "# Kyoto\n\nKyoto temples and [[Zeppelins]] at dawn.\n")
        (workspace / "raw" / "Submarines.md").write_text(
            "# Submarines\n\nThey dive deep under kyoto temples. #boats\n")
        (workspace / "raw" / "Ferries.md").unlink()
        cli_run(workspace, "ingest")
        cli_run(workspace, "embed")
        second = [snapshot(base, shared_state) for base in bases]
        assert second[0] == second[1]
        assert second[0] != first[0]
        pages = {hit[0] for hits in (second[0]["/smart_search", q] for q in QUERIES)
                 for hit in hits}
        assert "Ferries.md" not in pages and "Kyoto.md" in pages
        assert second[0]["page", "Kyoto.md"][0] == 200
        if shared_state:      # the CLI (the writer) reads the same ledger
            assert second[0]["stats"]["raw"] == json.loads(cli_run(workspace, "stats",
                                                                    "--json"))["raw"]
    finally:
        for server in servers:
            stop(server)
