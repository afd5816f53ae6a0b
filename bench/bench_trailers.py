"""What a client with no token can make a server hold with a chunked body's trailer fields
(serve/tcp.py), for each checkout given (before / after a fix).

    python bench/bench_trailers.py --tree /work/main --tree .
    python bench/bench_trailers.py --megabytes 800

For each --tree (a checkout with its own .venv) a `mindgraph serve` of that tree, behind a
token, on an empty workspace; one connection sends a chunked POST without the token, its last
chunk, then --megabytes of 1 MB trailer fields, and stops when the server closes. Reported:
how many MB were sent, in how long, and the server's resident memory before, after and 1 s
later (/proc, Linux).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOKEN = "bench-trailers-token-" + "t" * 32


def rss_mb(pid: int) -> int:
    """The resident memory of process ``pid`` in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) // 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def measure(tree: Path, workspace: Path, megabytes: int) -> str:
    """One server of ``tree``: what the trailers did to it, as a line."""
    python = tree / ".venv" / "bin" / "python"
    port = free_port()
    server = subprocess.Popen([str(python if python.exists() else sys.executable), "-m",
                               "mindgraph", "-C", str(workspace), "serve", "--port", str(port)],
                              cwd=tree, env={**os.environ, "PYTHONPATH": str(tree),
                                             "MINDGRAPH_API_TOKEN": TOKEN},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        time.sleep(1)
        before = rss_mb(server.pid)
        sent, started = 0, time.perf_counter()
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            try:
                sock.sendall(b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                             b"application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                             b"2\r\n{}\r\n0\r\n")
                line = b"X-T: " + b"a" * ((1 << 20) - 7) + b"\r\n"
                while sent < megabytes:
                    sock.sendall(line)
                    sent += 1
            except OSError:
                pass
            seconds = time.perf_counter() - started
            after = rss_mb(server.pid)
        time.sleep(1)
        return (f"{tree}: {sent} MB of trailers sent in {seconds:.2f} s; server RSS {before} "
                f"-> {after} MB, {rss_mb(server.pid)} MB 1 s after the client closed")
    finally:
        server.terminate()
        server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", type=Path,
                        help="a checkout to measure (repeat; default: this one)")
    parser.add_argument("--megabytes", type=int, default=400)
    args = parser.parse_args()
    trees = [t.resolve() for t in (args.tree or [Path(__file__).resolve().parents[1]])]
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp)
        (workspace / "raw").mkdir()
        (workspace / "mindgraph.yml").write_text(
            "embedding:\n  provider: hashing\n  dimension: 32\n")
        for tree in trees:
            print(measure(tree, workspace, args.megabytes), flush=True)


if __name__ == "__main__":
    main()
