"""Recency on real dates: newer release notes first for "what is new" questions, and undated
pages never moved by the time their files were copied.

    python bench/bench_recency.py [--baseline OLD_MINDGRAPH] [--corpora DIR] [--embedding local]

Builds a workspace from fresh copies of the release notes and the English help vault (raw/),
ingests it offline and embeds it, then runs `mindgraph bench --methods hybrid` on

1. bench/questions/recency.jsonl — ten "latest …" / "what changed recently in …" questions
   whose relevant pages are the newest release notes on the subject — with
   ``retrieval.recency`` auto and off;
2. the English development questions (the help vault, no dates) before and after half of the
   raw help files get a file time of 2001 and `ingest --force` recompiles them: an undated
   page must rank the same whatever its copy time.

With ``--baseline`` (another mindgraph executable, e.g. installed from an older commit) the
same runs are repeated with it, in its own workspace, side by side.
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
RECENCY = HERE / "questions" / "recency.jsonl"
OLD_MTIME = 978_307_200      # 2001-01-01


def run(program: list[str], *args: str, env: dict | None = None) -> str:
    done = subprocess.run([*program, *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if done.returncode != 0:
        sys.exit(f"{' '.join(program + list(args))} failed:\n{done.stderr}")
    return done.stdout


def scores(program: list[str], workspace: Path, questions: Path, **env: str) -> dict:
    out = run(program, "bench", str(questions), "--methods", "hybrid", "--json",
              "-C", str(workspace), env=env)
    return json.loads(out)["methods"][0]["overall"]


def rankings(program: list[str], workspace: Path, questions: Path) -> list[list[str]]:
    """Top 10 pages of each question (one process per question: fine for 28)."""
    out = []
    for line in questions.read_text(encoding="utf-8").splitlines():
        query = json.loads(line)["query"]
        data = json.loads(run(program, "search", "--hybrid", query, "-n", "10", "--json",
                              "-C", str(workspace)))
        out.append([r["page"] for r in data["results"]])
    return out


def measure(name: str, program: list[str], root: Path, corpora: Path, embedding: str,
            dev_en: Path) -> dict:
    workspace = root / name.replace(" ", "-")
    run(program, "init", str(workspace))
    (workspace / "mindgraph.yml").write_text(f"embedding:\n  provider: {embedding}\n")
    for part in ("Release notes", "en"):
        shutil.copytree(corpora / "obsidian-help" / part, workspace / "raw" / part)
    run(program, "ingest", "-C", str(workspace))
    run(program, "embed", "-C", str(workspace))
    result = {"recency auto": scores(program, workspace, RECENCY),
              "recency off": scores(program, workspace, RECENCY,
                                    MINDGRAPH_RETRIEVAL__RECENCY="off"),
              "dev en, fresh copy": scores(program, workspace, dev_en)}
    fresh = rankings(program, workspace, dev_en)
    help_files = sorted((workspace / "raw" / "en").rglob("*.md"))
    for path in help_files[::2]:
        os.utime(path, (OLD_MTIME, OLD_MTIME))
    run(program, "ingest", "--force", "-C", str(workspace))
    run(program, "embed", "-C", str(workspace))
    result["dev en, half the files copied in 2001"] = scores(program, workspace, dev_en)
    aged = rankings(program, workspace, dev_en)
    result["rankings unchanged"] = f"{sum(a == b for a, b in zip(fresh, aged))} of {len(fresh)}"
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    bench_programs.add_option(parser)
    parser.add_argument("--embedding", default="local",
                        help="embedding provider of the workspaces (local, hashing)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    programs = bench_programs.programs(parser, args.baseline)
    corpora = shared_corpora.require(CORPORA, "obsidian-help")
    with tempfile.TemporaryDirectory(prefix="mindgraph-recency-") as tmp:
        dev_en = Path(tmp) / "dev-en.jsonl"
        lines = (corpora / "obsidian-help-queries.dev.jsonl").read_text(encoding="utf-8")
        dev_en.write_text("".join(line + "\n" for line in lines.splitlines()
                                  if json.loads(line).get("lang") == "en"), encoding="utf-8")
        report = {name: measure(name, program, Path(tmp), corpora, args.embedding, dev_en)
                  for name, program in programs.items()}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for name, result in report.items():
        print(f"== {name}")
        for run_name, value in result.items():
            if isinstance(value, dict):
                print(f"  {run_name:<40} hit@1 {value['hit1']:.3f}  R@5 {value['recall5']:.3f}"
                      f"  MRR@10 {value['mrr10']:.3f}")
            else:
                print(f"  {run_name:<40} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
