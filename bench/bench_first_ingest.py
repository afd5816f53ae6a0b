"""CPU and wall time of a *first* `mindgraph ingest` (a workspace with no state folder), side by
side for source trees: what the CLI's start-up costs a run beside compiling, e.g. the CJK
dictionaries hashed ahead (text/cjk.check_ahead), which an English-only workspace never needs.

    python bench/bench_first_ingest.py --trees /work/wt/base20 . [--runs 7]
    python bench/bench_first_ingest.py --trees A B --folders en --english-only --notes 20

Each run copies a folder of the Obsidian Help vault (``--folders``, under obsidian-help/; with
``--notes N`` only its first N notes; with ``--english-only`` without the notes that hold kana
or Han: the en folder's credits and Web Clipper filters do) to a new workspace's raw/ and runs `python -m mindgraph
ingest` there in a fresh process, the tree's code on PYTHONPATH; the trees' runs interleave
(tree A, tree B, tree A, ...) so both meet the same load. CPU is user + sys of the process and
every process it waited for (its workers, a hashing process it reaped). Bytecode is cached, as
it is for users.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shared_corpora import add_option, corpora  # noqa: E402

CORPORA = corpora()
CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def make_raw(folder: str, notes: int | None, english_only: bool, into: Path) -> None:
    """``into`` holding the notes of obsidian-help/``folder`` (only its first ``notes``, if
    given; without those holding kana or Han, if ``english_only``)."""
    source = CORPORA / "obsidian-help" / folder
    into.mkdir(parents=True)
    kept = [p for p in sorted(source.rglob("*.md"))
            if not english_only or not CJK.search(p.read_text(encoding="utf-8") + p.name)]
    for path in kept[:notes]:
        target = into / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def run_once(raw: Path, scratch: Path, tree: str) -> tuple[float, float]:
    """Wall and CPU seconds of one first `mindgraph ingest` over a copy of ``raw``."""
    workspace = Path(tempfile.mkdtemp(dir=scratch))
    shutil.copytree(raw, workspace / "raw", symlinks=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(Path(tree).resolve())
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mindgraph", "ingest", "-C", str(workspace)],
                          capture_output=True, text=True, env=env, cwd=workspace)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"ingest failed ({tree}):\n{done.stderr}")
    shutil.rmtree(workspace)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs="+", required=True, help="source trees to compare")
    parser.add_argument("--folders", nargs="+", default=["en"],
                        help="folders of obsidian-help/ (en, ja, zh)")
    parser.add_argument("--notes", type=int, default=None,
                        help="only the first N notes of each folder")
    parser.add_argument("--english-only", action="store_true",
                        help="leave out the notes that hold kana or Han")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    add_option(parser)
    args = parser.parse_args()
    rows = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="first-ingest-") as scratch:
        for folder in args.folders:
            raw = Path(scratch) / f"raw-{folder}"
            make_raw(folder, args.notes, args.english_only, raw)
            for tree in args.trees:         # one unmeasured run each: bytecode
                run_once(raw, Path(scratch), tree)
            times: dict[str, list[tuple[float, float]]] = {tree: [] for tree in args.trees}
            for _ in range(args.runs):
                for tree in args.trees:
                    times[tree].append(run_once(raw, Path(scratch), tree))
            rows += [{"folder": folder, "notes": len(list(raw.rglob("*.md"))), "tree": tree,
                      "median_wall_s": round(statistics.median(w for w, _ in runs), 3),
                      "median_cpu_s": round(statistics.median(c for _, c in runs), 3),
                      "cpus": [round(c, 3) for _, c in runs]}
                     for tree, runs in times.items()]
    load_after = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"rows": rows, "load": [load_before, load_after]}))
        return 0
    print(f"first ingest, fresh processes, {args.runs} interleaved runs each, medians "
          f"(load average {load_before:.1f} before, {load_after:.1f} after)")
    for row in rows:
        print(f"  {row['folder']:4} {row['notes']:4} notes  {row['tree']:28} wall {row['median_wall_s']:.3f} s  "
              f"CPU {row['median_cpu_s']:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
