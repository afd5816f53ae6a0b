"""What one `mindgraph pull` reads of a huge note-app listing, and its peak RSS.

    python bench/bench_pull_listing.py --tree /work/main --tree . [--pages 40] [--page-mb 5]

A local fake TickTick open API lists ``--pages`` full pages (200 tasks) of completed tasks of
``--page-mb`` MB each, made as they are asked for (a hostile or huge app; each answer is under
the 64 MiB answer cap). The workspace keeps ``limits.max_pull_bytes`` at 20 MB. For each
--tree (a checkout; run with PYTHONPATH at it) one `python -m mindgraph pull` in a fresh
workspace: the bytes the server sent, the pages it was asked for, pull's exit code and its
peak RSS (ru_maxrss of the child). Before the listing was bounded, the whole listing was read
into memory and only then cut at the cap; now it stops as soon as the answers pass it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PAGE = 200
TOKEN = "bench-token"


class Listing:
    """The fake app: ``pages`` pages of completed tasks, ``page_bytes`` each."""

    def __init__(self, pages: int, page_bytes: int):
        self.total = pages * PAGE
        self.content = "x" * max(1, page_bytes // PAGE - 300)
        self.newest = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
        self.sent = 0
        self.pages = 0
        self.lock = threading.Lock()

    def answer(self, method: str, path: str, body: dict) -> object:
        if path.endswith("/project"):
            return [{"id": "p1", "name": "Work", "kind": "TASK", "closed": False}]
        if path.endswith("/task/filter"):
            return []
        if path.endswith("/data"):
            return {"tasks": [], "columns": []}
        if path.endswith("/task/completed"):
            end = dt.datetime.strptime(body["endDate"], "%Y-%m-%dT%H:%M:%S.%f%z")
            first = max(0, int((self.newest - end).total_seconds() // 60))
            with self.lock:
                self.pages += 1
            return [self._task(i) for i in range(first, min(first + PAGE, self.total))]
        return None

    def _task(self, i: int) -> dict:
        when = self.newest - dt.timedelta(minutes=i)
        return {"id": f"t{i:08d}", "projectId": "p1", "title": f"Done {i}",
                "content": self.content, "status": 2,
                "completedTime": when.strftime("%Y-%m-%dT%H:%M:%S.000+0000")}


def serve(listing: Listing) -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length)) if length else {}
            data = json.dumps(listing.answer(self.command, self.path, body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return
            with listing.lock:
                listing.sent += len(data)

        do_GET = do_POST = _answer  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/open/v1"


def run(tree: Path, pages: int, page_bytes: int, max_pull_bytes: int) -> dict:
    listing = Listing(pages, page_bytes)
    server, base_url = serve(listing)
    try:
        with tempfile.TemporaryDirectory() as folder:
            ws = Path(folder)
            (ws / "raw").mkdir()
            (ws / "mindgraph.yml").write_text(
                f"limits:\n  max_pull_bytes: {max_pull_bytes}\n"
                "adapters:\n  - name: tasks\n    type: ticktick\n    cache_ttl_s: 0\n"
                f"    options: {{token_env: BENCH_TT, base_url: '{base_url}', "
                f"completed_days: 36500, inbox: false, timeout_s: 120}}\n")
            env = {**os.environ, "BENCH_TT": TOKEN, "PYTHONPATH": str(tree.resolve())}
            child = subprocess.Popen([sys.executable, "-m", "mindgraph", "pull", "-C", str(ws)],
                                     env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, cwd=folder)
            out, _ = child.communicate()
            rss = _child_rss()
            last = out.decode(errors="replace").strip().splitlines()[-1:]
            return {"tree": str(tree), "exit": child.returncode, "sent_mb": listing.sent / 1e6,
                    "pages": listing.pages, "peak_rss_mb": rss, "said": last[0][:90] if last
                    else ""}
    finally:
        server.shutdown()
        server.server_close()


def _child_rss() -> float:
    """The peak RSS (MB) of the pull just waited for: ru_maxrss of RUSAGE_CHILDREN is the
    largest of all children so far, so each tree runs from a process of its own (--one)."""
    import resource

    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", type=Path, required=True)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--page-mb", type=float, default=5.0)
    parser.add_argument("--max-pull-mb", type=float, default=20.0)
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    page_bytes, cap = int(args.page_mb * 1e6), int(args.max_pull_mb * 1e6)
    if args.one:                    # one tree, in a process of its own (its own ru_maxrss)
        print(json.dumps(run(args.one, args.pages, page_bytes, cap)))
        return
    print(f"listing: {args.pages} pages of {args.page_mb:g} MB; limits.max_pull_bytes "
          f"{args.max_pull_mb:g} MB")
    for tree in args.tree:
        line = subprocess.run([sys.executable, __file__, "--tree", str(tree), "--one",
                               str(tree), "--pages", str(args.pages), "--page-mb",
                               str(args.page_mb), "--max-pull-mb", str(args.max_pull_mb)],
                              capture_output=True, text=True, check=True).stdout
        result = json.loads(line)
        print(f"{result['tree']}: exit {result['exit']}, pages asked {result['pages']}, "
              f"{result['sent_mb']:.0f} MB sent, pull's peak RSS "
              f"{result['peak_rss_mb']:.0f} MB\n    {result['said']}")


if __name__ == "__main__":
    main()
