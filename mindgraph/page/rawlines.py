"""Where in raw/ a finding about a compiled wiki page is fixed: the raw note and its line.

A compiled page names its raw note in ``provenance.sources`` (``sources`` before that); people edit that note, not the page, and
the page's lines are not the note's (frontmatter and a summary are added). A link on a wiki
line is found again in the raw note as the same link (syntax, target, heading, block), the
n-th such link of the page being the n-th of the note. Only notes inside raw/ that are
regular files are read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..fsutil import read_bytes
from .links import extract_links
from .markdown import mask_code, mask_comments, split_frontmatter
from .model import Link, Page
from .vault import PageLimits


def raw_source(page: Page) -> str:
    """The raw-relative path of the note a compiled page came from ("" when none)."""
    paths = source_paths(page.frontmatter)
    return paths[0] if paths else ""


def source_paths(frontmatter: Mapping[str, Any]) -> list[str]:
    """The raw paths a compiled page names: ``provenance.sources`` (or, on pages written
    before that record, the top-level ``sources``)."""
    provenance = frontmatter.get("provenance")
    sources = provenance.get("sources") if isinstance(provenance, Mapping) else None
    if sources is None:
        sources = frontmatter.get("sources")
    out = []
    for item in sources if isinstance(sources, list) else []:
        path = item.get("path") if isinstance(item, Mapping) else item
        if isinstance(path, str) and path.strip():
            out.append(path)    # as written: " note.md" is a file name of its own
    return out


def read_raw_note(raw_dir: Path, rel: str) -> str | None:
    """The text of the raw note at raw-relative ``rel`` (None when it is outside raw/, gone,
    unreadable, not a regular file or too large)."""
    root = raw_dir.resolve()
    file = (root / rel).resolve()
    if not file.is_relative_to(root):
        return None
    try:
        data = read_bytes(file, max_bytes=PageLimits().max_bytes)
    except OSError:         # gone, unreadable, not a regular file or too large
        return None
    return data.decode("utf-8", "replace").replace("\r\n", "\n").removeprefix("\ufeff")


def _key(link: Link) -> tuple[Any, ...]:
    return (link.syntax == "embed", link.target.strip().lower(), link.heading, link.block)


class RawLines:
    """Maps (wiki page, wiki line of a link) to (raw note, raw line), reading each note once.

    Each page's and each note's links are grouped by key once, so placing every finding of a
    page is linear in its links (it was links × findings: minutes on a huge note)."""

    def __init__(self, raw_dir: Path):
        self.raw_dir = raw_dir.resolve()
        self._notes: dict[str, list[Link] | None] = {}
        self._note_lines: dict[str, dict[tuple[Any, ...], list[int]]] = {}
        self._page_nth: dict[str, tuple[Page, dict[int, int]]] = {}

    def note(self, rel: str) -> list[Link] | None:
        """The body links of the raw note at raw-relative ``rel`` (their lines are the
        file's), or None when it cannot be read."""
        if rel not in self._notes:
            self._notes[rel] = self._read(rel)
        return self._notes[rel]

    def _read(self, rel: str) -> list[Link] | None:
        text = read_raw_note(self.raw_dir, rel)
        if text is None:
            return None
        _, body, fm_lines = split_frontmatter(text)
        masked = mask_code(mask_comments(body).split("\n"))
        return extract_links(masked, fm_lines + 1, lambda _line: "lead")

    def line(self, page: Page, rel: str, link: Link) -> int:
        """The line in the raw note ``rel`` of ``link`` of the compiled ``page`` (0 when the
        note has no such link)."""
        note = self.note(rel)
        if note is None or link.line <= 0:
            return 0
        raw = self._lines_by_key(rel, note).get(_key(link))
        if not raw:
            return 0
        nth = self._nth(page).get(id(link), 0)
        return raw[min(nth, len(raw) - 1)]

    def frontmatter_line(self, rel: str, key: str) -> int:
        """The line of the frontmatter key ``key`` (``permalink``) in the raw note ``rel``
        (0 when the note cannot be read or its frontmatter has no such key)."""
        text = read_raw_note(self.raw_dir, rel)
        if text is None:
            return 0
        _, _, fm_lines = split_frontmatter(text)
        wanted = key.lower()
        for number, line in enumerate(text.split("\n")[:fm_lines], 1):
            name, colon, _ = line.partition(":")
            if colon and name.strip().lower() == wanted and not line[:1].isspace():
                return number
        return 0

    def text_line(self, rel: str, written: str) -> int:
        """The first line of the raw note ``rel`` that holds ``written`` (a note's HTML tag,
        which no link names); 0 when the note cannot be read or has it nowhere."""
        text = read_raw_note(self.raw_dir, rel)
        if text is None:
            return 0
        return next((number for number, line in enumerate(text.split("\n"), 1)
                     if written in line), 0)

    def _lines_by_key(self, rel: str, note: list[Link]) -> dict[tuple[Any, ...], list[int]]:
        lines = self._note_lines.get(rel)
        if lines is None:
            lines = {}
            for r in note:
                lines.setdefault(_key(r), []).append(r.line)
            self._note_lines[rel] = lines
        return lines

    def _nth(self, page: Page) -> dict[int, int]:
        """id(link) → how many links of ``page`` with the same key come before it."""
        cached = self._page_nth.get(page.path)
        if cached is not None and cached[0] is page:
            return cached[1]
        seen: dict[tuple[Any, ...], int] = {}
        nth = {}
        for w in page.links:
            key = _key(w)
            nth[id(w)] = seen.get(key, 0)
            seen[key] = nth[id(w)] + 1
        self._page_nth[page.path] = (page, nth)
        return nth
