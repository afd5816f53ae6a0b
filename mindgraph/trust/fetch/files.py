"""Local files cited by a page, read only when they lie inside the workspace's note folders.

The roots are the folders given (`verify` gives raw/ and wiki/, wherever they are configured;
which of their files a page may cite is decided before, by trust/reach.py). A target (an
absolute path, already joined with the folder of the note that cites it) is refused when it
climbs out of every one of those folders (``..``), or resolves
(through a symlink anywhere on the way) to a place outside them; when it is not a regular
file; or when it is over the size cap. HTML files give their text (html_text); any other file
is read as UTF-8 text.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from ...fsutil import read_bytes
from .base import Fetched, FetchError
from .html_text import html_to_text

HTML_SUFFIXES = (".html", ".htm", ".xhtml")


class FileFetcher:
    """Reads files inside the workspace's folders as evidence text."""

    def __init__(self, roots: Iterable[Path], max_bytes: int):
        self.roots = tuple(Path(r).resolve() for r in roots)
        self.max_bytes = max_bytes

    def fetch(self, target: str) -> Fetched:
        """The text of the file at absolute path ``target``."""
        path = Path(os.path.normpath(target))
        shown = self.shown(path)
        if not path.is_absolute() or not self._inside(path):
            raise FetchError(f"{shown} lies outside the workspace; not read")
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            raise FetchError(f"{shown} does not exist") from None
        if not self._inside(real):
            raise FetchError(f"{shown} leads outside the workspace (a symlink); not read")
        try:
            data = read_bytes(real, max_bytes=self.max_bytes)
        except OSError as exc:
            raise FetchError(f"{shown}: {exc.strerror or exc}") from None
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        if real.suffix.lower() in HTML_SUFFIXES:
            text = html_to_text(text)
        return Fetched.of(text)

    def shown(self, path: Path) -> str:
        """``path`` relative to the workspace folder holding it (as given when none does)."""
        for root in self.roots:
            if path.is_relative_to(root):
                return path.relative_to(root).as_posix()
        return str(path)

    def _inside(self, path: Path) -> bool:
        return any(path.is_relative_to(root) for root in self.roots)
