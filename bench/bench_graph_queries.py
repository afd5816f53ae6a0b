"""CPU of `graph neighbors` (depth 2) and shortest paths on a random 5,000-page graph.

    python bench/bench_graph_queries.py           # 20 neighbour queries
    python bench/bench_graph_queries.py path      # + 20 shortest paths

Each page links 8 random pages and has 2 of 400 tags (seed 1). Prints the median CPU seconds
of 5 runs: run it with this checkout's python and another's side by side to compare.
"""

from __future__ import annotations

import random
import statistics
import sys
import time

from mindgraph.graph.build import KnowledgeGraph
from mindgraph.graph.query import neighbors, shortest_path
from mindgraph.page.parse import parse_page

PAGES, QUERIES, RUNS = 5000, 20, 5


def main() -> None:
    random.seed(1)
    pages = {}
    for i in range(PAGES):
        links = " ".join(f"[[P{random.randrange(PAGES)}]]" for _ in range(8))
        tags = ", ".join(f"t{random.randrange(400)}" for _ in range(2))
        pages[f"P{i}.md"] = parse_page(f"---\ntags: [{tags}]\n---\n# P{i}\n\n{links}\n",
                                       f"P{i}.md", content_hash=str(i))
    kg = KnowledgeGraph.build(pages)
    runs = []
    for _ in range(RUNS):
        start = time.process_time()
        for s in range(0, QUERIES * 10, 10):
            neighbors(kg, f"P{s}.md", depth=2)
            if "path" in sys.argv:
                shortest_path(kg, f"P{s}.md", f"P{PAGES - 1 - s}.md")
        runs.append(time.process_time() - start)
    print(f"{sys.executable}: median CPU {statistics.median(runs):.3f} s")


if __name__ == "__main__":
    main()
