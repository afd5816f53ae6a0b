"""A dashboard page view on a vault whose raw/ holds 10,000 files: the cost of finding the
attachments a page embeds by file name (``![[picture.png]]``).

    python bench/bench_attachment_index.py                                 # this checkout
    python bench/bench_attachment_index.py --tree /work/wt/base19 --tree .  # before / after
    python bench/bench_attachment_index.py --files 10000 --rounds 15 --json

What it does: a workspace in a temp dir with one wiki page that embeds three pictures by file
name (two in raw/, one missing) and raw/ holding --files files (half markdown notes, half
pictures, 50 to a folder, all dated an hour ago); for each --tree (a checkout with its own
.venv) a worker process builds that tree's REST app once and answers GET /dashboard/page for
that page and GET /dashboard/attachment for one picture by name through the in-process test
client. The trees are measured in turns (round 1 of each, round 2 of each, ...) so the
machine's other load falls on all of them alike; each round times --views requests of each
kind. Reported per tree: the median CPU time (all threads of the worker) of one page view and
of one attachment request, and the wall-clock median beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from programs import add_tree_option, checkouts, python_of  # bench/: on sys.path when a script runs

WORKER = r"""
import json, sys, time
from fastapi.testclient import TestClient
from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

base, views = sys.argv[1], int(sys.argv[2])
client = TestClient(create_app(Mindgraph(settings_from_dict({}, base_dir=base))),
                    base_url="http://127.0.0.1:8765")

def timed(fn):
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(views):
        fn()
    return ((time.process_time() - cpu) / views, (time.perf_counter() - wall) / views)

def page():
    answer = client.get("/dashboard/page", params={"page": "Album"})
    assert answer.status_code == 200 and answer.json()["html"].count("data-src") == 2

def attachment():
    answer = client.get("/dashboard/attachment", params={"target": "pic-5000.png",
                                                         "page": "Album"})
    assert answer.status_code == 200, answer.text

page(); attachment()          # warm: imports, the wiki's first scan, the first listing
print("ready", flush=True)
for line in sys.stdin:
    print(json.dumps({"page": timed(page), "attachment": timed(attachment)}), flush=True)
"""


def make_vault(base: Path, files: int) -> None:
    """The page and raw/ described in the module docstring."""
    (base / "wiki").mkdir(parents=True)
    (base / "wiki" / "Album.md").write_text(
        "# Album\n\nOur trip.\n\n![[pic-5000.png]]\n\n![[pic-9998.png|300]]\n\n"
        "![[never-taken.png]]\n")
    raw = base / "raw"
    for n in range(files):
        folder = raw / f"year{n // 2500}" / f"batch{(n // 50):04d}"
        folder.mkdir(parents=True, exist_ok=True)
        if n % 2:
            (folder / f"note-{n}.md").write_text(f"# Note {n}\n\nText.\n")
        else:
            (folder / f"pic-{n}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(16))
    past = time.time() - 3600
    for folder, _, _ in os.walk(raw):
        os.utime(folder, (past, past))



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_option(parser)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--views", type=int, default=10, help="requests per round and kind")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = checkouts(args.tree)
    with tempfile.TemporaryDirectory(prefix="mg-attach-bench-") as tmp:
        base = Path(tmp) / "ws"
        make_vault(base, args.files)
        workers = []
        for tree in trees:
            env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
            proc = subprocess.Popen([str(python_of(tree)), "-c", WORKER, str(base),
                                     str(args.views)], cwd=tree, env=env, text=True,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            workers.append(proc)
        samples: list[list[dict]] = [[] for _ in trees]
        for _ in range(args.rounds):
            for i, proc in enumerate(workers):
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
                samples[i].append(json.loads(proc.stdout.readline()))
        for proc in workers:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(30)
    result = {str(tree): {kind: {"cpu_ms": round(statistics.median(s[kind][0] for s in got)
                                                 * 1e3, 2),
                                 "wall_ms": round(statistics.median(s[kind][1] for s in got)
                                                  * 1e3, 2)}
                          for kind in ("page", "attachment")}
              for tree, got in zip(trees, samples)}
    if args.json:
        print(json.dumps({"files": args.files, "rounds": args.rounds, "views": args.views,
                          "load": os.getloadavg(), "trees": result}, indent=2))
        return
    print(f"raw/ with {args.files:,} files; {args.rounds} rounds x {args.views} requests; "
          f"load average {os.getloadavg()[0]:.1f}")
    for tree, kinds in result.items():
        print(f"  {tree}: page view {kinds['page']['cpu_ms']:.2f} ms CPU "
              f"({kinds['page']['wall_ms']:.2f} ms wall), attachment by name "
              f"{kinds['attachment']['cpu_ms']:.2f} ms CPU "
              f"({kinds['attachment']['wall_ms']:.2f} ms wall)")


if __name__ == "__main__":
    main()
