"""What the portable-name checks cost one `mindgraph pull`: casefold twins and a person's files.

    python bench/bench_pull_names.py --tree /work/main --tree . [--notes 5000] [--runs 3]

A custom adapter (in the workspace, by dotted path) lists ``--notes`` documents in 50 folders,
one in 20 a casefold twin of another (``Note 7.md`` and ``NOTE 7.md``), into raw/ that already
holds ``--notes`` / 10 files a person wrote (``mine 3.md``). For each --tree (a checkout; run
with PYTHONPATH at it) a fresh workspace is pulled twice by `python -m mindgraph pull --json`:
the first pull (every file written) and the second (every file unchanged), median wall seconds
of ``--runs`` (the trees taken in turn), and what was written and refused. pull now walks
raw/<target> once per adapter (owned.strangers) and keys every name by filenames.collision_key.
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

ADAPTER = '''
from mindgraph.adapters import RawDocument

class Many:
    def __init__(self, notes=1000):
        self.notes = notes

    def fetch(self):
        docs = []
        for n in range(self.notes):
            twin = n % 20 == 19         # the twin of the note before it, in its folder
            title = f"NOTE {n - 1}" if twin else f"Note {n}"
            folder = (n - 1 if twin else n) % 50
            docs.append(RawDocument(f"# {title}\\n\\nBody of {n}.\\n",
                                    f"folder {folder}/{title}.md", {"mtime": 1.6e9 + n}))
        return docs
'''


def workspace(root: Path, notes: int) -> Path:
    (root / "raw" / "many").mkdir(parents=True)
    for n in range(notes // 10):
        folder = root / "raw" / "many" / f"folder {n % 50}"
        folder.mkdir(exist_ok=True)
        (folder / f"mine {n}.md").write_text(f"a person's note {n}\n")
    (root / "mg_bench_many.py").write_text(ADAPTER)
    (root / "mindgraph.yml").write_text(
        "adapters:\n  - name: many\n    type: mg_bench_many.Many\n"
        f"    options: {{notes: {notes}}}\n")
    return root


def pull(tree: Path, root: Path) -> tuple[float, dict]:
    env = {**os.environ, "PYTHONPATH": f"{tree.resolve()}{os.pathsep}{root}"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mindgraph", "pull", "-C", str(root),
                           "--json"], env=env, capture_output=True, text=True, timeout=600,
                          cwd=root)       # not the checkout: `-m` puts the cwd first
    seconds = time.perf_counter() - started
    return seconds, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", type=Path, required=True)
    parser.add_argument("--notes", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    first: dict[Path, list[float]] = {tree: [] for tree in args.tree}
    second: dict[Path, list[float]] = {tree: [] for tree in args.tree}
    reports: dict[Path, dict] = {}
    for _ in range(args.runs):          # the trees in turn, so load on the machine hits both
        for tree in args.tree:
            with tempfile.TemporaryDirectory() as tmp:
                root = workspace(Path(tmp), args.notes)
                seconds, reports[tree] = pull(tree, root)
                first[tree].append(seconds)
                second[tree].append(pull(tree, root)[0])
    print(f"{'tree':<28} {'first pull s':>12} {'second s':>9} {'written':>8} {'rejected':>9}")
    for tree in args.tree:
        print(f"{str(tree):<28} {statistics.median(first[tree]):>12.2f} "
              f"{statistics.median(second[tree]):>9.2f} {reports[tree]['written']:>8} "
              f"{reports[tree]['rejected']:>9}")

if __name__ == "__main__":
    main()
