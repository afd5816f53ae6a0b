"""Dates from git: when each file of a folder was first and last committed.

One ``git log`` for the whole folder, bounded in time, never one process per file. Empty when
the folder is not in a git work tree, git is missing, or the log takes longer than the bound
(a note then has no git date, never a made-up one). Author dates: when the change was written.
"""

from __future__ import annotations

import datetime as dt
import subprocess
from collections.abc import Iterable
from pathlib import Path

GIT_TIMEOUT_S = 20.0
History = dict[str, tuple[dt.date, dt.date]]   # path relative to the folder → (first, last)


def git_history(folder: Path, timeout_s: float = GIT_TIMEOUT_S,
                paths: Iterable[str] | None = None) -> History:
    """(first, last) commit date of every file under ``folder``, by path relative to it
    (only of ``paths``, relative to ``folder``, when given: a log of a few files)."""
    specs = ["."] if paths is None else [f":(literal){p}" for p in paths]
    if not specs:
        return {}
    try:
        log = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "-c", "log.showSignature=false",
             "-C", str(folder), "log", "--format=%x01%aI", "-z", "--name-only",
             "--relative", "--no-renames", "--", *specs],
            capture_output=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return {}
    if log.returncode != 0:
        return {}
    return parse_log(log.stdout.decode("utf-8", "surrogateescape"))


def parse_log(text: str) -> History:
    """Parse ``git log --format=%x01%aI -z --name-only`` (newest commit first)."""
    history: History = {}
    current: dt.date | None = None
    for field in text.split("\0"):
        field = field.strip("\n")
        if field.startswith("\x01"):
            try:
                current = dt.datetime.fromisoformat(field[1:].strip()).date()
            except ValueError:
                current = None
        elif field and current is not None:
            last = history.get(field, (current, current))[1]
            history[field] = (current, last)     # older commits come later: first moves back
    return history
