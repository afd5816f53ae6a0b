"""Bounded work (issue 12): a provider call against a dripping server, and the first search
after a multi-megabyte page lands in the wiki.

    python bench/bench_limits.py [--runs 3] [--timeout-s 1] [--page-mb 4]

``drip``: seconds until OpenAIProvider.complete gives up on a local server that answers one
byte every 0.05 s (400 bytes, 20 s in all) with ``timeout_s`` (no retries).
``big page``: seconds and peak RSS of a fresh `mindgraph search` (page cache and keyword index
built from scratch) over a wiki of one page of ``--page-mb`` MB of random words plus ten
small pages. Prints the median of ``--runs`` runs. To compare two checkouts side by side, run
it with ``PYTHONPATH=<checkout>`` for each, from a folder outside both.
"""

from __future__ import annotations

import argparse
import random
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 322\r\n\r\n"
          + b"{" + b" " * 320 + b"}")


def drip_server(interval: float) -> tuple[str, threading.Event]:
    """A local server answering every connection one byte per ``interval`` seconds."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def drip(conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                for i in range(len(ANSWER)):
                    if stop.is_set():
                        return
                    conn.sendall(ANSWER[i:i + 1])
                    time.sleep(interval)
            except OSError:
                return

    def accept() -> None:
        while not stop.is_set():
            conn, _ = listener.accept()
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/v1", stop


def time_drip(timeout_s: float) -> float:
    from mindgraph.errors import ProviderError
    from mindgraph.providers.llm.openai import OpenAIProvider

    url, stop = drip_server(0.05)
    provider = OpenAIProvider(model="m", base_url=url, timeout_s=timeout_s, max_retries=0)
    started = time.monotonic()
    try:
        provider.complete("system", "prompt")
    except ProviderError:
        pass
    stop.set()
    return time.monotonic() - started


def big_page_workspace(folder: Path, megabytes: float) -> None:
    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
             for _ in range(50_000)]
    (folder / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    wiki = folder / "wiki"
    wiki.mkdir()
    for i in range(10):
        (wiki / f"Small {i}.md").write_text(f"# Small {i}\n\nA small page about canvas {i}.\n")
    parts, size, line = ["# Big\n"], 0, 0
    while size < megabytes * 1_000_000:
        if line % 50 == 0:
            parts.append(f"\n## Part {line}\n\n")
        text = " ".join(rng.choice(words) for _ in range(12)) + ".\n"
        parts.append(text)
        size, line = size + len(text), line + 1
    (wiki / "Big.md").write_text("".join(parts))


def time_search(folder: Path) -> tuple[float, float]:
    for name in ("pages.pickle", "keyword.pickle"):
        (folder / ".mindgraph" / name).unlink(missing_ok=True)
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "mindgraph", "search", "canvas", "-C", str(folder)],
                   check=True, capture_output=True)
    elapsed = time.monotonic() - started
    return elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--timeout-s", type=float, default=1.0)
    parser.add_argument("--page-mb", type=float, default=4.0)
    args = parser.parse_args()
    import mindgraph

    print(f"mindgraph from {Path(mindgraph.__file__).parent}")
    drips = [time_drip(args.timeout_s) for _ in range(args.runs)]
    print(f"drip (timeout_s {args.timeout_s}): median {statistics.median(drips):.2f} s "
          f"{[round(t, 2) for t in drips]}")
    with tempfile.TemporaryDirectory() as tmp:
        big_page_workspace(Path(tmp), args.page_mb)
        (Path(tmp) / ".mindgraph").mkdir()
        runs = [time_search(Path(tmp)) for _ in range(args.runs)]
    print(f"first search after a {args.page_mb:g} MB page: median "
          f"{statistics.median(t for t, _ in runs):.2f} s, peak RSS {max(m for _, m in runs):.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
