"""The built-in filesystem adapter: every note under a folder, sub-folders kept."""

from __future__ import annotations

import os
from stat import S_ISREG
from pathlib import Path
from typing import Iterable

from ..errors import AdapterError
from ..fsutil import UnreadableFile, read_bytes
from .base import RawDocument

DEFAULT_EXTENSIONS = (".md", ".markdown", ".txt")
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})


class FilesystemAdapter:
    """Reads files with the given extensions under ``path``; keeps their relative paths.

    Hidden files and folders (``.git``, ``.obsidian``, ``.trash``) and ``node_modules`` are
    skipped, and symlinks are never followed, so a link loop or a link out of the folder
    cannot pull in anything else. A file over ``max_bytes`` is not read at all: its relative
    path and size go to ``oversized`` (pull reports it).
    """

    def __init__(self, path: str | Path, target: str = "",
                 extensions: Iterable[str] = DEFAULT_EXTENSIONS, max_bytes: int | None = None):
        self.root = Path(path).expanduser()
        self.target = target
        self.max_bytes = max_bytes
        self.oversized: list[tuple[str, int]] = []
        if isinstance(extensions, str):     # `extensions: md` in YAML, not a list
            extensions = [extensions]
        self.extensions = tuple(e.lower() if e.startswith(".") else f".{e.lower()}"
                                for e in extensions)

    def fetch(self) -> list[RawDocument]:
        """Every matching file under the folder, in path order."""
        if not self.root.is_dir():
            raise AdapterError(f"filesystem adapter: folder {self.root} does not exist. "
                               f"Fix options.path in mindgraph.yml.")
        documents = []
        self.oversized = []
        for file in self._walk():
            rel = file.relative_to(self.root).as_posix()
            try:
                stat = file.stat(follow_symlinks=False)
                if not S_ISREG(stat.st_mode):   # a FIFO would block the read forever
                    continue
                if self.max_bytes is not None and stat.st_size > self.max_bytes:
                    self.oversized.append((rel, stat.st_size))
                    continue
                data = read_bytes(file, follow_symlinks=False)
            except (FileNotFoundError, UnreadableFile):  # deleted or swapped while we walked
                continue
            except OSError as exc:
                raise AdapterError(f"filesystem adapter: cannot read {file} "
                                   f"({exc.strerror or exc}). Check its permissions.") from exc
            documents.append(RawDocument(data, rel, {"mtime": stat.st_mtime,
                                                      "source": str(file)}))
        return documents

    def _walk(self) -> Iterable[Path]:
        for folder, dirs, files in os.walk(self.root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
            for name in sorted(files):
                path = Path(folder) / name
                if name.startswith(".") or path.is_symlink():
                    continue
                if name.lower().endswith(self.extensions):
                    yield path
