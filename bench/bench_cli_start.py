"""How long a fresh process takes to answer `mindgraph search --hybrid` (issue 5 target < 1.5 s).

    python bench/bench_cli_start.py -C WORKSPACE [--runs 5] [--json]

The workspace must be ingested and embedded already (e.g. a mindgraph.yml whose paths.wiki is
the Obsidian Help vault, after `mindgraph embed`). Each run is a new Python process: imports,
loading the page cache, keyword index, graph and vectors, starting the model, one query.
Prints the median and every run's wall time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

QUERY = "How do I keep a vault in sync on a Linux server without a desktop?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-C", "--dir", required=True, help="an embedded workspace")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "mindgraph", "search", "--hybrid", QUERY,
                               "-C", args.dir, "-n", "5", "--json"], capture_output=True,
                              text=True)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        degradation = json.loads(done.stdout)["degradation"]
        if degradation:
            print(f"degraded: {degradation}", file=sys.stderr)
            return 1
    result = {"runs": [round(t, 3) for t in times], "median_s": round(statistics.median(times), 3),
              "target_s": 1.5}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"fresh `mindgraph search --hybrid`: median {result['median_s']} s over "
              f"{args.runs} runs {result['runs']} (target < 1.5 s)")
    return 0 if result["median_s"] < 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
