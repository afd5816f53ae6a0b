"""The mindgraph programs a bench script runs side by side: this checkout, and with
``--baseline`` another mindgraph executable (e.g. installed from an older commit), first.

One place for the option and the table (bench_one_language_vault.py, bench_recency.py and
bench_timeline.py each built it), and a baseline that cannot run is a usage error at once,
not a traceback after the workspace was built.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

THIS_CHECKOUT = "this checkout"
ROOT = Path(__file__).resolve().parents[1]


def add_option(parser: argparse.ArgumentParser) -> None:
    """Declare ``--baseline`` in the script's parser."""
    parser.add_argument("--baseline", help="another mindgraph executable to compare with")


def programs(parser: argparse.ArgumentParser, baseline: str | None) -> dict[str, list[str]]:
    """Name → command line of each program to run ("baseline" first when given, then
    ``THIS_CHECKOUT``); a ``baseline`` that is no executable stops the script (exit 2)."""
    ours = {THIS_CHECKOUT: [sys.executable, "-m", "mindgraph"]}
    if not baseline:
        return ours
    if shutil.which(baseline) is None:
        parser.error(f"--baseline {baseline}: no such executable (give the path of another "
                     f"checkout's mindgraph, e.g. /work/main/.venv/bin/mindgraph)")
    return {"baseline": [baseline], **ours}


def add_tree_option(parser: argparse.ArgumentParser) -> None:
    """Declare ``--tree`` (repeatable): checkouts, each with its own .venv, measured side by
    side in worker processes of their own."""
    parser.add_argument("--tree", action="append", type=Path,
                        help="a checkout to measure (repeat; default: this one)")


def checkouts(given: list[Path] | None) -> list[Path]:
    """The ``--tree`` checkouts, resolved (this checkout when none is given)."""
    return [t.resolve() for t in (given or [ROOT])]


def python_of(tree: Path) -> Path:
    """The interpreter of a checkout's .venv, else this one."""
    found = tree / ".venv" / "bin" / "python"
    return found if found.exists() else Path(sys.executable)
