"""What lint's near-duplicate rule costs on the Help vault, for each checkout given, and
whether each finds the same pairs.

    python bench/bench_near_duplicates.py --tree /work/main --tree .
    python bench/bench_near_duplicates.py --rounds 7

Two vaults: en/ja/zh (519 pages) and the whole corpus with the release notes (883). Each
--tree (a checkout with its own .venv) runs in a process of its own, the trees taking turns
round after round (so the machine's other load falls on all alike): the pages are parsed
first, then ``near_duplicates`` is timed alone (its rule's share of a `lint`), and the
whole `lint --rule near-duplicate --json` once a round. Reported: medians, the pairs found
and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import shared_corpora  # bench/: on sys.path when a script runs
from programs import add_tree_option, checkouts, python_of

CORPORA = shared_corpora.corpora()
WORKER = r"""
import json, sys, time
from mindgraph.core import Mindgraph
from mindgraph.lint.duplicates import near_duplicates
pages = list(Mindgraph.open(sys.argv[1]).current_pages().values())
for page in pages:
    page.indexed_body
started = time.perf_counter()
found = [(a.path, b.path, s) for a, b, s in near_duplicates(pages)]
print(json.dumps({"seconds": time.perf_counter() - started, "pairs": found}))
"""


def build(base: Path, folders: tuple[str, ...]) -> None:
    for folder in folders:
        shutil.copytree(CORPORA / "obsidian-help" / folder, base / "wiki" / folder)
    (base / "mindgraph.yml").write_text("paths:\n  wiki: wiki\n  state: state\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_tree_option(parser)
    shared_corpora.add_option(parser)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    trees = checkouts(args.tree)
    vaults = {"en/ja/zh": ("en", "ja", "zh"),
              "all": ("en", "ja", "zh", "Release notes")}
    with tempfile.TemporaryDirectory() as tmp:
        for name, folders in vaults.items():
            base = Path(tmp) / name.replace("/", "-")
            build(base, folders)
            inner: dict[Path, list[float]] = {t: [] for t in trees}
            whole: dict[Path, list[float]] = {t: [] for t in trees}
            pairs: dict[Path, list] = {}
            for _ in range(args.rounds):
                for tree in trees:
                    env = {**os.environ, "PYTHONPATH": str(tree)}
                    got = json.loads(subprocess.run(
                        [str(python_of(tree)), "-c", WORKER, str(base)], cwd=tree, env=env,
                        capture_output=True, text=True, check=True).stdout)
                    inner[tree].append(got["seconds"])
                    pairs[tree] = got["pairs"]
                    started = time.perf_counter()
                    subprocess.run([str(python_of(tree)), "-m", "mindgraph", "lint", "-C",
                                    str(base), "--rule", "near-duplicate", "--json"], cwd=tree,
                                   env=env, capture_output=True, check=True)
                    whole[tree].append(time.perf_counter() - started)
            count = sum(1 for _ in (base / "wiki").rglob("*.md"))
            print(f"{name} ({count} pages), medians of {args.rounds}; load "
                  f"{os.getloadavg()[0]:.1f}")
            for tree in trees:
                same = "same pairs" if pairs[tree] == pairs[trees[0]] else "OTHER PAIRS"
                print(f"  {tree}: near_duplicates {statistics.median(inner[tree]):.2f} s, "
                      f"lint --rule near-duplicate {statistics.median(whole[tree]):.2f} s; "
                      f"{len(pairs[tree])} pairs ({same})")


if __name__ == "__main__":
    main()
