"""Which file-system events concern the watcher: notes under raw/, pages under wiki/.

An event is turned into a ``Change``: the area ("raw" or "wiki") and the path relative to it.
Hidden files and folders (editor swap files, ``.obsidian``, ``.git``), ``node_modules`` and the
state folder are never changes; other files that are not notes or pages (an editor's
``note.md.tmp`` or ``note.md~``, attachments) are dropped too, except a folder, which may hold
notes (a folder moved or deleted reports no event for the files inside it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..ingest.scan import IGNORED_DIRS, NOTE_SUFFIXES
from ..page.vault import MARKDOWN_SUFFIXES, SKIP_DIRS

RAW, WIKI = "raw", "wiki"


@dataclass(frozen=True, order=True)
class Change:
    """A path that may have changed: ``area`` raw or wiki, ``path`` relative to it (POSIX);
    ``folder`` when it is (or was) not a note file but may hold some."""

    area: str
    path: str
    folder: bool = False

    def __str__(self) -> str:
        return f"{self.area}/{self.path}"


class Areas:
    """The watched folders of a workspace and how an absolute event path maps into them."""

    def __init__(self, raw_dir: Path, wiki_dir: Path, state_dir: Path):
        self.roots = {RAW: Path(raw_dir).resolve(), WIKI: Path(wiki_dir).resolve()}
        self.state_dir = Path(state_dir).resolve()

    def folders(self) -> list[Path]:
        """The folders to watch that exist now."""
        return [p for p in self.roots.values() if p.is_dir()]

    def change_of(self, absolute: str) -> Change | None:
        """The change an event at ``absolute`` stands for, or None when it concerns no note."""
        path = Path(absolute)
        if path == self.state_dir or self.state_dir in path.parents:
            return None
        # wiki first: a raw folder inside the wiki is refused by ingest, but the nearest
        # root decides either way
        for area, root in sorted(self.roots.items(), key=lambda kv: -len(kv[1].parts)):
            if path == root or root in path.parents:
                rel = path.relative_to(root).as_posix()
                parts = rel.split("/")
                if rel == "." or any(p.startswith(".") or p in IGNORED_DIRS or p in SKIP_DIRS
                                     for p in parts):
                    return None
                suffixes = NOTE_SUFFIXES if area == RAW else MARKDOWN_SUFFIXES
                if rel.lower().endswith(suffixes) and not path.is_dir():
                    return Change(area, rel)
                if path.is_dir() or not path.exists() and "." not in parts[-1]:
                    return Change(area, rel, folder=True)
                return None
        return None
