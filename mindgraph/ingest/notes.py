"""The notes of one run: what the scan found, what reading and parsing each note gave.

A note whose size, modification time and inode change time equal those its record was made
with is not read: its hash, title and aliases come from the record (``Note.unread``), and its
text is read only if something needs it (a new term set to scan for mentions). The change time
is there because tools that keep modification times (``cp -p``, ``rsync -t``, a test's
``os.utime``) can write new bytes of the same size under an old mtime; nothing but a write
sets the ctime. A stat seen within RACY_NS of the run is never recorded, since the file could
change again within the same timestamp tick (git's "racy clean" rule); such a note is read and
hashed next time, and a hash equal to the record's is unchanged all the same. ``--force``
reads every note.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fsutil import sha256_bytes
from ..page.language import prose_language
from ..page.parse import MAX_NAME_CHARS, parse_page
from .frontmatter_warnings import field_warnings, heading_title_warning, unclosed_opener, \
    unclosed_warning, without_opener
from .scan import NOTE_SUFFIXES, NoteReadError, RawFile, decode_note, read_note, \
    too_many_headings
from .state import FileState

RACY_NS = 2_000_000_000


@dataclass
class Note:
    """A note of this run: its scan entry, and what reading and parsing it gave."""

    file: RawFile
    wiki_path: str
    sha256: str = ""
    text: str | None = None
    error: str = ""
    page: Any = None
    title: str = ""
    aliases: tuple[str, ...] = ()
    language: str = ""        # prose_language of its title and body (the title index's)
    empty: bool = False
    mentions: tuple[str, ...] = ()
    rescanned: bool = False
    signature: str = ""
    moved_from: str = ""      # raw path of the note it moved from (moves.py)
    move_how: str = ""
    unread: bool = False      # same stat as its record: hash and titles from it, text unread
    links_record: tuple[str, ...] = ()    # its page's links digests, if a worker made them
    warnings: tuple[str, ...] = ()        # what its frontmatter says that is not taken as written

    @property
    def has_text(self) -> bool:
        """True when the note has (or, unread, will have) text to index and compile."""
        return self.text is not None or self.unread


def wiki_path_for(raw_path: str) -> str:
    """The wiki page path of a raw note: same relative path, with ``.md``."""
    for suffix in NOTE_SUFFIXES:
        if raw_path.lower().endswith(suffix):
            return raw_path[: -len(suffix)] + ".md"
    return raw_path + ".md"


class NoteReader:
    """Loads the notes of one run, skipping the read of those whose stat is unchanged."""

    def __init__(self, raw_dir: Path, max_note_bytes: int, trust_stat: bool = True,
                 max_note_headings: int | None = None):
        self.raw_dir = raw_dir
        self.max_note_bytes = max_note_bytes
        self.max_note_headings = max_note_headings      # None: no cap
        self.trust_stat = trust_stat        # False with --force: read every note
        self.racy_from = time.time_ns() - RACY_NS

    def load(self, file: RawFile, record: FileState | None) -> Note:
        """The note of ``file``: unread when its record has its stat, else read and hashed
        (and parsed unless its record has the same hash)."""
        note = Note(file, wiki_path_for(file.path))
        if self.unchanged(file, record):
            assert record is not None
            note.sha256, note.title, note.aliases = record.sha256, record.title, record.aliases
            note.language = record.language
            note.unread = True
            return note
        self._read(note)
        if note.text is None:
            return note
        if record is not None and record.sha256 == note.sha256 and record.title \
                and record.language and record.status == "ingested":
            note.title, note.aliases = record.title, record.aliases
            note.language = record.language
        else:
            parse(note)
        return note

    def unchanged(self, file: RawFile, record: FileState | None) -> bool:
        """True when ``file`` has the stat its ingested record was made with: not read."""
        return self.trust_stat and record is not None and record.status == "ingested" \
            and bool(record.title and record.language and record.sha256 and record.stat) \
            and record.stat == _stat(file)

    def text(self, note: Note) -> str | None:
        """The text of ``note``, read now if it was left unread (None: empty or unreadable,
        and ``note.error`` says why)."""
        if note.unread:
            note.unread = False
            before = note.sha256
            self._read(note)
            if note.sha256 != before:       # changed within one stat: its titles may have
                parse(note)
        return note.text

    def stat(self, note: Note) -> dict[str, str]:
        """The record field that lets the next run skip reading this note ("" when the stat
        is too recent to tell a later write in the same tick)."""
        file = note.file
        racy = max(file.mtime_ns, file.ctime_ns) >= self.racy_from
        return {"stat": "" if racy or not file.mtime_ns else _stat(file)}

    def _read(self, note: Note) -> None:
        try:
            data = read_note(self.raw_dir, note.file, self.max_note_bytes)
            note.sha256 = sha256_bytes(data)
            if not data.strip():
                note.empty = True
                return
            text = decode_note(note.file.path, data)
            if self.max_note_headings is not None:
                refused = too_many_headings(note.file.path, text, self.max_note_headings)
                if refused:
                    raise NoteReadError(refused)
            note.text = text
        except NoteReadError as exc:
            note.error = str(exc)


def _stat(file: RawFile) -> str:
    return f"{file.size}/{file.mtime_ns}/{file.ctime_ns}/{file.inode}"


def parse(note: Note) -> None:
    """Parse the note's text once (title, aliases, frontmatter errors and warnings: a block
    never closed is parsed as body text without its opening '---' line)."""
    if note.page is None and note.text is not None:
        note.page = parse_page(note.text, note.wiki_path, note.sha256)
        if unclosed_opener(note.text, note.page.has_frontmatter):
            note.page = parse_page(without_opener(note.text), note.wiki_path, note.sha256)
            note.warnings = (unclosed_warning(note.file.path),)
        else:
            note.warnings = tuple(field_warnings(note.file.path, note.text,
                                                 note.page.frontmatter, note.page.body_line))
            if len(note.page.title) == MAX_NAME_CHARS and "title" not in note.page.frontmatter:
                note.warnings += tuple(heading_title_warning(note.file.path, note.text))
        note.title, note.aliases = note.page.title, tuple(note.page.aliases)
        note.language = prose_language(note.page.title, note.page.body)
        if note.page.frontmatter_error:
            note.error = note.page.frontmatter_error.replace(note.wiki_path, note.file.path, 1)


def resolve_collisions(notes: list[Note]) -> None:
    """Two raw notes that map to one wiki page (a.md and a.txt): the .md one wins."""
    claims: dict[str, list[Note]] = {}
    for note in notes:
        if note.has_text and not note.empty:
            claims.setdefault(note.wiki_path.casefold(), []).append(note)
    rank = {s: i for i, s in enumerate(NOTE_SUFFIXES)}
    for claimants in claims.values():
        if len(claimants) == 1:
            continue            # nearly every page: no sorting of 100,000 notes
        owner, *others = sorted(claimants, key=lambda n: (
            rank.get(os.path.splitext(n.file.path)[1].lower(), 9), n.file.path))
        for note in others:
            note.error = (f"{note.file.path}: compiles to the same wiki page as "
                          f"{owner.file.path} (wiki/{owner.wiki_path}); rename one "
                          f"of the two notes.")
            note.wiki_path = ""
