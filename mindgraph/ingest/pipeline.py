"""One ingest run: scan raw/, decide per note, compile what changed, write wiki/ and the state.

Order of a run (raw/ is only ever read):
  1. scan raw/ within limits.max_files and limits.max_total_bytes; read and hash the notes
     whose size, mtime or ctime differ from their record (notes.py: unchanged notes are
     neither read nor parsed again); pair notes gone from a path with notes new at one
     (moves.py): such a note moves, it is not deleted and new;
  2. build the title index from all notes (titles of unchanged notes come from the state);
  3. decide: unchanged → skipped; new, changed, failed before, or forced → pending;
     gone (or now empty) → its page is removed, or kept and marked if a person edited it;
  4. save the state with the pending records, then compile, write each page and record
     ingested or failed, saving the state after each file (offline: at most every 0.5 s;
     applying.py). A run that changed nothing does not rewrite the state.

A run given a ``session`` (the watcher's: session.py) starts from the state it holds and leaves
its state and title index there; told the ``changed`` raw paths as well, it reads and compiles
only those when it can (targeted.py) and runs the steps above when it cannot.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable

from ..config import Settings
from ..documents.overlay import CompileOverlay
from ..errors import RemovalsHeld
from ..page.dates import dates_key
from ..page.history import History, git_history
from .compile_offline import OfflineCompiler
from ..scopes import load_scopes
from ..scopes.linking import LinkableIndexes
from ..text.cjk import preload
from .applying import ApplySteps
from .bookkeeping import Bookkeeping, Progress
from .guard import check_removals, pages_with_trust
from .index import IndexEntry, TitleIndex
from .lock import LOCK_FILENAME, ingest_lock
from .only import only_selector
from .moves import old_titles, pair_moves, signature
from .notes import Note, NoteReader, parse, resolve_collisions, wiki_path_for
from .removal import removal_verdict
from .render import NoteInput
from .report import FileOutcome, IngestReport
from .scan import RawFile, scan_raw, within_limits
from .session import FAILED, NO_RUN_YET, PARTIAL, IngestSession, NoteFacts
from .state import STATE_FILENAME, IngestState, compile_key
from .targeted import TargetedSteps, scan_size
from .term_matcher import matcher, scan_mentions
from .trust_stash import TrustStash
from .wikifs import WikiWriter, clean_temp_files
from .warmup import Segmenters, import_sketches
from .workers import in_workers, processes_for

__all__ = ["LOCK_FILENAME", "Progress", "make_compiler", "run_ingest", "wiki_path_for"]

Phases = Callable[[str], Progress]      # a phase's label → its progress (cli/progress.py)


def make_compiler(settings: Settings, provider: Any = None) -> Any:
    """The offline compiler, or the LLM compiler around ``provider`` (built from settings
    when None and compile.provider is not "offline")."""
    if provider is None and settings.compile.provider == "offline":
        return OfflineCompiler(settings.compile.processes)
    from .compile_llm import LLMCompiler

    if provider is None:
        from ..providers.llm.factory import make_llm_provider

        provider = make_llm_provider(settings)
        if provider is None:
            return OfflineCompiler(settings.compile.processes)
    return LLMCompiler(provider, settings)


def run_ingest(settings: Settings, *, provider: Any = None, dry_run: bool = False,
               force: bool = False, only: Iterable[str | Path] = (),
               progress: Progress | None = None, phases: Phases | None = None,
               session: IngestSession | None = None,
               changed: Iterable[str] | None = None,
               allow_removals: bool = False,
               notice: Callable[[str], None] | None = None) -> IngestReport:
    """Compile raw/ into wiki/ incrementally; see the module docstring for the steps.
    ``progress`` hears of each note compiled, ``phases`` of the planning steps before;
    ``session`` keeps the state between runs of one process, and ``changed`` (raw-relative
    paths, with a session) asks for a targeted run. A run that would remove most pages is
    held (RemovalsHeld, guard.py) unless ``allow_removals``. ``notice`` hears, once, when
    the run has waited a second for the apply lock (an approved plan being written)."""
    started = time.perf_counter()
    raw_dir, wiki_dir = settings.raw_dir, settings.wiki_dir
    missing = settings.missing_raw()
    if missing is not None:
        raise missing
    compiler = make_compiler(settings, provider)
    only = tuple(only)
    with ingest_lock(settings.state_dir, dry_run):
        if not dry_run:
            clean_temp_files(settings.state_dir)
        if session is None or dry_run:
            if not dry_run:
                clean_temp_files(wiki_dir)
            return _Run(settings, compiler, dry_run, force, progress, phases,
                        allow_removals=allow_removals, notice=notice).execute(only, started)
        try:
            state = session.state_for(settings.state_dir / STATE_FILENAME)
            why = "no list of changed notes (a start, or a folder changed)"
            if changed is not None and not force and not only:
                run = _Run(settings, compiler, dry_run, force, progress, phases, state,
                           allow_removals, notice)
                done = run.execute_targeted(changed, session, started)
                if isinstance(done, IngestReport):
                    session.saved()
                    return done
                why = done
            clean_temp_files(wiki_dir)
            run = _Run(settings, compiler, dry_run, force, progress, phases, state,
                       allow_removals, notice)
            report = run.execute(only, started)
            run.remember(session, bool(only))
            session.saved()
        except BaseException:
            session.state = None        # what it holds may be ahead of the files: load them
            session.forget(FAILED)
            raise
        return replace(report, plan=f"full: {why}")


class _Run(TargetedSteps, ApplySteps, Bookkeeping):
    """The mutable context of one run (private: run_ingest is the interface)."""

    def __init__(self, settings: Settings, compiler: Any, dry_run: bool, force: bool,
                 progress: Progress | None, phases: Phases | None = None,
                 state: IngestState | None = None, allow_removals: bool = False,
                 notice: Callable[[str], None] | None = None):
        self.settings = settings
        self.notice = notice
        self.allow_removals = allow_removals
        self.held = ""
        self.phases = phases
        self.compiler = compiler
        self.dry_run = dry_run
        self.force = force
        self.progress = progress
        self.state = state if state is not None \
            else IngestState.load(settings.state_dir / STATE_FILENAME)
        self.journal = False        # commit to the state's journal (a targeted run)
        self.files: list[RawFile] = []
        self.notes: list[Note] = []
        self.index: TitleIndex | None = None
        self.counted: set[str] = set()      # notes whose mentions the generic terms count
        self.wiki = WikiWriter(settings.wiki_dir, settings.raw_dir,
                               settings.limits.max_page_bytes)
        self.overlay = CompileOverlay.load(settings.state_dir)   # the documents API's
        self.stash = TrustStash(settings.state_dir)     # records of removed pages
        self.outcomes: list[FileOutcome] = []
        self.skipped = 0        # every file not compiled, unchanged notes included
        self.unchanged = 0      # notes unchanged since the run that compiled them
        self.last_commit = 0.0
        self.save_seconds = 0.0     # how long the last save took
        self.history: History = {}
        self.moving: dict[str, Note] = {}      # old raw path → the note that moved from it
        self.linkable = LinkableIndexes(load_scopes(settings))
        self.reader = NoteReader(settings.raw_dir, settings.compile.max_note_bytes,
                                 trust_stat=not force,
                                 max_note_headings=settings.compile.max_note_headings)
        self.segmenters: Segmenters | None = None   # a first run's, while reading (warmup.py)

    # -- planning ---------------------------------------------------------------------------

    def execute(self, only: Iterable[str | Path], started: float) -> IngestReport:
        limits = self.settings.limits
        files = within_limits(scan_raw(self.settings.raw_dir,
                                       exclude=(self.settings.wiki_dir, self.settings.state_dir)),
                              limits.max_files, limits.max_total_bytes,
                              self.settings.compile.max_note_bytes)
        selected = only_selector(self.settings.raw_dir, only, [f.path for f in files],
                             list(self.state.files))
        self.history = git_history(self.settings.raw_dir)   # one `git log`; {} outside git
        notes = self._read([f for f in files if f.is_note])
        self.files, self.notes = files, notes
        resolve_collisions(notes)
        # notes a scan limit left out are neither read nor gone: their pages stay
        live = {n.file.path for n in notes if not n.empty} | {f.path for f in files if f.held}
        follow = self._find_moves(notes, live, selected)
        gone = [p for p in sorted(self.state.files)
                if p not in live and p not in self.moving and selected(p)]
        if gone and not self.allow_removals:
            try:
                check_removals(sum(1 for p in gone if self.state.files[p].wiki),
                               sum(1 for r in self.state.files.values() if r.wiki),
                               len(live), self.settings.raw_dir, self.settings.source,
                               lambda: pages_with_trust(self.settings.wiki_dir, [
                                   self.state.files[p].wiki for p in gone
                                   if self.state.files[p].wiki]))
            except RemovalsHeld as exc:
                if not self.dry_run:
                    raise
                self.held = str(exc)        # a dry run shows the plan, and says so
        follow()            # the moves' overlay records (saved: not before the guard)
        index = self.index = self._index(notes)
        for f in files:
            if not f.is_note and selected(f.path):
                self.outcomes.append(FileOutcome(f.path, "skipped", f.reason))
                self.skipped += 1
        todo: list[Note] = []
        for note in self._ticking("Checking", notes):
            if not selected(note.file.path):
                continue
            if note.empty:
                self.skipped += 1
                self.outcomes.append(FileOutcome(note.file.path, "skipped",
                                                 "empty note; nothing to compile."))
            elif not note.error and self._unchanged(note, index):
                self.skipped += 1
                self.unchanged += 1
            else:
                todo.append(note)
        total = len(todo) + len(gone)
        self._tick(0, total, "")
        if self.dry_run:
            self._plan_only(todo, gone)
        else:
            try:
                self._apply(todo, gone, index, total)
            finally:
                self._commit(final=True)
        return self._report(started)

    def remember(self, session: IngestSession, partial: bool) -> None:
        """Leave what this (full) run saw in ``session``, for a targeted run next (not after
        a run of some notes only: the others were not checked)."""
        session.forget(PARTIAL if partial else NO_RUN_YET)
        if partial or self.index is None:
            return
        session.index = self.index
        session.held = any(f.held for f in self.files)
        session.notes = {n.file.path: NoteFacts(
            scan_size(n.file, self.settings), n.sha256 if n.file.path in self.counted else "",
            n.mentions) for n in self.notes}
        session.total_bytes = sum(f.size for f in session.notes.values())

    def _read(self, files: list[RawFile]) -> list[Note]:
        """The notes of ``files``, in order: those to read and parse (all, on a first run)
        in worker processes when there are many, as compiling them is (workers.py)."""
        pairs = [(f, self.state.get(f.path)) for f in files]
        unread = [self.reader.unchanged(f, r) for f, r in pairs]
        fresh = [pair for pair, skip in zip(pairs, unread) if not skip]
        processes = processes_for(int(getattr(self.compiler, "processes", 1)), len(fresh))
        if not processes:
            return [self.reader.load(f, r) for f, r in self._ticking("Reading", pairs)]
        # the segmenters the compile needs load before the workers fork (jieba, for a Chinese
        # note among them) or while the notes come in (warmup.py)
        self.segmenters = Segmenters(self._may_compile)
        self.segmenters.before_reading(self.settings.raw_dir, [f for f, _ in fresh],
                                       self.settings.compile.max_note_bytes)
        read = iter(in_workers(_loaded(self.reader), fresh, processes, chunk=32))
        loaded = (self.reader.load(*pair) if skip else next(read)
                  for pair, skip in zip(pairs, unread))
        return list(self._ticking("Reading", self.segmenters.watch(loaded), len(pairs)))

    def _find_moves(self, notes: list[Note], live: set[str],
                    selected: Callable[[str], bool]) -> Callable[[], None]:
        """Pair notes gone from their path with notes new at one (moves.py); returns what
        makes the documents API's records follow the moves (to call once the run goes on)."""
        gone = {p: (r.sha256, r.signature) for p, r in self.state.files.items()
                if p not in live and r.wiki and selected(p)}
        if not gone:
            return lambda: None
        fresh = {}
        for note in notes:
            record = self.state.get(note.file.path)
            if not note.has_text or note.error or not note.wiki_path \
                    or not selected(note.file.path):
                continue
            if (record is None or record.moved_from) and self.reader.text(note) is not None:
                note.signature = signature(note.text)
                fresh[note.file.path] = note
        for move in pair_moves(gone, {p: (n.sha256, n.signature) for p, n in fresh.items()}):
            note = fresh[move.new]
            note.moved_from, note.move_how = move.old, move.how
            self.moving[move.old] = note

        def follow() -> None:
            for old, note in self.moving.items():
                self.overlay.follow(self.state.files[old].wiki, note.wiki_path, not self.dry_run)
        return follow

    def _index(self, notes: list[Note]) -> TitleIndex:
        """The title index of all notes, with generic terms found from every note's mentions
        (cached per note in the state while its content and the term set stay the same). A
        moved page keeps its old titles as aliases here, so mentions of an old name link to
        it (unless another page has that name now)."""
        usable = [n for n in notes if n.has_text and not n.error]
        before = old_titles(self.state.moves)
        for old, note in self.moving.items():
            before.setdefault(note.wiki_path, []).append(self.state.files[old].title)
        taken = {name.casefold() for n in usable for name in (n.title, *n.aliases)}
        index = TitleIndex(
            IndexEntry(n.wiki_path, n.title,
                       n.aliases + tuple(dict.fromkeys(t for t in before.get(n.wiki_path, ())
                                                       if t and t.casefold() not in taken)),
                       n.language)
            for n in usable)
        memo = {} if self.force else self.state.index     # --force trusts no memo
        index.recall(memo)                  # the terms digest, if these entries had it
        scanned, rescan, counted = [], [], []
        for note in notes:
            if not note.has_text or note.error:
                continue
            record = self.state.get(note.file.path)
            if record is not None and not self.force and record.sha256 == note.sha256 \
                    and record.terms == index.terms_digest:
                note.mentions = record.mentions
                scanned.append(note.mentions)
            elif self.reader.text(note) is not None:     # None: vanished or unreadable
                rescan.append(note)
            else:
                continue
            counted.append((note.file.path, note.sha256))
            self.counted.add(note.file.path)
        if rescan:
            # pattern and automaton built once here, not in every worker, and while MeCab
            # may still load (begun while reading, in a thread: warmup.py)
            matcher(index)
        if self.segmenters is not None:
            self.segmenters.join()
        processes = processes_for(int(getattr(self.compiler, "processes", 1)), len(rescan))

        def meanwhile() -> None:
            """While the workers scan: NumPy, and the segmenters the compile will need that
            the reading did not load (a re-run's), not before the compile's workers fork."""
            if self.segmenters is not None:
                import_sketches()
            preload(n.text or "" for n in rescan if self._may_compile(n))

        found = in_workers(_mentions(index), rescan, processes, chunk=32,
                           meanwhile=meanwhile) if processes else map(_mentions(index), rescan)
        for mentions, note in zip(self._ticking("Linking", found, len(rescan)), rescan):
            note.mentions, note.rescanned = mentions, True
            scanned.append(mentions)
        index, memo = index.with_generic_recalled(memo, counted, scanned)
        if not self.dry_run:
            self.state.index = memo
        return index

    def _may_compile(self, note: Note) -> bool:
        """False for a note whose record says it was ingested with these very bytes (it
        compiles only if a page it links to changed)."""
        record = self.state.get(note.file.path)
        return self.force or record is None or record.status != "ingested" \
            or record.sha256 != note.sha256

    def _parse(self, note: Note) -> None:
        if self.reader.text(note) is not None:
            parse(note)

    def _unchanged(self, note: Note, index: TitleIndex) -> bool:
        record = self.state.get(note.file.path)
        if self.force or record is None or record.status != "ingested":
            return False
        if record.key != self._key(note):
            return False
        if record.wiki != note.wiki_path or not self.wiki.exists(note.wiki_path):
            return False
        changes: dict[str, Any] = self.reader.stat(note) if not note.unread else {}
        if note.language != record.language:    # a record from before languages were kept
            changes["language"] = note.language
        if self.compiler.links_in_key:
            links_index = self._links_index(note, index)
            if links_index.digest != record.links_index:
                basis = links_index.links_basis(note.mentions, note.wiki_path)
                if basis != record.links_basis \
                        and record.links != links_index.links_digest(note.mentions,
                                                                     note.wiki_path):
                    return False     # a page it mentions appeared, moved or went: relink it
                changes.update(links_basis=basis, links_index=links_index.digest)
        if note.rescanned:
            changes.update(mentions=note.mentions, terms=index.terms_digest)
        if changes and not self.dry_run:
            self.state.refresh(note.file.path, **changes)
        return True

    def _plan_only(self, todo: list[Note], gone: list[str]) -> None:
        for note in todo:
            self._parse(note)
            if note.error:
                self.outcomes.append(FileOutcome(note.file.path, "failed", note.error))
            elif note.moved_from:
                self.outcomes.append(FileOutcome(note.file.path, "pending",
                                                 f"would move from {note.moved_from} "
                                                 f"({note.move_how})", note.wiki_path))
            else:
                self.outcomes.append(FileOutcome(note.file.path, "pending", "would compile",
                                                 note.wiki_path))
        for path in gone:
            record = self.state.files[path]
            status, reason = removal_verdict(self.wiki, self.state, path, record,
                                             dry_run=True)
            self.outcomes.append(FileOutcome(path, status, reason, record.wiki))

    def _links_index(self, note: Note, index: TitleIndex) -> TitleIndex:
        """The title index ``note`` may link into: with scopes configured, only the pages
        every reader of the note sees (scopes/linking.py)."""
        if self.linkable.needs_frontmatter(note.file.path):
            self._parse(note)
        frontmatter = note.page.frontmatter if note.page is not None else None
        return self.linkable.for_note(index, note.file.path, frontmatter, TitleIndex.within)

    def _input(self, note: Note) -> NoteInput:
        return NoteInput(note.file.path, note.wiki_path, note.text or "", note.sha256,
                         note.file.mtime, note.page, self.history.get(note.file.path))

    def _key(self, note: Note) -> str:
        return compile_key(note.sha256, self.compiler.key_identity,
                           dates_key(self.history.get(note.file.path)),
                           self.overlay.digest(note.wiki_path))


def _loaded(reader: NoteReader) -> Callable[[tuple[RawFile, Any]], Note]:
    """A note loaded from (its scan entry, its record)."""
    return lambda pair: reader.load(*pair)


def _mentions(index: TitleIndex) -> Callable[[Note], tuple[str, ...]]:
    """The index terms a (read) note's text mentions."""
    return lambda note: scan_mentions(index, note.text or "")
