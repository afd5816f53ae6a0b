"""Writing wiki/: pages replaced atomically, removed, or marked when their raw note is gone.

A page is written to a temp file in its folder and renamed over the target, so a process
killed at any instant leaves the old page or the new one, never a torn one. Pages are not
fsync'ed one by one (that would cap the offline compiler near 60 pages/s here); instead
``make_durable`` flushes them once before the state that records them is committed, so after a
power loss the state never claims a page that is not on disk. Every write and delete checks
that the path lies inside wiki/ and outside raw/.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..errors import IngestError
from .. import fsutil
from ..fsutil import UnreadableFile, atomic_write_bytes, read_bytes

FSYNC_PAGES = 32      # more pages written than this are flushed by one os.sync()


class WikiWriter:
    """Writes, removes and marks pages under ``wiki_dir``; never touches ``raw_dir``."""

    def __init__(self, wiki_dir: Path, raw_dir: Path, max_bytes: int | None = None):
        self.wiki_dir = Path(wiki_dir).resolve()
        self.raw_dir = Path(raw_dir).resolve()
        self.max_bytes = max_bytes      # limits.max_page_bytes: a larger page is never read
        self.dirty = False
        self._wiki = str(self.wiki_dir)
        self._real_folders: dict[str, str] = {}     # folder → "" (inside wiki/) or where it leads
        self._listed: dict[str, frozenset[str]] = {}    # folder → the files in it (exists)
        self._written: set[str] | None = set()  # pages written since make_durable (None: many,
        #                                         or a removal: flush everything)

    def path(self, wiki_path: str) -> Path:
        """Absolute path of a page, after checking it stays in wiki/ and out of raw/."""
        return Path(self._checked(wiki_path))

    def exists(self, wiki_path: str) -> bool:
        """True when the page is there (as a file). Its folder is listed once, not each page
        stat'ed (a no-op run asks for every page); a name not listed is stat'ed after all (a
        file system that ignores case, a page written since)."""
        target = self._checked(wiki_path)
        folder, name = os.path.split(target)
        names = self._listed.get(folder)
        if names is None:
            names = self._listed[folder] = _files_in(folder)
        return name in names or os.path.isfile(target)

    def _checked(self, wiki_path: str) -> str:
        # The verdict depends on the page's folder only (its real location), so it is found
        # once per folder per run: a no-op run over 10,000 pages spent 1.9 s in pathlib here.
        target = os.path.join(self._wiki, wiki_path)
        folder, name = os.path.split(target)
        verdict = self._real_folders.get(folder) if name not in ("", ".", "..") else None
        if verdict is None:
            real = Path(folder).resolve() / name
            # wiki/ may sit inside raw/ (scans leave it out), never the other way round.
            inside_raw = real.is_relative_to(self.raw_dir) and \
                not self.wiki_dir.is_relative_to(self.raw_dir)
            verdict = "" if real.is_relative_to(self.wiki_dir) and not inside_raw \
                else str(real)
            if name not in ("", ".", ".."):
                self._real_folders[folder] = verdict
        if verdict:
            raise IngestError(f"wiki page {wiki_path} would be written outside wiki/ "
                              f"({os.path.join(os.path.dirname(verdict), name)}); remove the "
                              f"symlink in {self.wiki_dir} that leads there.")
        return target

    def read(self, wiki_path: str) -> bytes | None:
        """A page's bytes, or None if there is no such file (or one over ``max_bytes``,
        which a compiled page never is: it is replaced)."""
        try:
            return read_bytes(self._checked(wiki_path), max_bytes=self.max_bytes)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, UnreadableFile):
            return None     # a FIFO where the page belongs: the write replaces it

    def write(self, wiki_path: str, data: bytes, current: bytes | None = b"") -> None:
        """Replace a page atomically (skipped when the bytes are already there; ``current``:
        the page's bytes as the caller just read them, None when there is none)."""
        target = self._checked(wiki_path)      # a string: pathlib cost a tenth of a write
        if (self.read(wiki_path) if current == b"" else current) == data:
            return
        # make_durable flushes them later
        atomic_write_bytes(target, data, durable=False, shared=True)
        self.dirty = True
        if self._written is not None:
            self._written.add(target)
            if len(self._written) > FSYNC_PAGES:
                self._written = None
        self._listed.pop(os.path.dirname(target), None)

    def remove(self, wiki_path: str) -> None:
        """Delete a page and the folders it leaves empty."""
        target = self.path(wiki_path)
        try:
            target.unlink()
        except FileNotFoundError:
            return
        self.dirty = True
        self._written = None
        self._real_folders.clear()      # the folders it empties go
        self._listed.clear()
        folder = target.parent
        while folder != self.wiki_dir and folder.is_relative_to(self.wiki_dir):
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent

    def mark_source_deleted(self, wiki_path: str, data: bytes) -> None:
        """Add ``source_deleted: true`` to a page's frontmatter, leaving the rest as written."""
        text = data.decode("utf-8", errors="replace")
        if re.search(r"(?m)^source_deleted:\s*true\s*$", text.split("\n---", 1)[0]):
            return
        if text.startswith("---\n") and "\n---" in text[3:]:
            end = text.index("\n---", 3)
            text = text[:end] + "\nsource_deleted: true" + text[end:]
        else:
            text = "---\nsource_deleted: true\n---\n" + text
        self.write(wiki_path, text.encode("utf-8"))

    def make_durable(self) -> None:
        """Flush written pages to disk (called before the state that records them is saved)."""
        if self.dirty and self._written is not None:
            # a few pages (a targeted run's): each one and its folder, not every disk
            for target in sorted(self._written):
                fsutil.fsync_path(target)
            for folder in sorted({os.path.dirname(t) for t in self._written}):
                fsutil.fsync_path(folder)
        elif self.dirty and hasattr(os, "sync"):
            os.sync()
        self.dirty = False
        self._written = set()


def _files_in(folder: str) -> frozenset[str]:
    """The names of the files in ``folder`` (symlinks to files included, as os.path.isfile
    counts them); none when it cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            return frozenset(e.name for e in entries if e.is_file())
    except OSError:
        return frozenset()


def clean_temp_files(folder: Path) -> int:
    """Delete temp files a killed run left under ``folder``; returns how many (ingest holds
    its lock, so no other run is writing there)."""
    return fsutil.clean_temp_files(folder)
