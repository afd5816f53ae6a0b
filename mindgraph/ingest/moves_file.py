"""The page moves in a small state file of their own, beside the ingest state.

A process that only needs the moves (the link resolver of `serve`, `search`, `check`; the
vector store handing a moved page its old vectors) read them from the whole ingest state: at
100,000 notes 172 MB of JSON and 100,000 records built, ~290 MB more at `serve`'s peak, for a
few hundred entries. Each save of the ingest state, and each journal line appended to it, now
also writes ``.ingest-state.json.moves``: a state file (statefile.py: a header naming its kind,
format and mindgraph, then a pickle; written atomically) holding the moves and the stamps
(fsutil.stamp_of: mtime, ctime, inode, size) of the state file and of its journal they were
read from.

``read_moves`` trusts the file only while both stamps are the ones it names. Anything else —
no file (a workspace ingested by a mindgraph before this one), a file of another mindgraph or
format, a damaged one, or a state file or journal written since by a mindgraph that does not
write this file, or copied (a copy has new inodes) — returns None: the caller reads the whole
state once, as before, and ``write_moves`` saves what it read under the stamps taken before it
read them, so the next process reads the small file. A stamp taken before the read and a
state replaced during it can only leave a file that does not match: never a wrong answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..fsutil import Stamp, file_stamp
from ..statefile import read_state, write_state
from . import journal

SUFFIX = ".moves"
KIND = "ingest-moves"
FORMAT = 1


def path_of(state_path: Path) -> Path:
    """The moves file of an ingest state file."""
    return state_path.with_name(state_path.name + SUFFIX)


def stamps_of(state_path: Path) -> tuple[Stamp | None, Stamp | None]:
    """What tells that the ingest state (the file and its journal) changed, unread."""
    return file_stamp(state_path), file_stamp(journal.path_of(state_path))


def read_moves(state_path: Path,
               stamps: tuple[Stamp | None, Stamp | None]) -> dict[str, dict[str, Any]] | None:
    """The moves saved for the ingest state whose ``stamps`` (``stamps_of``) are given, or
    None when the file is absent, of another version or damaged, or names other stamps."""
    saved = read_state(path_of(state_path), KIND, FORMAT)
    if saved is None or saved.get("stamps") != stamps or not isinstance(saved.get("moves"), dict):
        return None
    return saved["moves"]


def write_moves(state_path: Path, moves: dict[str, dict[str, Any]],
                stamps: tuple[Stamp | None, Stamp | None]) -> None:
    """Atomically save ``moves``, read from (or just written to) the ingest state whose
    stamps are ``stamps``. Saved as the state file's JSON gives them back (keys sorted,
    lists not tuples), so a reader of either gets equal moves in the same order."""
    as_read = json.loads(json.dumps(moves, ensure_ascii=False, sort_keys=True))
    write_state(path_of(state_path), KIND, FORMAT, {"stamps": stamps, "moves": as_read})
