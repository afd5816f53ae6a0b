"""Offline verification speed: pages/s for `verify` (plan) and `verify --apply`.

    python bench/bench_verify.py [--corpora DIR | --vault DIR] [--runs 3]

Copies the vault's notes into a temp workspace as raw/, compiles them offline once, then per
run: plans a verification of every page (claims checked against each page's raw note) and
applies the plan (metadata-only write-back plus the scope check). Prints the median of each.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import shared_corpora  # bench/: on sys.path when a script runs
from mindgraph.config import load_settings
from mindgraph.ingest.pipeline import run_ingest
from mindgraph.trust.ledger import ledger_path
from mindgraph.trust.service import TrustService


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared_corpora.add_option(parser)
    parser.add_argument("--vault", type=Path, default=None,
                        help="the notes to verify (default: the corpora's obsidian-help)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        vault = args.vault or shared_corpora.require(shared_corpora.corpora(),
                                                     "obsidian-help") / "obsidian-help"
        shutil.copytree(vault, base / "raw")
        settings = load_settings(base)
        run_ingest(settings)
        service = TrustService(settings)
        shutil.copytree(base / "wiki", base / "pristine")
        plan_s, apply_s, pages = [], [], 0
        for _ in range(args.runs):
            shutil.rmtree(base / "wiki")
            shutil.copytree(base / "pristine", base / "wiki")
            ledger_path(settings.state_dir).unlink(missing_ok=True)   # same plan each run
            started = time.perf_counter()
            planned = service.plan()
            plan_s.append(time.perf_counter() - started)
            pages = len(planned.plan.targets)
            started = time.perf_counter()
            result = service.apply(planned.path, planned.plan.digest)
            apply_s.append(time.perf_counter() - started)
            assert result.applied, result.run.reason
        plan, apply = statistics.median(plan_s), statistics.median(apply_s)
        print(f"{pages} pages, median of {args.runs} runs")
        print(f"verify (plan)    {plan:.2f} s  {pages / plan:.0f} pages/s")
        print(f"verify --apply   {apply:.2f} s  {pages / apply:.0f} pages/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
