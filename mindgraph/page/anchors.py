"""What a link points into: the headings and block ids of a page, and attachment files.

A link can reach its page and still miss: ``[[Page#No such heading]]``, ``[[Page#^gone]]``, or
``![[diagram.png]]`` with no such file. Headings are matched as Obsidian does, loosely: by
their letters and digits, in any case (a link to "A: B" is written ``[[Page#A B]]``). An
attachment is found by its path (from the vault root or the linking page's folder) or, as in
Obsidian, by its file name alone, in the wiki or in raw/ (where ingest leaves attachments).
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import Callable, Iterable

from .markdown import find_headings, mask_code, mask_comments
from .model import Page

BLOCK_ID_RE = re.compile(r"(?:^|[\s\])])\^([A-Za-z0-9-]+)\s*$")   # " ^id", "]]^id" (embeds)
_NOT_WORD_RE = re.compile(r"[\W_]+")
SKIP_DIRS = frozenset({".git", ".obsidian", ".trash", ".mindgraph", "node_modules", ".venv"})
"""Folders no attachment is looked for in (hidden folders are skipped too)."""


def heading_key(text: str) -> str:
    """A heading as links match it: letters and digits only, case folded."""
    return _NOT_WORD_RE.sub("", text).casefold()


class PageAnchors:
    """Heading keys and block ids of pages, computed once per page on first use."""

    def __init__(self) -> None:
        self._found: dict[str, tuple[frozenset[str], frozenset[str]]] = {}

    def _of(self, page: Page) -> tuple[frozenset[str], frozenset[str]]:
        found = self._found.get(page.path)
        if found is None:
            lines = page.body.split("\n")
            masked = mask_code(mask_comments(page.body).split("\n"))
            headings = frozenset(heading_key(h.text) for h in find_headings(lines, masked))
            blocks = frozenset(m.group(1).lower() for line in masked
                               if (m := BLOCK_ID_RE.search(line)))
            found = self._found[page.path] = (headings, blocks)
        return found

    def missing_heading(self, page: Page, heading: str) -> str | None:
        """The first part of ``heading`` (``A#B`` for nested headings) that ``page`` lacks."""
        headings = self._of(page)[0]
        for part in heading.split("#"):
            if part.strip() and heading_key(part) not in headings:
                return part.strip()
        return None

    def has_block(self, page: Page, block: str) -> bool:
        """Whether ``page`` has the block id ``^block``."""
        return block.lower() in self._of(page)[1]


class AttachmentFiles:
    """The non-markdown files under some folders, by relative path and by file name (the
    folders are walked on the first question, so a vault without attachment links costs
    nothing). With ``visible``, only the files whose path (relative to their folder) it
    accepts: a scoped view finds no file of a scope it does not see, as if there were none.
    ``symlinks`` false: a symlinked file is not there (what is served must be no link)."""

    def __init__(self, roots: Iterable[Path], visible: Callable[[str], bool] | None = None,
                 symlinks: bool = True):
        self.roots = tuple(roots)
        self.visible = visible
        self.symlinks = symlinks
        self._paths: set[str] | None = None
        self._names: set[str] = set()
        self._found: dict[str, str] = {}   # lower-case path or file name → the first path

    def _remember(self, path: str, name: str) -> None:
        for key in (path.lower(), name.lower()):
            if key not in self._found or path < self._found[key]:
                self._found[key] = path

    def _scan(self) -> set[str]:
        paths: set[str] = set()
        for root in self.roots:
            for folder, dirs, files in os.walk(root, followlinks=False):
                dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")]
                rel = Path(folder).relative_to(root).as_posix()
                for name in files:
                    if name.lower().endswith((".md", ".markdown")):
                        continue
                    if not self.symlinks and os.path.islink(os.path.join(folder, name)):
                        continue
                    path = posixpath.normpath(posixpath.join(rel, name))
                    if self.visible is None or self.visible(path):
                        paths.add(path.lower())
                        self._names.add(name.lower())
                        self._remember(path, name)
        return paths

    def exists(self, target: str, source_path: str) -> bool:
        """Whether an attachment link to ``target`` written in ``source_path`` finds a file."""
        if self._paths is None:
            self._paths = self._scan()
        raw = target.strip().replace("\\", "/").lstrip("/")
        if not raw:
            return False
        folder = posixpath.dirname(source_path)
        for candidate in (raw, posixpath.join(folder, raw)):
            if posixpath.normpath(candidate).lower() in self._paths:
                return True
        return raw.rsplit("/", 1)[-1].lower() in self._names

    def locate(self, target: str, source_path: str) -> str | None:
        """The path (relative to its folder) of the file an attachment link finds, as
        ``exists`` finds it; by file name alone, the first such path in path order."""
        if not self.exists(target, source_path):
            return None
        raw = target.strip().replace("\\", "/").lstrip("/")
        folder = posixpath.dirname(source_path)
        for candidate in (raw, posixpath.join(folder, raw)):
            found = self._found.get(posixpath.normpath(candidate).lower())
            if found is not None:
                return found
        return self._found.get(raw.rsplit("/", 1)[-1].lower())
