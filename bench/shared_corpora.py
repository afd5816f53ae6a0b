"""Where the shared corpora are (obsidian-help, scifact, the dev questions), for the scripts of
bench/ — the package's own benchmark runner, `mindgraph bench`, takes its folders as
arguments instead.

One rule for every script: ``--corpora DIR``, else ``$MINDGRAPH_CORPORA``, else
``shared/corpora`` beside the checkout the script runs from — and, for a git worktree, beside
the main checkout it belongs to (a worktree's own parent holds no corpora). A script reads
the folder once with ``corpora()`` (its module constants may depend on it: the option is
read from the command line before the script's own parser runs) and declares the option in
its parser with ``add_option`` so ``--help`` shows it and the parser accepts it.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

ENV = "MINDGRAPH_CORPORA"
REPO = Path(__file__).resolve().parents[1]
HELP = (f"the shared corpora folder (obsidian-help, scifact, the dev questions; default: "
        f"${ENV}, else shared/corpora beside this checkout or, in a git worktree, beside its "
        f"main checkout)")


def main_checkout(repo: Path = REPO) -> Path:
    """The main checkout of ``repo``: itself, or for a git worktree (whose .git is a file
    naming its git dir) the folder holding the repository's common .git."""
    marker = repo / ".git"
    if not marker.is_file():
        return repo
    try:
        text = marker.read_text(encoding="utf-8").strip()
        gitdir = Path(text.removeprefix("gitdir:").strip())
        gitdir = gitdir if gitdir.is_absolute() else (repo / gitdir)
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return repo
    common_dir = Path(common) if Path(common).is_absolute() else gitdir / common
    return common_dir.resolve().parent


def default_candidates(repo: Path = REPO) -> list[Path]:
    """The folders looked in when neither the option nor the variable is given, in order."""
    found = [repo.parent / "shared" / "corpora"]
    main = main_checkout(repo)
    if main != repo:
        found.append(main.parent / "shared" / "corpora")
    return found


def corpora(argv: Sequence[str] | None = None, environ: dict[str, str] | None = None,
            repo: Path = REPO) -> Path:
    """The corpora folder for this run (it may not exist: ``require`` says so, with the fix)."""
    peek = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    peek.add_argument("--corpora", type=Path, default=None)
    given = peek.parse_known_args(list(sys.argv[1:] if argv is None else argv))[0].corpora
    if given is not None:
        return given.expanduser()
    env = (os.environ if environ is None else environ).get(ENV, "")
    if env:
        return Path(env).expanduser()
    candidates = default_candidates(repo)
    return next((c for c in candidates if c.is_dir()), candidates[0])


def add_option(parser: argparse.ArgumentParser) -> None:
    """Declare ``--corpora DIR`` in a script's parser (read already by ``corpora()``)."""
    parser.add_argument("--corpora", type=Path, default=None, metavar="DIR", help=HELP)


def require(folder: Path, *names: str) -> Path:
    """``folder``, after checking that it holds ``names`` (exit with the fix when not)."""
    missing = [n for n in names if not (folder / n).exists()] if folder.is_dir() else list(names)
    if missing:
        sys.exit(f"{', '.join(missing)} not found in {folder}: pass --corpora DIR or set "
                 f"{ENV} to the shared corpora folder.")
    return folder


__all__ = ["ENV", "HELP", "add_option", "corpora", "default_candidates", "main_checkout",
           "require"]
