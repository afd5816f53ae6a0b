"""How mindgraph's figures grow from 10,000 to 30,000 to 100,000 notes (issue 20's table).

    python bench/bench_scale.py                       # 10k, 30k, 100k
    python bench/bench_scale.py --sizes 10000 30000   # what the machine has time for
    python bench/bench_scale.py --json --baseline /work/main/.venv/bin/python

Each size is a vault written by bench/gen_corpus.py (seed 1) into a temporary workspace; every
figure is the wall time of a fresh `mindgraph` process, as a person waits for it: ingest from
scratch (offline), a no-op re-run, `graph communities` (builds the graph, then Louvain),
`check`, `stats` and a fresh keyword `search`. The machine's load average is printed with
each row. With --baseline PYTHON the same commands also run under that interpreter (another
checkout's virtualenv, e.g. main's) on a copy of the same vault, interleaved with ours, so the
ratio of the two is measured under the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import gen_corpus  # noqa: E402

STEPS = (
    ("ingest", ["ingest"]),
    ("no-op ingest", ["ingest"]),
    ("graph communities", ["graph", "communities", "--min-size", "5"]),
    ("check", ["check"]),
    ("stats", ["stats"]),
    ("search", ["search", "how do I sync my vault", "-n", "5"]),
)


def _run(python: str, workspace: Path, args: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run([python, "-m", "mindgraph", *args, "-C", str(workspace)],
                          capture_output=True, text=True, cwd=workspace)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):       # 1: findings (check) or failed notes
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds


def measure(size: int, pythons: dict[str, str], parent: Path,
            source: gen_corpus.Source) -> dict:
    """Every step at one size, for each interpreter in turn (interleaved step by step)."""
    spaces = {}
    for name in pythons:
        base = parent / f"{name}-{size}"
        gen_corpus.generate(base / "raw", size, 1, source)
        gen_corpus.write_workspace_config(base, size)
        spaces[name] = base
    row: dict = {"notes": size, "load": {}, "s": {name: {} for name in pythons}}
    for step, args in STEPS:
        row["load"][step] = round(os.getloadavg()[0], 1)
        for name, python in pythons.items():
            row["s"][name][step] = round(_run(python, spaces[name], args), 2)
            print(f"  {size:>7} {name:8} {step:18} {row['s'][name][step]:8.2f} s "
                  f"(load {row['load'][step]})", file=sys.stderr, flush=True)
    for base in spaces.values():
        shutil.rmtree(base, ignore_errors=True)
    return row


def main() -> None:
    """Run the sizes and print the table (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    parser.add_argument("--baseline", help="another interpreter to run beside ours")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pythons = {"ours": sys.executable}
    if args.baseline:
        pythons["baseline"] = args.baseline
    source = gen_corpus.load_source()
    rows = []
    with tempfile.TemporaryDirectory(prefix="mindgraph-scale-") as tmp:
        for size in args.sizes:
            rows.append(measure(size, pythons, Path(tmp), source))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    head = "| step | " + " | ".join(f"{r['notes']:,} notes" for r in rows) + " |"
    print(head)
    print("|" + "---|" * (len(rows) + 1))
    for step, _ in STEPS:
        cells = []
        for r in rows:
            cell = f"{r['s']['ours'][step]:.2f} s"
            if step == "ingest":
                cell += f" ({r['notes'] / r['s']['ours'][step]:.0f} notes/s)"
            if "baseline" in r["s"]:
                cell += f" (baseline {r['s']['baseline'][step]:.2f} s)"
            cells.append(f"{cell}, load {r['load'][step]}")
        print(f"| {step} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
