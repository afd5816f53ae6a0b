"""Fresh-process figures on an ingested and embedded workspace, ours beside a baseline.

    python bench/bench_noop.py -C WORKSPACE [--baseline PYTHON --baseline-dir COPY] [--runs 5]

The baseline (e.g. /work/main/.venv/bin/python) runs on its own copy of the workspace: the two
versions' state files differ, and sharing one would make each rebuild what the other wrote.

Interleaved runs (ours, baseline, ours, ...) of: a no-op `ingest`, a no-op `embed`, a keyword
`search` and a `search --hybrid`, each in a new process; medians of the wall time and of the
CPU time (user + system: on a loaded machine the wall time is mostly waiting for a core), with
the load average.
Issue 20's targets: no-op ingest <= 0.3 s, no-op embed <= 0.5 s, search <= 0.35 s, hybrid
<= 0.7 s (on an idle machine).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

QUERY = "How do I keep a vault in sync on a Linux server without a desktop?"
STEPS = {"no-op ingest": ["ingest"], "no-op embed": ["embed"],
         "search": ["search", QUERY, "-n", "5"],
         "search --hybrid": ["search", "--hybrid", QUERY, "-n", "5"]}


def main() -> None:
    """Run every step for every interpreter and print the medians as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-C", "--dir", required=True)
    parser.add_argument("--baseline")
    parser.add_argument("--baseline-dir", help="the baseline's copy of the workspace")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    pythons = {"ours": sys.executable, **({"baseline": args.baseline} if args.baseline else {})}
    dirs = {"ours": args.dir, "baseline": args.baseline_dir or args.dir}
    times: dict = {name: {step: [] for step in STEPS} for name in pythons}
    cpu: dict = {name: {step: [] for step in STEPS} for name in pythons}
    loads = []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for name, python in pythons.items():     # unmeasured: bytecode and kept state written
        for cmd in STEPS.values():
            subprocess.run([python, "-m", "mindgraph", *cmd, "-C", dirs[name]],
                           capture_output=True, env=env)
    for _ in range(args.runs):
        for step, cmd in STEPS.items():
            for name, python in pythons.items():
                loads.append(os.getloadavg()[0])
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                done = subprocess.run([python, "-m", "mindgraph", *cmd, "-C", dirs[name]],
                                      capture_output=True, text=True, env=env)
                times[name][step].append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name][step].append(after.ru_utime + after.ru_stime
                                       - before.ru_utime - before.ru_stime)
                if done.returncode != 0:
                    sys.exit(f"{name} {step}: {done.stderr[-1500:]}")
    out: dict = {}
    for kind, figures in (("wall", times), ("cpu", cpu)):
        out.update({f"{name} {kind}": {step: round(statistics.median(v), 3)
                                       for step, v in steps.items()}
                    for name, steps in figures.items()})
    out["load_median"] = round(statistics.median(loads), 1)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
