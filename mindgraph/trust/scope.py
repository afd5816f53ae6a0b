"""The scope checks of an apply: before it, would any page it writes be too large to read;
after it, did exactly the planned pages change, and nothing else?

The workspace's wiki/ and raw/ are snapshotted (absolute path → size, mtime, inode) before and after.
Paths are compared as decoded text in Unicode NFC (a Japanese name written by one tool in NFD
is the same page), never as a tool's escaped output such as git's "\\346\\227\\245".
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Iterable

from ..fsutil import Stamp, stamp_of

Snapshot = dict[str, Stamp]


def snapshot(roots: Iterable[Path]) -> Snapshot:
    """Every file under ``roots`` (keys: absolute NFC paths) → its stat signature."""
    out: Snapshot = {}
    for root in roots:
        root = Path(root).resolve()
        if not root.is_dir():
            continue
        for folder, _, files in os.walk(root, followlinks=False):
            for name in files:
                path = Path(folder) / name
                try:
                    info = path.lstat()
                except OSError:
                    continue
                out[decoded(path.as_posix())] = stamp_of(info)
    return out


def decoded(path: str) -> str:
    """A path as comparable text: NFC, forward slashes."""
    return unicodedata.normalize("NFC", path.replace("\\", "/"))


def changed_paths(before: Snapshot, after: Snapshot) -> set[str]:
    """Paths added, removed or modified between two snapshots."""
    return {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}


def outside_scope(changed: set[str], targets: Iterable[str]) -> list[str]:
    """The changed paths that are not planned targets, sorted."""
    allowed = {decoded(t) for t in targets}
    return sorted(p for p in changed if p not in allowed)


def over_page_limit(pages: Iterable[tuple[str, bytes]], limit: int) -> str:
    """Why an apply may not write ``pages`` (wiki path, new bytes): those over
    ``limits.max_page_bytes``, which no command would read again; "" when none is."""
    large = [(path, len(data)) for path, data in pages if len(data) > limit]
    if not large:
        return ""
    named = ", ".join(f"{path} ({size:,} bytes)" for path, size in large[:5])
    more = f" and {len(large) - 5} more" if len(large) > 5 else ""
    return (f"{named}{more} would be over limits.max_page_bytes ({limit:,}), which no command "
            f"would read. Split the page, or raise limits.max_page_bytes in mindgraph.yml and "
            f"apply the plan again.")
