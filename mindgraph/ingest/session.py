"""What a long-lived process keeps between its ingest runs (the watcher's), so that a run told
which notes changed reads and compiles only those (targeted.py).

After each run: the ingest state as the run left it (at 100,000 notes its file is 170 MB and
takes seconds to load), the run's title index with its generic terms (its term regex takes
seconds to build) and, per note, what the scan and the generic-term count saw. The state is
trusted only while its file and journal are as this session last saw them: another process's
ingest (the CLI, a REST call) changes them, and the session then loads them again and the next
run is a full one.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..errors import IngestError
from . import journal
from .index import TitleIndex, generic_row
from .lock import ingest_lock
from .state import IngestState
from .term_matcher import matcher

FileKey = tuple[tuple[int, int, int] | None, tuple[int, int, int] | None]

# why a run cannot be targeted, from what the session holds (the watcher's "full: <why>";
# README.md, Live sync, lists them)
NO_RUN_YET = "no full run in this process yet"
OTHER_INGEST = "another process ingested since the last run"
HELD = "a scan limit held notes back in the last run"
FAILED = "the last run stopped with an error"
PARTIAL = "the last run compiled only some notes"


@dataclass
class NoteFacts:
    """One note as the last run saw it: its size (for the scan limits), its content hash if
    its mentions were counted for the generic terms ("" if not), and those mentions."""

    size: int
    counted: str = ""
    mentions: tuple[str, ...] = ()


class IngestSession:
    """The state, title index and note facts of the last run in this process."""

    def __init__(self) -> None:
        self.state: IngestState | None = None
        self._key: FileKey | None = None
        self.index: TitleIndex | None = None
        self.notes: dict[str, NoteFacts] = {}       # raw path → facts, in path order
        self.held = True            # a scan limit left notes out (or no full run yet)
        self.stale = NO_RUN_YET     # why what it holds cannot start a targeted run
        self.total_bytes = 0        # of the notes, as within_limits counts them
        self._df: Counter[str] | None = None
        self._rows: tuple[list[str], dict[str, int]] | None = None  # generic_of's, by path

    def state_for(self, path: Path) -> IngestState:
        """The state at ``path``: the one held, while its files are as this session left
        them; else loaded (and what the last run saw forgotten: a full run comes next)."""
        key = _key_of(path)
        if self.state is None or self.state.path != path or key != self._key:
            self.forget(NO_RUN_YET if self.state is None or self.state.path != path
                        else OTHER_INGEST)
            self.state = IngestState.load(path)
            self.state.journaled = True
            self._key = key
        return self.state

    def forget(self, why: str = NO_RUN_YET) -> None:
        """Drop what the last run saw (the next run is a full one, ``why`` says why)."""
        self.stale = why
        self.index = None
        self.notes = {}
        self.held = True
        self._df = None
        self._rows = None

    def saved(self) -> None:
        """The held state was just written by this process: its files are trusted as they
        are now."""
        if self.state is not None:
            self._key = _key_of(self.state.path)

    def compact(self, *, start: bool = False) -> None:
        """Fold the journal into the state file (a whole save: for idle time; skipped while
        another ingest holds the lock, or when another process wrote the state since);
        ``start``: save a state file that has no generation yet, so that the first targeted
        run can append to it instead of saving it whole."""
        state = self.state
        if state is None or not (journal.path_of(state.path).exists()
                                 or start and not state.generation and state.path.exists()):
            return
        try:
            with ingest_lock(state.path.parent, False):
                if _key_of(state.path) == self._key:
                    state.save()
                    self.saved()
        except IngestError:
            pass            # another ingest runs: it folds the journal itself

    @property
    def ready(self) -> bool:
        """True when a targeted run can start from what the last run saw."""
        return self.state is not None and self.index is not None and not self.held

    @property
    def not_ready(self) -> str:
        """Why a targeted run cannot start from what the last run saw (the watcher's
        "full: <why>")."""
        return HELD if self.index is not None and self.held else self.stale

    def df(self) -> Counter[str]:
        """How many counted notes mention each term (built on first use)."""
        if self._df is None:
            df: Counter[str] = Counter()
            for facts in self.notes.values():
                if facts.counted:
                    df.update(set(facts.mentions))
            self._df = df
        return self._df

    def counted(self) -> int:
        """How many notes the generic terms are counted over."""
        return len(self._generic_rows()[1])

    def generic_of(self, index: TitleIndex, shas: dict[str, str]) -> str:
        """The index memo's ``generic_of`` once the counted notes in ``shas`` (raw path →
        new content hash) have those hashes (their rows are kept: at 100,000 notes making
        every row again took 0.24 s of a 0.57 s run)."""
        rows, at = self._generic_rows()
        for path, sha in shas.items():
            rows[at[path]] = generic_row(path, sha)
        return index.generic_of_rows("\n".join(rows))

    def _generic_rows(self) -> tuple[list[str], dict[str, int]]:
        if self._rows is None:
            counted = [(p, f.counted) for p, f in self.notes.items() if f.counted]
            self._rows = ([generic_row(p, h) for p, h in counted],
                          {p: i for i, (p, _) in enumerate(counted)})
        return self._rows

    def warm(self) -> None:
        """Build what a targeted run needs that takes seconds at 100,000 notes (the term
        regex, the link resolver, the index digest, the mention counts, a state file the
        journal can follow), ahead of the first change."""
        self.compact(start=True)
        if self.index is not None:
            matcher(self.index)     # the term regex and its automaton
            self.index.resolver
            self.index.digest
            self.index.terms_digest
            self.df()
            self._generic_rows()


def _key_of(path: Path) -> FileKey:
    return _stat(path), _stat(journal.path_of(path))


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size
