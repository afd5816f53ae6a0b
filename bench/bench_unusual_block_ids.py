"""What embeds of many distinct unusual block ids (``![[Big#^a.1]]``: not the plain
``[A-Za-z0-9-]+`` form) cost one cold GET /dashboard/page, for each checkout given.

    python bench/bench_unusual_block_ids.py --tree /work/main --tree .
    python bench/bench_unusual_block_ids.py --paragraphs 30000 --ids 600 --rounds 5

The workspace: "Big", a note of --paragraphs paragraphs ending in --ids blocks marked
``^a.1``, ``^a.2``, ...; "Wall", one ``![[Big#^a.N]]`` a line for each; "Plain", a page of
no embeds. Each round starts a fresh worker process per --tree (a checkout with its own
.venv; the trees take turns, so the machine's other load falls on all alike), which views
Plain (the app and its page cache warm) and then Wall, cold: no block of Big looked up yet.
Reported: the median seconds of the Wall view per tree, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from programs import add_tree_option, checkouts, python_of  # bench/: on sys.path when a script runs

WORKER = r"""
import json, sys, time
from fastapi.testclient import TestClient
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app
client = TestClient(create_app(Mindgraph.open(sys.argv[1])), base_url="http://127.0.0.1:8765")
assert client.get("/dashboard/page", params={"page": "Plain"}).status_code == 200
started = time.perf_counter()
answer = client.get("/dashboard/page", params={"page": "Wall"})
print(json.dumps({"status": answer.status_code, "seconds": time.perf_counter() - started,
                  "found": answer.text.count("Block number ")}), flush=True)
"""


def build(base: Path, paragraphs: int, ids: int) -> None:
    """The workspace under ``base``, compiled by this checkout's mindgraph."""
    raw = base / "raw"
    raw.mkdir()
    (raw / "Big.md").write_text("# Big\n\n" + "A paragraph of the big note.\n\n" * paragraphs
                                + "".join(f"Block number {i}. ^a.{i}\n\n" for i in range(ids)))
    (raw / "Wall.md").write_text("# Wall\n\n" + "".join(f"![[Big#^a.{i}]]\n"
                                                        for i in range(ids)))
    (raw / "Plain.md").write_text("# Plain\n\nNothing embedded.\n")
    (base / "mindgraph.yml").write_text("serve:\n  request_timeout_s: 3600\n"
                                        "embedding:\n  provider: hashing\n  dimension: 32\n")
    subprocess.run([sys.executable, "-m", "mindgraph", "-C", str(base), "ingest"], check=True,
                   stdout=subprocess.DEVNULL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_option(parser)
    parser.add_argument("--paragraphs", type=int, default=30_000)
    parser.add_argument("--ids", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    trees = checkouts(args.tree)
    seconds: dict[Path, list[float]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        build(base, args.paragraphs, args.ids)
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        for _ in range(args.rounds):
            for tree in trees:
                out = subprocess.run([str(python_of(tree)), "-c", WORKER, str(base)], cwd=tree,
                                     env={**env, "PYTHONPATH": str(tree)}, text=True,
                                     capture_output=True, check=True).stdout
                got = json.loads(out.strip().splitlines()[-1])
                assert got["status"] == 200 and got["found"] > 0, got
                seconds[tree].append(got["seconds"])
    print(f"Big: {args.paragraphs} paragraphs and {args.ids} blocks ^a.N; Wall embeds each; "
          f"median of {args.rounds} cold views; load {os.getloadavg()[0]:.1f}")
    for tree in trees:
        print(f"  {tree}: Wall {statistics.median(seconds[tree]):.2f} s")


if __name__ == "__main__":
    main()
