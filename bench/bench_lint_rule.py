"""`mindgraph lint --rule R`: CPU time of one rule's lint, before / after it ran only that rule.

    python bench/bench_lint_rule.py --tree /work/wt/base20 --tree .   # before / after

The Obsidian Help vault (en) is copied into a temporary workspace and compiled once; then for
each --tree (a checkout with its own .venv) `mindgraph lint --rule R --limit 0` runs as a
child process, the trees in turns (round 1 of each, round 2 of each, ...) so load on a shared
machine falls on both alike. Reported per tree and rule: the median CPU time (user + system of
the child) and whether every tree printed the same text.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shared_corpora import add_option, corpora, require  # noqa: E402

CORPORA = corpora()


def mindgraph_of(tree: Path) -> Path:
    """The tree's own `mindgraph` (its .venv)."""
    found = tree / ".venv" / "bin" / "mindgraph"
    if not found.exists():
        sys.exit(f"{tree} has no .venv/bin/mindgraph: run `make install` there first.")
    return found


def timed(command: list[str]) -> tuple[float, str]:
    """(CPU seconds of the child, its stdout), run from the temporary folder: a tree's code,
    never the current folder's."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir(),
                         check=False).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", type=Path,
                        help="a checkout with its own .venv (repeatable; default: this one)")
    parser.add_argument("--rule", action="append", help="rules to time (default: no-summary)")
    parser.add_argument("--rounds", type=int, default=5)
    add_option(parser)
    args = parser.parse_args()
    trees = [t.resolve() for t in (args.tree or [Path(__file__).resolve().parents[1]])]
    rules = args.rule or ["no-summary"]
    vault = require(CORPORA, "obsidian-help") / "obsidian-help" / "en"
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        shutil.copytree(vault, base / "raw")
        subprocess.run([str(mindgraph_of(trees[-1])), "ingest", "-C", str(base)], check=True,
                       capture_output=True)
        result: dict[str, dict[str, dict]] = {str(t): {} for t in trees}
        for rule in rules:
            samples: dict[Path, list[float]] = {t: [] for t in trees}
            outputs: dict[Path, str] = {}
            for _ in range(args.rounds):
                for tree in trees:
                    seconds, outputs[tree] = timed([str(mindgraph_of(tree)), "lint", "-C",
                                                    str(base), "--rule", rule, "--limit", "0"])
                    samples[tree].append(seconds)
            same = len(set(outputs.values())) == 1
            for tree in trees:
                result[str(tree)][rule] = {"cpu_s": round(statistics.median(samples[tree]), 3),
                                           "same_output": same}
    print(json.dumps({"rounds": args.rounds, "load": os.getloadavg(), "trees": result},
                     indent=2))


if __name__ == "__main__":
    main()
