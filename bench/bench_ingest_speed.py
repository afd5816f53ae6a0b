"""Offline `mindgraph ingest` from scratch and re-run with nothing changed, ours beside a
baseline, each in a fresh process as a person waits for it (issue 20).

    python bench/bench_ingest_speed.py                               # the Obsidian Help vault
    python bench/bench_ingest_speed.py --baseline /tmp/main/.venv/bin/python --runs 5
    python bench/bench_ingest_speed.py --notes 10000 --runs 1        # a bench/gen_corpus.py vault

With a baseline, ``same_output`` says whether both wrote the same wiki/ (every byte of every
page) and the same ingest state (each record but its ``stat``, the copy's own file times): a
speed-up must not change what ingest writes.

Bytecode: with PYTHONPYCACHEPREFIX set, the children write and read their bytecode there
(PYTHONDONTWRITEBYTECODE is dropped for them: with both set, nothing is ever cached and every
run compiled each module from source, ~15 % of a run's samples), and each python ingests one
untimed copy first, so every timed run starts from cached bytecode.

Every run gets its own copy of the vault (made before any run starts, and at least two
seconds before it, so no note is "racy": see mindgraph/ingest/notes.py). Runs are interleaved
(ours, baseline, ours, ...); the medians of the wall time and of the CPU time (user + system
of the child: on a loaded machine the wall time is mostly waiting for a core) are printed
with the load average. Targets (idle machine): >= 500 files/s from scratch on the vault,
no-op <= 0.3 s on the vault and <= 10 s at 100,000 notes.
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
import shared_corpora  # noqa: E402  (bench/: on sys.path when a script runs)

ROOT = Path(__file__).resolve().parents[1]
VAULT = shared_corpora.corpora() / "obsidian-help"
sys.path.insert(0, str(ROOT / "bench"))


def child_env() -> dict[str, str]:
    """The children's environment: with a bytecode prefix, bytecode is written there."""
    env = dict(os.environ)
    if env.get("PYTHONPYCACHEPREFIX"):
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(python: str, workspace: Path) -> tuple[float, float, dict]:
    """(wall s, CPU s, the report) of one `mindgraph ingest --json` in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([python, "-m", "mindgraph", "ingest", "-C", str(workspace), "--json"],
                          capture_output=True, text=True, cwd=workspace, env=child_env())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"{python}: ingest failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, json.loads(done.stdout)


def same_output(ours: Path, theirs: Path) -> dict:
    """Whether two workspaces' wiki/ trees and ingest states are the same, and what differs."""
    def tree(workspace: Path) -> dict[str, bytes]:
        wiki = workspace / "wiki"
        return {p.relative_to(wiki).as_posix(): p.read_bytes()
                for p in sorted(wiki.rglob("*")) if p.is_file()}

    def state(workspace: Path) -> dict:
        data = json.loads((workspace / ".mindgraph" / ".ingest-state.json").read_text("utf-8"))
        for record in data["files"].values():
            record.pop("stat", None)
        return data

    pages, other = tree(ours), tree(theirs)
    differ = sorted(p for p in set(pages) | set(other) if pages.get(p) != other.get(p))
    mine, base = state(ours), state(theirs)
    records = sorted(p for p in set(mine["files"]) | set(base["files"])
                     if mine["files"].get(p) != base["files"].get(p))
    return {"same": not differ and not records and mine.get("moves") == base.get("moves"),
            "pages": len(pages), "pages_differ": differ[:10], "records_differ": records[:10]}


def workspaces(tmp: Path, names: list[str], notes: int) -> dict[str, Path]:
    """A fresh workspace per name: a copy of the vault (or of one generated vault)."""
    source = VAULT
    config = None
    if notes:
        import gen_corpus

        gen_corpus.main(["--notes", str(notes), "--seed", "1", "--workspace",
                         str(tmp / "source")])
        source, config = tmp / "source" / "raw", tmp / "source" / "mindgraph.yml"
    out = {}
    for name in names:
        base = tmp / name
        shutil.copytree(source, base / "raw", symlinks=True)
        if config is not None:
            shutil.copy2(config, base / "mindgraph.yml")
        out[name] = base
    time.sleep(2.1)     # no copied note is within ingest's racy window
    return out


def main() -> None:
    """Run and print the medians as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--baseline", help="another checkout's python (e.g. main's venv)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--noop-runs", type=int, default=5, help="no-op re-runs per workspace")
    parser.add_argument("--notes", type=int, default=0,
                        help="a gen_corpus.py vault of this many notes instead of the vault")
    args = parser.parse_args()
    pythons = {"ours": sys.executable, **({"baseline": args.baseline} if args.baseline else {})}
    figures: dict = {n: {"scratch wall": [], "scratch cpu": [], "noop wall": [], "noop cpu": []}
                     for n in pythons}
    loads: list[float] = []
    notes_done = 0
    with tempfile.TemporaryDirectory(prefix="mindgraph-ingest-speed-") as tmp:
        names = [f"{name}{run}" for run in range(args.runs) for name in pythons]
        warm = bool(os.environ.get("PYTHONPYCACHEPREFIX"))
        spaces = workspaces(Path(tmp), names + ([f"warm-{n}" for n in pythons] if warm else []),
                            args.notes)
        if warm:        # untimed: each tree's bytecode written to the prefix once
            for name, python in pythons.items():
                timed(python, spaces[f"warm-{name}"])
        for run in range(args.runs):
            for name, python in pythons.items():
                loads.append(os.getloadavg()[0])
                wall, cpu, report = timed(python, spaces[f"{name}{run}"])
                notes_done = report["ingested"] + report["failed"]
                figures[name]["scratch wall"].append(wall)
                figures[name]["scratch cpu"].append(cpu)
        for _ in range(args.noop_runs):
            for name, python in pythons.items():
                loads.append(os.getloadavg()[0])
                wall, cpu, report = timed(python, spaces[f"{name}0"])
                assert report["ingested"] == 0, report
                figures[name]["noop wall"].append(wall)
                figures[name]["noop cpu"].append(cpu)
        compared = same_output(spaces["ours0"], spaces["baseline0"]) if args.baseline else None
    out: dict = {"notes": notes_done, "runs": args.runs, "noop_runs": args.noop_runs,
                 "bytecode": f"cached in {os.environ['PYTHONPYCACHEPREFIX']}" if warm
                 else "as the environment has it (set PYTHONPYCACHEPREFIX to cache it)"}
    if compared is not None:
        out["same_output"] = compared
    for name, steps in figures.items():
        medians = {step: round(statistics.median(v), 3) for step, v in steps.items()}
        medians["files/s (wall)"] = round(notes_done / medians["scratch wall"], 1)
        medians["files/s (cpu)"] = round(notes_done / medians["scratch cpu"], 1)
        out[name] = medians
    out["load_median"] = round(statistics.median(loads), 1)
    out["load_range"] = [round(min(loads), 1), round(max(loads), 1)]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
