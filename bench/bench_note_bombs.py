"""What one agent's heavy notes cost the others (a real `mindgraph serve` per checkout).

    python bench/bench_note_bombs.py --tree /work/main --tree .

For each --tree (a checkout with its own .venv): a workspace of two tenants (alice of acme,
carol of globex) served behind their tokens. Alice uploads (POST /upload, her own quota)

- ``keys.yaml``: 190,000 lines of ``kN: v`` (1.9 MB, under compile.max_note_bytes), which
  the documents API wraps as a note holding a ```yaml data block; then GET /extract of it;
- ``broken.md``: a note whose frontmatter is 190,000 such lines and a '[' never closed;
- ``headings.md``: 85,000 headings (1.8 MB) after a ```json block that does not parse; then
  GET /extract of it (refused: 409 naming the raw note's line).

Reported: the seconds of each of Alice's requests, and Carol's
search latency (median and worst of GET /search, one after another) while each runs, against
Carol alone. The extract runs on the query lane every search takes turns on; the upload on
the write lane.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from programs import add_tree_option, checkouts  # noqa: E402
from two_tenants import tokens, two_tenant_server  # noqa: E402

TOKENS = tokens("bench-yaml")
LINES = 190_000


def carol_searches(base: str, stop: threading.Event, seconds: list[float]) -> None:
    """Carol's searches one after another until ``stop``."""
    headers = {"Authorization": f"Bearer {TOKENS['carol']}"}
    with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
        while not stop.is_set():
            started = time.perf_counter()
            client.get("/search", params={"q": "kettle noon"})
            seconds.append(time.perf_counter() - started)


def while_running(base: str, work) -> tuple[float, list[float], object]:
    """Run ``work()`` while Carol searches: its seconds, her latencies, its answer."""
    stop, seconds = threading.Event(), []
    searcher = threading.Thread(target=carol_searches, args=(base, stop, seconds))
    searcher.start()
    time.sleep(0.3)
    started = time.perf_counter()
    answer = work()
    took = time.perf_counter() - started
    stop.set()
    searcher.join()
    return took, seconds, answer


def summary(seconds: list[float]) -> str:
    return (f"{statistics.median(seconds) * 1000:.0f} ms median, {max(seconds):.2f} s worst "
            f"({len(seconds)} searches)")


def measure(tree: Path) -> list[str]:
    with two_tenant_server(tree, TOKENS, timeout_s=600) as (base, alice):
        _, alone, _ = while_running(base, lambda: time.sleep(3))
        keys = "".join(f"k{i}: v\n" for i in range(LINES)).encode()
        upload = alice.post("/upload", files=[("files", ("keys.yaml", keys))])
        page = upload.json()["documents"][0]["page"]
        took_x, during_x, extract = while_running(
            base, lambda: alice.get("/extract", params={"page": page}))
        broken = ("---\n" + "".join(f"k{i}: v\n" for i in range(LINES)) + "bad: [\n---\n"
                  "# Broken\n\nbody\n").encode()
        took_u, during_u, answer = while_running(
            base, lambda: alice.post("/upload", files=[("files", ("broken.md", broken))]))
        headings = ("# Headings\n\n```json\n{bad\n```\n\n" + "".join(
            f"## kettle {i}\nword\n" for i in range(85_000))).encode()
        upload = alice.post("/upload", files=[("files", ("headings.md", headings))])
        lines = [f"{tree}",
                 f"  carol alone            {summary(alone)}",
                 f"  alice GET /extract     {took_x:.2f} s, {extract.status_code}; carol "
                 f"meanwhile {summary(during_x)}",
                 f"  alice POST /upload     {took_u:.2f} s, {answer.status_code}; carol "
                 f"meanwhile {summary(during_u)}"]
        if upload.status_code != 200:     # compile.max_note_headings (10,000) since lanes25
            return lines + [f"  alice POST /upload     {upload.status_code} for 85,000 "
                            f"headings: {upload.json().get('detail', '')[:120]}"]
        page = upload.json()["documents"][0]["page"]
        took_h, during_h, refused = while_running(
            base, lambda: alice.get("/extract", params={"page": page}))
        return lines + [f"  alice GET /extract     {took_h:.2f} s, {refused.status_code} (a "
                        f"broken block in 85,000 headings); carol meanwhile "
                        f"{summary(during_h)}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_option(parser)
    args = parser.parse_args()
    for tree in checkouts(args.tree):
        print("\n".join(measure(tree)), flush=True)


if __name__ == "__main__":
    main()
