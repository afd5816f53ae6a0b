"""The parent's serial path of a first `mindgraph ingest`, phase by phase, ours beside a
baseline: the parent's CPU before the run starts, while the Reading workers read and while
the index is built and the Linking workers scan, and how long the Reading workers stood
blocked on the parent (their wall between their first and last note, less their CPU and
their wait for a core: a parent holding the GIL leaves the pool's thread unable to take
their results or hand them work).

    python bench/bench_ingest_phases.py --baseline /tmp/main/.venv/bin/python --runs 4

Each run ingests a fresh copy of the Obsidian Help vault in a new process started from the
copy's folder (so that each python imports its own tree's mindgraph), with `_Run._read`,
`_Run._index` and the workers' `_work` wrapped to note the time: medians are printed.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

VAULT = shared_corpora.corpora() / "obsidian-help"

PROBE = r'''
import json, os, sys, time
log = sys.argv[2]
parent = os.getpid()
marks = {}
def mark(name):
    marks[name] = time.process_time()
import mindgraph.ingest.pipeline as p
import mindgraph.ingest.workers as w
for name in ("execute", "_read", "_index"):
    def wrapped(self, *a, _real=getattr(p._Run, name), _name=name, **k):
        mark(_name + " start")
        try:
            return _real(self, *a, **k)
        finally:
            mark(_name + " end")
    setattr(p._Run, name, wrapped)
real_work = w._work
def _work(position):
    found = real_work(position)
    with open("/proc/self/schedstat") as handle:
        waited = int(handle.read().split()[1]) / 1e9
    with open(log, "a") as out:
        out.write(f"{os.getpid()} {time.time()} {time.process_time()} {waited}\n")
    return found
_work.__qualname__, _work.__module__ = "_work", w.__name__
w._work = _work
def read_window(self, *a, _real=p._Run._read, **k):
    marks["read wall"] = [time.time()]
    try:
        return _real(self, *a, **k)
    finally:
        marks["read wall"].append(time.time())
p._Run._read = read_window
import atexit
atexit.register(lambda: os.getpid() == parent and print(json.dumps(marks), file=sys.stderr))
from mindgraph.cli import main
sys.argv = ["mindgraph", "ingest", "-C", sys.argv[1], "--json"]
main()
'''


def one_run(python: str, workspace: Path) -> dict:
    """The parent's CPU per phase and the Reading workers' blocked time of one ingest."""
    log = workspace / "work.log"
    env = dict(os.environ)
    if env.get("PYTHONPYCACHEPREFIX"):
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([python, "-c", PROBE, str(workspace), str(log)], cwd=workspace,
                          capture_output=True, text=True, env=env)
    if done.returncode not in (0, 1):
        sys.exit(f"{python}: ingest failed:\n{done.stderr[-2000:]}")
    marks = json.loads(done.stderr.strip().splitlines()[-1])
    start, end = marks["read wall"]
    rows = collections.defaultdict(list)
    for line in log.read_text().splitlines():
        pid, at, cpu, waited = line.split()
        if start <= float(at) <= end:
            rows[pid].append((float(at), float(cpu), float(waited)))
    blocked = sum((r[-1][0] - r[0][0]) - (r[-1][1] - r[0][1]) - (r[-1][2] - r[0][2])
                  for r in (sorted(v) for v in rows.values()))
    return {"start-up cpu": marks["execute start"],
            "reading cpu": marks["_read end"] - marks["_read start"],
            "index cpu": marks["_index end"] - marks["_index start"],
            "readers blocked": blocked}


def main() -> None:
    """Run and print the medians as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--baseline", help="another checkout's python (e.g. main's venv)")
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args()
    pythons = {"ours": sys.executable, **({"baseline": args.baseline} if args.baseline else {})}
    figures: dict = {name: collections.defaultdict(list) for name in pythons}
    with tempfile.TemporaryDirectory(prefix="mindgraph-ingest-phases-") as tmp:
        for run in range(args.runs + 1):        # the first, untimed: bytecode written
            for name in pythons:
                shutil.copytree(VAULT, Path(tmp) / f"{name}{run}" / "raw", symlinks=True)
            time.sleep(2.1)     # no copied note is within ingest's racy window
            for name, python in pythons.items():
                found = one_run(python, Path(tmp) / f"{name}{run}")
                for key, value in found.items():
                    if run:
                        figures[name][key].append(value)
    print(json.dumps({name: {key: round(statistics.median(values), 3)
                             for key, values in steps.items()}
                      for name, steps in figures.items()} | {"runs": args.runs,
                                                             "load": os.getloadavg()[0]},
                     indent=2))


if __name__ == "__main__":
    main()
