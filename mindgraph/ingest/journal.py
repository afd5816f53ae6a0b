"""The ingest state's journal: the records a small run changed, appended beside the state file.

One line per commit: ``{"base": generation, "files": {path: record or null}, "moves": ...,
"index": ...}`` (moves and index only when they changed, then whole). A line is written with a
newline before and after it and fsync'ed, so a kill mid-append leaves at most one torn line,
which is skipped when read (the run that wrote it never committed it; every later line was
written by a run that loaded the state without it). Lines are replayed only onto the saved
state whose generation they name: a whole save starts a new generation and removes the
journal, and a journal it could not remove (a kill in between) is ignored.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any, Iterator

from ..fsutil import append_private

SUFFIX = ".journal"


def path_of(state_path: Path) -> Path:
    """The journal of a state file."""
    return state_path.with_name(state_path.name + SUFFIX)


def new_generation() -> str:
    """A fresh generation id for a whole save."""
    return secrets.token_hex(8)


def lines_of(path: Path, generation: str) -> Iterator[dict[str, Any]]:
    """The intact lines of the journal at ``path`` that apply to ``generation``, in order."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw.decode("utf-8"))
        except ValueError:
            continue            # torn by a kill mid-append: never committed
        if isinstance(line, dict) and line.get("base") == generation \
                and isinstance(line.get("files", {}), dict):
            yield line


def append(path: Path, line: str) -> None:
    """Append one line and make it durable (the folder too, when the journal is new)."""
    append_private(path, ("\n" + line + "\n").encode("utf-8"), durable=True)


def remove(path: Path) -> None:
    """Delete the journal (after a whole save made it redundant)."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
