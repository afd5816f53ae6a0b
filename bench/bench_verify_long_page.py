"""`mindgraph verify` of one long page: CPU seconds against the page's size, side by side.

    python bench/bench_verify_long_page.py [--baseline OLD_MINDGRAPH] [--corpora DIR]
                                           [--sizes 0.75,1.5,3] [--runs 3]

Builds one raw note per size from the English help vault's notes laid end to end (3 MB is
about 20,000 claims), compiles it offline once, then per run and per program (interleaved,
the baseline first) plans a verification of the page from the same pristine wiki and an
empty trust state, and reads the child's CPU time (user + system). Prints the median per
size and program and the CPU per MB, which stays flat when the work is linear.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import programs as bench_programs  # bench/: on sys.path when a script runs
import shared_corpora


def long_note(vault: Path, size: int) -> str:
    """The vault's notes (frontmatter dropped) end to end until ``size`` bytes, cut at a
    paragraph."""
    parts, total = ["# Long page\n"], 0
    files = sorted(vault.rglob("*.md"))
    while total < size:
        text = files[len(parts) % len(files)].read_text(encoding="utf-8", errors="replace")
        if text.startswith("---"):
            text = text.split("---", 2)[-1]
        parts.append(text)
        total += len(text.encode("utf-8"))
    joined = "\n\n".join(parts)
    cut = joined.encode("utf-8")[:size].decode("utf-8", errors="ignore")
    return cut[:cut.rfind("\n\n")] + "\n"


def child_cpu(command: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, cwd=tempfile.gettempdir())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    bench_programs.add_option(parser)
    parser.add_argument("--sizes", default="0.75,1.5,3", help="page sizes in MB")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    progs = bench_programs.programs(parser, args.baseline)
    vault = shared_corpora.require(shared_corpora.corpora(), "obsidian-help") \
        / "obsidian-help" / "en"
    sizes = [float(s) for s in args.sizes.split(",")]
    env_note = os.environ.get("PYTHONPYCACHEPREFIX", "")
    print(f"verify (plan) of one page, CPU s, median of {args.runs} interleaved runs"
          + (f" (PYTHONPYCACHEPREFIX={env_note})" if env_note else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for mb in sizes:
            ws = Path(tmp) / f"ws-{mb}"
            (ws / "raw").mkdir(parents=True)
            (ws / "mindgraph.yml").write_text("compile:\n  max_note_bytes: 5000000\n")
            (ws / "raw" / "Long.md").write_text(long_note(vault, int(mb * 1e6)),
                                                encoding="utf-8")
            first = next(iter(progs.values()))
            subprocess.run([*first, "-C", str(ws), "ingest"], check=True,
                           capture_output=True, cwd=tempfile.gettempdir())
            shutil.copytree(ws / "wiki", ws / "pristine")
            cpu: dict[str, list[float]] = {name: [] for name in progs}
            for _ in range(args.runs):
                for name, program in progs.items():
                    shutil.rmtree(ws / "wiki")
                    shutil.copytree(ws / "pristine", ws / "wiki")
                    shutil.rmtree(ws / ".mindgraph" / "trust", ignore_errors=True)
                    cpu[name].append(child_cpu([*program, "-C", str(ws), "verify"]))
            for name, runs in cpu.items():
                median = statistics.median(runs)
                print(f"{mb:5.2f} MB  {name:<14} {median:6.2f} s  {median / mb:5.2f} s/MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
