"""What an agent's own notes can make one GET /dashboard/page cost behind a token: pages of
many embeds on a scoped workspace, for each checkout given (before / after a fix).

    python bench/bench_dashboard_embed_bombs.py --tree /work/main --tree .
    python bench/bench_dashboard_embed_bombs.py --pages 2000 --folders 200 --embeds 7500

The workspace: one tenant whose shared folder holds --pages notes in --folders folders and one
picture; the agent's personal folder holds what it could create through POST /documents:

- "Picture Wall": ``![[pic.png]]`` --embeds times, one a line (each embed found and signed);
- "Echo Wall": ``![[Echo]]`` --embeds times, one a line, Echo a one-line note (each embed a
  parse and render of its own);
- "Missing Wall": ``![[nothing.png]]`` --embeds times, one a line;
- "Heading Wall" and "Block Wall": ``![[Big#Head]]`` and ``![[Big#^blk]]`` --embeds times,
  Big a note of 30,000 paragraphs (900 kB; each embed looked its heading or block up in it).

Each --tree (a checkout with its own .venv) answers in a worker process of its own, through
the in-process test client as the agent; the trees take turns (round 1 of each, round 2 of
each, ...), so the machine's other load falls on all alike. Reported: the median wall-clock
seconds of one page view, per page and tree, and the load average.
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

TOKEN = "agent-token-" + "b" * 32
PAGES = ("Picture Wall", "Echo Wall", "Missing Wall", "Heading Wall", "Block Wall")

WORKER = r"""
import json, sys, time
from fastapi.testclient import TestClient
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app
client = TestClient(create_app(Mindgraph.open(sys.argv[1])), base_url="http://127.0.0.1:8765",
                    headers={"Authorization": "Bearer " + sys.argv[2]})
for line in sys.stdin:
    page = line.strip()
    started = time.perf_counter()
    answer = client.get("/dashboard/page", params={"page": page})
    print(json.dumps({"page": page, "status": answer.status_code,
                      "seconds": time.perf_counter() - started, "bytes": len(answer.content)}),
          flush=True)
"""


def build(base: Path, pages: int, folders: int, embeds: int) -> None:
    """The workspace under ``base``, compiled by this checkout's mindgraph."""
    shared = base / "raw" / "acme" / "shared"
    for i in range(pages):
        note = shared / f"area{i % folders}" / f"Note {i}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"# Note {i}\n\nA shared note, number {i}.\n")
    (shared / "pics").mkdir(parents=True, exist_ok=True)
    (shared / "pics" / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    own = base / "raw" / "acme" / "personal" / "agent"
    own.mkdir(parents=True)
    (own / "Echo.md").write_text("# Echo\n\nEcho.\n")
    (own / "Big.md").write_text("# Big\n\n" + "A paragraph of the big note.\n\n" * 30_000
                                + "The one block. ^blk\n\n## Head\n\nUnder the heading.\n")
    for title, target in zip(PAGES, ("pic.png", "Echo", "nothing.png", "Big#Head",
                                     "Big#^blk")):
        (own / f"{title}.md").write_text(f"# {title}\n\nIntro.\n\n"
                                         + f"![[{target}]]\n" * embeds)
    (base / "mindgraph.yml").write_text(
        # a budget past any view: what a view costs, not where the 504 cuts it
        "serve:\n  request_timeout_s: 3600\n"
        "embedding:\n  provider: hashing\n  dimension: 32\nscopes:\n  identities:\n"
        "    - {name: agent, tenant: acme, agent: agent, teams: [], "
        "token_env: BENCH_AGENT_TOKEN}\n")
    subprocess.run([sys.executable, "-m", "mindgraph", "-C", str(base), "ingest"], check=True,
                   stdout=subprocess.DEVNULL, env={**os.environ, "BENCH_AGENT_TOKEN": TOKEN})



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_option(parser)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--folders", type=int, default=50)
    parser.add_argument("--embeds", type=int, default=7500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    trees = checkouts(args.tree)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        build(base, args.pages, args.folders, args.embeds)
        env = {**os.environ, "BENCH_AGENT_TOKEN": TOKEN, "PYTHONDONTWRITEBYTECODE": "1"}
        workers = [subprocess.Popen([str(python_of(tree)), "-c", WORKER, str(base), TOKEN],
                                    cwd=tree, env={**env, "PYTHONPATH": str(tree)}, text=True,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                   for tree in trees]
        seconds: dict[tuple[str, str], list[float]] = {}
        try:
            for round_ in range(args.rounds + 1):        # round 0 warms each worker
                for tree, worker in zip(trees, workers):
                    for page in PAGES:
                        worker.stdin.write(page + "\n")
                        worker.stdin.flush()
                        got = json.loads(worker.stdout.readline())
                        assert got["status"] == 200, got
                        if round_:
                            seconds.setdefault((str(tree), page), []).append(got["seconds"])
        finally:
            for worker in workers:
                worker.stdin.close()
                worker.wait(60)
    print(f"{args.pages} shared pages in {args.folders} folders, {args.embeds} embeds a page, "
          f"median of {args.rounds} views; load {os.getloadavg()[0]:.1f}")
    for tree in trees:
        shown = ", ".join(f"{page} {statistics.median(seconds[str(tree), page]):.2f} s"
                          for page in PAGES)
        print(f"  {tree}: {shown}")


if __name__ == "__main__":
    main()
