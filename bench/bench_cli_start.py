"""How long a fresh process takes to answer `mindgraph search --hybrid` (issue 20: <= 0.7 s),
a keyword `search` (<= 0.35 s), and a no-op `ingest` (<= 0.3 s) and `embed` (<= 0.5 s).

    python bench/bench_cli_start.py -C WORKSPACE [--runs 7] [--json]
    python bench/bench_cli_start.py -C WORKSPACE --trees /tmp/main-clone .   # side by side

The workspace must be ingested and embedded already (e.g. the Obsidian Help vault copied to
raw/, then `mindgraph ingest` and `mindgraph embed`). Each run is a new Python process:
imports, loading the page cache, keyword index, graph and vectors, starting the model, one
query. With ``--trees``, each tree's code runs in turn (PYTHONPATH), the runs interleaved
(tree A, tree B, tree A, ...) so both meet the same load, each tree on its own copy of the
workspace (state files of one version would otherwise be rebuilt by the other at every run,
e.g. when their keyword analyzers differ). Prints per command and tree the
median wall time and the median CPU time (user + sys of the child) and the load average
before and after. Bytecode is cached, as it is for users (PYTHONDONTWRITEBYTECODE unset).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = "How do I keep a vault in sync on a Linux server without a desktop?"
COMMANDS = {   # name: (arguments, target in seconds)
    "search --hybrid": (["search", "--hybrid", QUERY, "-n", "5", "--json"], 0.7),
    "search": (["search", QUERY, "-n", "5", "--json"], 0.35),
    "ingest (no-op)": (["ingest"], 0.3),
    "embed (no-op)": (["embed"], 0.5),
}


def run_once(args: list[str], workspace: str, tree: str | None) -> tuple[float, float, str]:
    """Wall and CPU seconds of one fresh `mindgraph ARGS -C workspace`, and its stdout."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if tree:
        env["PYTHONPATH"] = str(Path(tree).resolve())
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # run from the workspace: `python -m` puts the working folder first on sys.path, so a
    # source tree there would shadow the tree under test
    done = subprocess.run([sys.executable, "-m", "mindgraph", *args, "-C", workspace],
                          capture_output=True, text=True, env=env, cwd=workspace)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({tree or 'this tree'}):\n{done.stderr}")
    if args[0] == "search" and json.loads(done.stdout).get("degradation"):
        raise SystemExit(f"degraded: {json.loads(done.stdout)['degradation']}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-C", "--dir", required=True, help="an embedded workspace")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--trees", nargs="+", default=[None],
                        help="source trees to compare (default: the installed mindgraph)")
    parser.add_argument("--commands", nargs="+", default=list(COMMANDS), choices=COMMANDS)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli-start-") as scratch:
        workspaces = {tree: args.dir if len(args.trees) == 1 else
                      shutil.copytree(args.dir, Path(scratch) / str(i), symlinks=True)
                      for i, tree in enumerate(args.trees)}
        load_before = os.getloadavg()[0]
        for tree in args.trees:         # one unmeasured run each: bytecode and kept state
            for name in args.commands:
                run_once(COMMANDS[name][0], str(workspaces[tree]), tree)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(args.runs):
            for name in args.commands:
                for tree in args.trees:
                    wall, cpu, _ = run_once(COMMANDS[name][0], str(workspaces[tree]), tree)
                    times.setdefault((name, str(tree or ".")), []).append((wall, cpu))
        load_after = os.getloadavg()[0]
    rows = [{"command": name, "tree": tree, "target_s": COMMANDS[name][1],
             "median_wall_s": round(statistics.median(w for w, _ in runs), 3),
             "median_cpu_s": round(statistics.median(c for _, c in runs), 3),
             "walls": [round(w, 3) for w, _ in runs], "cpus": [round(c, 3) for _, c in runs]}
            for (name, tree), runs in times.items()]
    if args.json:
        print(json.dumps({"rows": rows, "load": [load_before, load_after]}))
        return 0
    print(f"fresh processes, {args.runs} interleaved runs each, medians "
          f"(load average {load_before:.1f} before, {load_after:.1f} after)")
    for row in rows:
        print(f"  {row['command']:16} {row['tree']:28} wall {row['median_wall_s']:.3f} s  "
              f"CPU {row['median_cpu_s']:.3f} s  (target {row['target_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
