"""A targeted run: the watcher knows which raw notes changed, so only those are read and compiled.

A full run scans raw/, reads what changed and checks every note against the title index; at
100,000 notes that is a minute for one edited note. A run told its changed paths, in a process
that keeps the last run's state and title index (session.py), reads those notes only,
compiles them with the index it holds and appends their records to the state's journal (the
same pending → ingested steps, so as crash-safe as a full run).

That is exact only while no other note's page can change, that is while the title index is
the same: so a targeted run is refused (and the caller runs the full path, which relinks what
a title concerns) when a path is new, gone or moved (no record of an ingested note at it, or
no file now), when a note's title, aliases or language changed, when a note cannot be read or
compiled or became empty, when its new mentions change which terms are generic, when a scan limit held
notes back or would now, when scopes are configured (a note's scope decides who may link to
it), and when the process has no full run to start from. ``plan`` says which, in words.
"""

from __future__ import annotations

import os
import stat as stat_mod
from pathlib import Path
from typing import Any, Iterable

from ..page.history import git_history
from .index import TitleIndex, generic_limit
from .notes import Note, wiki_path_for
from .report import IngestReport
from .scan import NOTE_SUFFIXES, RawFile
from .session import IngestSession, NoteFacts
from .term_matcher import scan_mentions


class TargetedSteps:
    """Planning and running a targeted run; mixed into pipeline._Run, whose state, reader,
    compiler and apply steps it uses."""

    # provided by pipeline._Run
    settings: Any
    state: Any
    reader: Any
    linkable: Any
    history: Any
    outcomes: list
    skipped: int
    unchanged: int
    journal: bool

    def execute_targeted(self, paths: Iterable[str], session: IngestSession,
                         started: float) -> IngestReport | str:
        """Compile just the notes at ``paths`` (raw-relative); the reason in words when a
        full run is needed instead (nothing is changed then)."""
        planned = self._plan_targeted(sorted(set(paths)), session)
        if isinstance(planned, str):
            return planned
        notes, index, total = planned
        self.journal = True
        todo: list[Note] = []
        for note in notes:
            # a note of the stat it was compiled from (unread) is unchanged too: it was
            # "skipped 1" in the summary of a run that skipped nothing for a reason
            if note.unread or self._unchanged(note, index):
                self.skipped += 1
                self.unchanged += 1
            else:
                todo.append(note)
        try:
            self._apply(todo, [], index, len(todo))
        finally:
            self._commit(final=True)
        df = session.df()
        for note in notes:
            facts = session.notes[note.file.path]
            df.subtract(set(facts.mentions))
            df.update(set(note.mentions))
            session.notes[note.file.path] = NoteFacts(scan_size(note.file, self.settings),
                                                      note.sha256, note.mentions)
        session.total_bytes = total
        return self._report(started)

    def _plan_targeted(self, paths: list[str], session: IngestSession
                       ) -> tuple[list[Note], TitleIndex, int] | str:
        """The changed notes read, their mentions found, and the memo updated; or why not."""
        if self.linkable.scopes.enabled:
            return "scopes are configured (a note's scope decides which pages link to it)"
        if not session.ready or session.index is None:
            return session.not_ready
        index = session.index
        notes: list[Note] = []
        total = session.total_bytes
        for path in paths:
            record, facts = self.state.get(path), session.notes.get(path)
            if record is None or facts is None or not facts.counted:
                return f"{path} is new, or was not compiled before"
            if record.status != "ingested" or record.moved_from \
                    or record.wiki != wiki_path_for(path):
                return f"{path} was not ingested as it is"
            file = _raw_file(self.settings.raw_dir, path)
            if file is None:
                return f"{path} is gone (or not a regular note)"
            total += scan_size(file, self.settings) - facts.size
            note = self.reader.load(file, record)
            if note.unread:             # the stat it was compiled from: unchanged
                note.mentions = record.mentions
                notes.append(note)
                continue
            if note.error or note.empty or note.text is None:
                return f"{path} cannot be compiled now, or is empty"
            if (note.title, tuple(note.aliases)) != (record.title, tuple(record.aliases)):
                return f"{path}: its title or aliases changed"
            if note.language != record.language:    # which pages may link to it changed
                return f"{path}: its language changed"
            if record.sha256 == note.sha256 and record.terms == index.terms_digest:
                note.mentions = record.mentions
            else:
                note.mentions, note.rescanned = scan_mentions(index, note.text), True
            notes.append(note)
        if total > self.settings.limits.max_total_bytes:
            return "the notes would pass limits.max_total_bytes"
        counts = _counts_after(session, notes)
        limit = generic_limit(session.counted())
        df = session.df()
        if any((df[t] > limit) != (n > limit) for t, n in counts.items()):
            return "a term became generic, or stopped being generic"
        shas = {n.file.path: n.sha256 for n in notes}
        self.history = git_history(self.settings.raw_dir,
                                   paths=[n.file.path for n in notes if not n.unread])
        self.state.index = {**self.state.index,
                            "generic_of": session.generic_of(index, shas)}
        return notes, index, total


def _counts_after(session: IngestSession, notes: list[Note]) -> dict[str, int]:
    """The mention counts of the terms the notes' old or new mentions hold, after the run."""
    df = session.df()
    counts: dict[str, int] = {}
    for note in notes:
        old, new = set(session.notes[note.file.path].mentions), set(note.mentions)
        for term in old ^ new:
            counts[term] = counts.get(term, df[term]) + (1 if term in new else -1)
    return counts


def scan_size(file: RawFile, settings: Any) -> int:
    """A note's size as the scan limits count it (a note over compile.max_note_bytes is
    refused unread: 0)."""
    return file.size if file.size <= settings.compile.max_note_bytes else 0


def _raw_file(raw_dir: Path, path: str) -> RawFile | None:
    """The scan entry of one note, as scan_raw would make it; None when it is not a regular
    note file now (gone, a symlink, a folder, not a note's suffix, hidden)."""
    if any(part.startswith(".") for part in path.split("/")) \
            or not path.lower().endswith(NOTE_SUFFIXES):
        return None
    try:
        info = os.lstat(Path(raw_dir) / path)
    except OSError:
        return None
    if not stat_mod.S_ISREG(info.st_mode):
        return None
    return RawFile(path, True, "", info.st_size, info.st_mtime, mtime_ns=info.st_mtime_ns,
                   ctime_ns=info.st_ctime_ns, inode=info.st_ino)
