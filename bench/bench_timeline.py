"""Timeline precision on the Obsidian release notes, for features whose first release is known.

    python bench/bench_timeline.py [--baseline OLD_MINDGRAPH] [--corpora DIR] [--json]

Copies the release notes and the English help vault (freshly copied: every file time is
today) into a temporary workspace's raw/ and runs `mindgraph timeline FEATURE --json --no-git`
for each feature of bench/questions/timeline-features.jsonl, with this checkout's mindgraph
and, side by side in the same run, with ``--baseline`` (another mindgraph executable, e.g.
one installed from an older commit). Per feature and in total:

- precision: the share of entries about the feature. An entry is wrong when it is dated
  before the release that introduced the feature (it cannot be about it), when the label
  lists it under ``not_about`` (hand-checked: it uses the word, not the feature), or when it
  is dated by the file's copy time (date_source mtime: its place in the timeline is made up);
- relative recall: the right entries found, out of all right entries any program found;
- first: whether the first entry is the release that introduced the feature.

Only release notes count (the help pages carry no dates).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
import programs as bench_programs  # noqa: E402  (bench/: on sys.path when a script runs)
import shared_corpora  # noqa: E402

HERE = Path(__file__).resolve().parent
CORPORA = shared_corpora.corpora()
LABELS = HERE / "questions" / "timeline-features.jsonl"


def make_workspace(root: Path, corpora: Path, program: list[str]) -> Path:
    workspace = root / "ws"
    subprocess.run([*program, "init", str(workspace)], check=True, capture_output=True)
    for part in ("Release notes", "en"):
        shutil.copytree(corpora / "obsidian-help" / part, workspace / "raw" / part)
    return workspace


def entries(program: list[str], workspace: Path, concept: str) -> list[dict]:
    done = subprocess.run([*program, "timeline", concept, "--json", "--no-git",
                           "-C", str(workspace)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(program)} timeline {concept!r} failed:\n{done.stderr}")
    return [e for e in json.loads(done.stdout)["entries"]
            if e["path"].startswith("Release notes/")]


def is_right(entry: dict, label: dict) -> bool:
    return (entry["date_source"] != "mtime" and entry["date"] >= label["date"]
            and entry["path"] not in label["not_about"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    bench_programs.add_option(parser)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    labels = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()
              if line.strip()]
    programs = bench_programs.programs(parser, args.baseline)
    corpora = shared_corpora.require(CORPORA, "obsidian-help")
    with tempfile.TemporaryDirectory(prefix="mindgraph-timeline-") as tmp:
        workspace = make_workspace(Path(tmp), corpora, programs[bench_programs.THIS_CHECKOUT])
        found = {name: {label["concept"]: entries(program, workspace, label["concept"])
                        for label in labels} for name, program in programs.items()}
    report = {name: [] for name in programs}
    for label in labels:
        concept = label["concept"]
        pool = {e["path"] for name in programs for e in found[name][concept]
                if is_right(e, label)}
        for name in programs:
            got = found[name][concept]
            right = [e for e in got if is_right(e, label)]
            report[name].append({
                "concept": concept, "entries": len(got), "right": len(right),
                "precision": len(right) / len(got) if got else 0.0,
                "recall": len(right) / len(pool) if pool else 0.0,
                "first": bool(got) and (got[0]["path"] in label["introduced"]
                                        or got[0]["date"] == label["date"]),
                "first_entry": f"{got[0]['date']} {got[0]['path']}" if got else "",
                "mtime_dated": sum(e["date_source"] == "mtime" for e in got)})
    totals = {}
    for name, rows in report.items():
        entries_n = sum(r["entries"] for r in rows)
        right_n = sum(r["right"] for r in rows)
        totals[name] = {"features": len(rows), "entries": entries_n, "right": right_n,
                        "micro_precision": right_n / entries_n if entries_n else 0.0,
                        "macro_precision": sum(r["precision"] for r in rows) / len(rows),
                        "macro_recall": sum(r["recall"] for r in rows) / len(rows),
                        "first_is_introduction": sum(r["first"] for r in rows),
                        "mtime_dated": sum(r["mtime_dated"] for r in rows)}
    if args.json:
        print(json.dumps({"features": report, "totals": totals}, indent=2))
        return 0
    names = list(programs)
    print(f"{'feature':<16}" + "".join(f"| {n:^34}" for n in names))
    print(f"{'':<16}" + "| entries  prec  recall  first      " * len(names))
    for i, label in enumerate(labels):
        cells = []
        for name in names:
            r = report[name][i]
            cells.append(f"| {r['entries']:>7}  {r['precision']:.2f}  {r['recall']:.2f}    "
                         f"{'yes' if r['first'] else 'no ':<9}")
        print(f"{label['concept']:<16}" + "".join(cells))
    for name in names:
        t = totals[name]
        print(f"{name}: precision {t['micro_precision']:.3f} over {t['entries']} entries "
              f"(macro {t['macro_precision']:.3f}), relative recall {t['macro_recall']:.3f}, "
              f"first entry = introducing release for {t['first_is_introduction']} of "
              f"{t['features']}; {t['mtime_dated']} entries dated by file time")
    return 0


if __name__ == "__main__":
    sys.exit(main())
