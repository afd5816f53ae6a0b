"""How big and slow are the MCP tools list_sections and get_page on a page of many headings?
(a real SDK client session per checkout, in-process)

    python bench/bench_mcp_sections.py --tree /work/main --tree .
    python bench/bench_mcp_sections.py --tree . --headings 10000

For each --tree (a checkout with its own .venv, in a worker process of its own): a wiki page
of --headings headings (``## kettle N`` and a word; 85,000 by default, a page compiled
before compile.max_note_headings), read once to warm it, then list_sections and get_page
(max_chars 0: the outline only) called --runs times each with their default arguments.
Reported: each answer's size and the median seconds of a call.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from programs import add_tree_option, checkouts, python_of  # noqa: E402


def worker(headings: int, runs: int) -> None:
    """Measure this interpreter's mindgraph; print one JSON line."""
    import anyio
    from mcp import Client

    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph
    from mindgraph.serve.mcp import create_mcp_server

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "wiki").mkdir()
        (root / "wiki" / "Many.md").write_text(
            "# Many\n\n" + "".join(f"## kettle {i}\nword\n" for i in range(headings)))
        server = create_mcp_server(Mindgraph(settings_from_dict({}, base_dir=root)))

        async def session() -> dict[str, list]:
            found: dict[str, list] = {}
            async with Client(server) as client:
                await client.call_tool("list_sections", {"page": "Many"})     # parsed, warm
                for tool, extra in (("list_sections", {}), ("get_page", {"max_chars": 0})):
                    took, size = [], 0
                    for _ in range(runs):
                        started = time.perf_counter()
                        answer = await client.call_tool(tool, {"page": "Many", **extra})
                        took.append(time.perf_counter() - started)
                        size = len(answer.content[0].text.encode())
                    found[tool] = [size, statistics.median(took)]
            return found

        print(json.dumps(anyio.run(session)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_option(parser)
    parser.add_argument("--headings", type=int, default=85_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.headings, args.runs)
        return
    for tree in checkouts(args.tree):
        done = subprocess.run([str(python_of(tree)), __file__, "--worker", "--headings",
                               str(args.headings), "--runs", str(args.runs)],
                              env={**os.environ, "PYTHONPATH": str(tree)}, cwd=tree,
                              check=True, capture_output=True, text=True)
        found = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{tree} ({args.headings:,} headings)")
        for tool, (size, seconds) in found.items():
            print(f"  {tool}: {size / 1e6:.2f} MB, median of {args.runs} {seconds:.2f} s")


if __name__ == "__main__":
    main()
