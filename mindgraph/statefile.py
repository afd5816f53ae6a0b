"""Versioned state files: the derived data a process loads at start (the page cache, the
keyword index, the graph), so that a file written by another mindgraph is rebuilt, not trusted.

Each file is a header line and a pickle::

    mindgraph-state {"kind": "graph", "format": "2", "mindgraph": "0.1.0"}\\n<pickle>

``read_state`` returns None — the caller rebuilds from the wiki and the next save replaces the
file — when the file is absent, has no header (a bare pickle of mindgraph before this module),
holds another kind, another format or was written by another mindgraph version, or when its
pickle is truncated or garbage. The header is checked before anything is unpickled, so an old
file's objects are never built from classes that changed since. Writes are atomic
(``fsutil.atomic_write_bytes``): a crash leaves the previous file or the new one.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

from .fsutil import atomic_write_bytes, open_regular
from .version import __version__

MAGIC = b"mindgraph-state "


def header(kind: str, format_version: str | int) -> dict[str, str]:
    """What a state file of ``kind`` written now says about itself."""
    return {"kind": kind, "format": str(format_version), "mindgraph": __version__}


def write_state(path: str | Path, kind: str, format_version: str | int,
                state: dict[str, Any]) -> None:
    """Atomically replace ``path`` with ``state`` under a header naming kind and format."""
    line = MAGIC + json.dumps(header(kind, format_version), sort_keys=True).encode() + b"\n"
    # written one after the other: header + pickle joined would copy the pickle once more
    atomic_write_bytes(Path(path), [line, pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)])


def read_state(path: str | Path, kind: str, format_version: str | int) -> dict[str, Any] | None:
    """The state dict saved by ``write_state`` with this kind and format by this mindgraph, or
    None when the file is absent, older, newer, another kind, truncated or garbage."""
    # unpickled from the open file, not from its bytes read first: those (and the copy a
    # slice past the header makes) doubled and tripled the memory a load needs at its peak
    # (at 100,000 notes the keyword index's file is 0.4 GB, the graph's 0.3 GB)
    try:
        with open_regular(path) as handle:
            line = handle.readline()
            if not line.startswith(MAGIC) or not line.endswith(b"\n") or \
                    json.loads(line[len(MAGIC):]) != header(kind, format_version):
                return None
            state = pickle.load(handle)
    except Exception:       # noqa: BLE001 - absent, or any damage to derived data: rebuild it
        return None
    return state if isinstance(state, dict) else None
