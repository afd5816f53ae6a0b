"""Does one flooding token hold up another's searches? The quiet agent's /search latency on a
`mindgraph serve` with two identities, alone and while the other identity floods it, this
checkout against a baseline checkout, interleaved in one run.

    python bench/bench_fair_lanes.py --baseline /work/wt/base20          # rounds of both
    python bench/bench_fair_lanes.py --baseline DIR --rounds 3 --flood 100 --requests 80
    python bench/bench_fair_lanes.py --baseline DIR --per-identity 4    # this one's cap
    python bench/bench_fair_lanes.py --baseline DIR --share 0   # this one, all worked at once

A workspace in a temp dir whose wiki is a copy of the Obsidian Help vault (English, ~180
pages) with hashing embeddings and the default budgets; for each checkout (its own .venv's
python, run with -P from the temp dir so it imports its own code) a server is started, the
quiet identity sends --requests searches one after another alone, then again while a flooder
process keeps --flood searches of the other identity in flight (sending the next as soon as
one is answered, 429 included: it does not back off; raw HTTP/1.1 on asyncio streams,
so the flooder itself is cheap). Reported per checkout: the quiet agent's p50/p95 latency
(ms, wall: what an agent waits) and statuses in both phases, and the flooder's statuses and
answers a second (from its first answer to its end: the server's throughput meanwhile). The
checkouts take turns within each round, the order swapped each round.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)
from serving import wait_healthy  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
VAULT = shared_corpora.corpora() / "obsidian-help" / "en"
WORDS = ["canvas", "bookmarks", "properties", "sync", "publish", "graph", "templates", "links",
         "plugins", "search", "themes", "hotkeys", "backlinks", "daily notes", "embeds"]
TOKENS = {"flooder": "f" * 40, "quiet": "q" * 40}
CONFIG = """\
embedding: {provider: hashing, dimension: 64}
scopes:
  identities:
    - {name: flooder, tenant: acme, agent: flooder, token_env: TOKEN_FLOODER}
    - {name: quiet, tenant: acme, agent: quiet, token_env: TOKEN_QUIET}
"""
FLOODER = r"""
import asyncio, collections, json, sys, time
from urllib.parse import urlsplit
base, token, connections = sys.argv[1], sys.argv[2], int(sys.argv[3])
statuses = collections.Counter()
started = []
async def one(i):
    url = urlsplit(base)
    reader, writer = await asyncio.open_connection(url.hostname, url.port)
    request = (f"GET /search?q=note+{i} HTTP/1.1\r\nHost: {url.netloc}\r\n"
               f"Authorization: Bearer {token}\r\n\r\n").encode()
    while True:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        length = next(int(l.split(":", 1)[1]) for l in lines if l.lower().startswith("content-length:"))
        await reader.readexactly(length)
        if not statuses:
            started.append(time.perf_counter())
            print("flooding", flush=True)
        statuses[lines[0].split()[1]] += 1
        if any(l.lower() == "connection: close" for l in lines):
            writer.close()
            reader, writer = await asyncio.open_connection(url.hostname, url.port)
async def main():
    tasks = [asyncio.create_task(one(i)) for i in range(connections)]
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    seconds = time.perf_counter() - started[0]
    for task in tasks:
        if task.done() and task.exception():
            statuses[type(task.exception()).__name__] += 1
        task.cancel()
    print(json.dumps({**statuses, "seconds": seconds}))
asyncio.run(main())
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(python: str, workspace: Path, code: Path | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "MINDGRAPH_API_TOKEN": "", "TOKEN_FLOODER": TOKENS["flooder"],
           "TOKEN_QUIET": TOKENS["quiet"]}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    process = subprocess.Popen([python, "-P", "-m", "mindgraph", "serve", "-C", str(workspace),
                                "--port", str(port)], env=env, cwd=tempfile.gettempdir(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_healthy(process, base)
    return process, base


def quiet_searches(base: str, count: int) -> tuple[list[float], Counter]:
    latencies, statuses = [], Counter()
    with httpx.Client(base_url=base, timeout=120,
                      headers={"Authorization": f"Bearer {TOKENS['quiet']}"}) as http:
        for i in range(count):
            started = time.perf_counter()
            statuses[http.get("/search", params={"q": WORDS[i % len(WORDS)]}).status_code] += 1
            latencies.append((time.perf_counter() - started) * 1e3)
    return latencies, statuses


def one_round(python: str, workspace: Path, args: argparse.Namespace, config: str,
              code: Path | None = None) -> dict:
    (workspace / "mindgraph.yml").write_text(config)
    process, base = start(python, workspace, code)
    try:
        quiet_searches(base, 5)                                    # warm
        alone = quiet_searches(base, args.requests)
        flooder = subprocess.Popen([sys.executable, "-c", FLOODER, base, TOKENS["flooder"],
                                    str(args.flood)], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, text=True)
        assert flooder.stdout.readline().strip() == "flooding"    # its first answer came
        time.sleep(1)                                              # all its requests sent
        flooded = quiet_searches(base, args.requests)
        out, _ = flooder.communicate("", timeout=120)
        return {"alone": alone, "flooded": flooded, "flooder": json.loads(out)}
    finally:
        process.terminate()
        process.wait(30)


def summary(latencies: list[float], statuses: Counter) -> dict:
    ordered = sorted(latencies)
    return {"p50_ms": round(statistics.median(ordered), 1),
            "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
            "statuses": {str(k): v for k, v in sorted(statuses.items())}}


def flooder_summary(statuses: Counter) -> dict:
    """The flooder's statuses and its answers (200) a second, over the rounds."""
    seconds = statuses.pop("seconds", 0.0)
    return {**{str(k): v for k, v in sorted(statuses.items())},
            "answers_per_s": round(statuses["200"] / seconds) if seconds else None}


def this_config(args: argparse.Namespace) -> str:
    """CONFIG with this checkout's --per-identity / --share, when given."""
    serve = {key: value for key, value in (("requests_per_identity", args.per_identity),
                                           ("share_per_identity", args.share))
             if value is not None}
    return f"serve: {json.dumps(serve)}\n{CONFIG}" if serve else CONFIG


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--baseline", type=Path, required=True,
                        help="a checkout with its own .venv to compare against")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--flood", type=int, default=100, help="flooder's requests in flight")
    parser.add_argument("--code", type=Path, help="a folder holding the mindgraph/ to serve as "
                        "this checkout (a snapshot: the checkout may change meanwhile)")
    parser.add_argument("--per-identity", type=int,
                        help="serve.requests_per_identity of this checkout (default: its own)")
    parser.add_argument("--share", type=int,
                        help="serve.share_per_identity of this checkout (default: its own)")
    args = parser.parse_args()
    pythons = {"baseline": str(args.baseline / ".venv" / "bin" / "python"),
               "this": str(ROOT / ".venv" / "bin" / "python")}
    gathered: dict[str, dict[str, list]] = {name: {"alone": [[], Counter()],
                                                   "flooded": [[], Counter()],
                                                   "flooder": [Counter()]}
                                            for name in pythons}
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        shutil.copytree(VAULT, workspace / "wiki")
        for round_ in range(args.rounds):
            order = list(pythons) if round_ % 2 == 0 else list(pythons)[::-1]
            for name in order:
                config = CONFIG if name == "baseline" else this_config(args)
                got = one_round(pythons[name], workspace, args, config,
                                None if name == "baseline" else args.code)
                for phase in ("alone", "flooded"):
                    gathered[name][phase][0].extend(got[phase][0])
                    gathered[name][phase][1].update(got[phase][1])
                gathered[name]["flooder"][0].update(got["flooder"])
                print(f"round {round_ + 1} {name}: alone p50 "
                      f"{statistics.median(got['alone'][0]):.1f} ms, flooded p50 "
                      f"{statistics.median(got['flooded'][0]):.1f} ms "
                      f"{dict(got['flooded'][1])}, flooder {got['flooder']}", file=sys.stderr)
    result = {name: {"quiet_alone": summary(*g["alone"]),
                     "quiet_flooded": summary(*g["flooded"]),
                     "flooder": flooder_summary(g["flooder"][0])}
              for name, g in gathered.items()}
    result["setup"] = {"rounds": args.rounds, "requests": args.requests, "flood": args.flood,
                       "per_identity": args.per_identity, "share": args.share,
                       "baseline": str(args.baseline), "this": str(args.code or ROOT)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
