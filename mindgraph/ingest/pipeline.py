"""One ingest run: scan raw/, decide per note, compile what changed, write wiki/ and the state.

Order of a run (raw/ is only ever read):
  1. scan raw/ within limits.max_files and limits.max_total_bytes and read every note
     (hashing is cheap; unchanged notes are not parsed again); pair notes gone from a path
     with notes new at one (moves.py): such a note moves, it is not deleted and new;
  2. build the title index from all notes (titles of unchanged notes come from the state);
  3. decide: unchanged → skipped; new, changed, failed before, or forced → pending;
     gone (or now empty) → its page is removed, or kept and marked if a person edited it;
  4. save the state with the pending records, then compile, write each page and record
     ingested or failed, saving the state after each file (offline: at most every 0.2 s).
"""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..config import Settings
from ..documents.overlay import CompileOverlay
from ..errors import ConfigError, IngestError
from ..fsutil import sha256_bytes
from ..page.dates import dates_key
from ..page.history import History, git_history
from ..page.parse import parse_page
from ..trust.carry import carry_record, without_record
from .compile_offline import OfflineCompiler
from ..scopes import load_scopes
from ..scopes.linking import LinkableIndexes
from .index import IndexEntry, TitleIndex
from .only import only_selector
from .moves import carry_created, old_titles, pair_moves, prune_moves, record_move, signature
from .render import NoteInput
from .report import FileOutcome, IngestReport, Outcome
from .scan import (NOTE_SUFFIXES, NoteReadError, RawFile, decode_note, read_note, scan_raw,
                   within_limits)
from .state import STATE_FILENAME, IngestState, compile_key
from .wikifs import WikiWriter, clean_temp_files

Progress = Callable[[int, int, str], None]
LOCK_FILENAME = "ingest.lock"
SAVE_SHARE = 0.1    # of a run's time, at most this share goes to saving the state


@dataclass
class _Note:
    """A note of this run: its scan entry, and what reading and parsing it gave."""

    file: RawFile
    wiki_path: str
    sha256: str = ""
    text: str | None = None
    error: str = ""
    page: Any = None
    title: str = ""
    aliases: tuple[str, ...] = ()
    empty: bool = False
    mentions: tuple[str, ...] = ()
    rescanned: bool = False
    signature: str = ""
    moved_from: str = ""      # raw path of the note it moved from (moves.py)
    move_how: str = ""


def wiki_path_for(raw_path: str) -> str:
    """The wiki page path of a raw note: same relative path, with ``.md``."""
    for suffix in NOTE_SUFFIXES:
        if raw_path.lower().endswith(suffix):
            return raw_path[: -len(suffix)] + ".md"
    return raw_path + ".md"


def make_compiler(settings: Settings, provider: Any = None) -> Any:
    """The offline compiler, or the LLM compiler around ``provider`` (built from settings
    when None and compile.provider is not "offline")."""
    if provider is None and settings.compile.provider == "offline":
        return OfflineCompiler()
    from .compile_llm import LLMCompiler

    if provider is None:
        from ..providers.llm.factory import make_llm_provider

        provider = make_llm_provider(settings)
        if provider is None:
            return OfflineCompiler()
    return LLMCompiler(provider, settings)


def run_ingest(settings: Settings, *, provider: Any = None, dry_run: bool = False,
               force: bool = False, only: Iterable[str | Path] = (),
               progress: Progress | None = None) -> IngestReport:
    """Compile raw/ into wiki/ incrementally; see the module docstring for the steps."""
    started = time.perf_counter()
    raw_dir, wiki_dir = settings.raw_dir, settings.wiki_dir
    if not raw_dir.is_dir():
        raise settings.not_a_workspace(raw_dir) or ConfigError(f"raw folder {raw_dir} does not exist. Create it (`mindgraph init`) "
                          f"or set paths.raw in {settings.source}.")
    if raw_dir.is_relative_to(wiki_dir):
        raise ConfigError(f"{settings.source}: paths.raw ({raw_dir}) is inside paths.wiki "
                          f"({wiki_dir}); wiki pages could overwrite raw notes. Move one.")
    compiler = make_compiler(settings, provider)
    with _lock(settings.state_dir, dry_run):
        if not dry_run:
            clean_temp_files(wiki_dir)
            clean_temp_files(settings.state_dir)
        run = _Run(settings, compiler, dry_run, force, progress)
        return run.execute(only, started)


class _Run:
    """The mutable context of one run (private: run_ingest is the interface)."""

    def __init__(self, settings: Settings, compiler: Any, dry_run: bool, force: bool,
                 progress: Progress | None):
        self.settings = settings
        self.compiler = compiler
        self.dry_run = dry_run
        self.force = force
        self.progress = progress
        self.state = IngestState.load(settings.state_dir / STATE_FILENAME)
        self.wiki = WikiWriter(settings.wiki_dir, settings.raw_dir,
                               settings.limits.max_page_bytes)
        self.overlay = CompileOverlay.load(settings.state_dir)   # the documents API's
        self.outcomes: list[FileOutcome] = []
        self.skipped = 0
        self.last_commit = 0.0
        self.save_seconds = 0.0     # how long the last save took
        self.history: History = {}
        self.moving: dict[str, _Note] = {}      # old raw path → the note that moved from it
        self.linkable = LinkableIndexes(load_scopes(settings))

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
        notes = [self._load(f) for f in files if f.is_note]
        self._resolve_collisions(notes)
        # notes a scan limit left out are neither read nor gone: their pages stay
        live = {n.file.path for n in notes if not n.empty} | {f.path for f in files if f.held}
        self._find_moves(notes, live, selected)
        index = self._index(notes)
        for f in files:
            if not f.is_note and selected(f.path):
                self.outcomes.append(FileOutcome(f.path, "skipped", f.reason))
                self.skipped += 1
        todo: list[_Note] = []
        for note in notes:
            if not selected(note.file.path):
                continue
            if note.empty:
                self.skipped += 1
                self.outcomes.append(FileOutcome(note.file.path, "skipped",
                                                 "empty note; nothing to compile."))
            elif not note.error and self._unchanged(note, index):
                self.skipped += 1
            else:
                todo.append(note)
        gone = [p for p in sorted(self.state.files)
                if p not in live and p not in self.moving and selected(p)]
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

    def _load(self, file: RawFile) -> _Note:
        note = _Note(file, wiki_path_for(file.path))
        try:
            data = read_note(self.settings.raw_dir, file, self.settings.compile.max_note_bytes)
            note.sha256 = sha256_bytes(data)
            if not data.strip():
                note.empty = True
                return note
            note.text = decode_note(file.path, data)
        except NoteReadError as exc:
            note.error = str(exc)
            return note
        record = self.state.get(file.path)
        if record is not None and record.sha256 == note.sha256 and record.title \
                and record.status == "ingested":
            note.title, note.aliases = record.title, record.aliases
        else:
            self._parse(note)
        return note

    def _find_moves(self, notes: list[_Note], live: set[str],
                    selected: Callable[[str], bool]) -> None:
        """Pair notes gone from their path with notes new at one (moves.py)."""
        gone = {p: (r.sha256, r.signature) for p, r in self.state.files.items()
                if p not in live and r.wiki and selected(p)}
        if not gone:
            return
        fresh = {}
        for note in notes:
            record = self.state.get(note.file.path)
            if note.text is None or note.error or not note.wiki_path \
                    or not selected(note.file.path):
                continue
            if record is None or record.moved_from:
                note.signature = signature(note.text)
                fresh[note.file.path] = note
        for move in pair_moves(gone, {p: (n.sha256, n.signature) for p, n in fresh.items()}):
            note = fresh[move.new]
            note.moved_from, note.move_how = move.old, move.how
            self.moving[move.old] = note
            self.overlay.follow(self.state.files[move.old].wiki, note.wiki_path, not self.dry_run)

    def _index(self, notes: list[_Note]) -> TitleIndex:
        """The title index of all notes, with generic terms found from every note's mentions
        (cached per note in the state while its content and the term set stay the same). A
        moved page keeps its old titles as aliases here, so mentions of an old name link to
        it (unless another page has that name now)."""
        usable = [n for n in notes if n.text is not None and not n.error]
        before = old_titles(self.state.moves)
        for old, note in self.moving.items():
            before.setdefault(note.wiki_path, []).append(self.state.files[old].title)
        taken = {name.casefold() for n in usable for name in (n.title, *n.aliases)}
        index = TitleIndex(
            IndexEntry(n.wiki_path, n.title,
                       n.aliases + tuple(dict.fromkeys(t for t in before.get(n.wiki_path, ())
                                                       if t and t.casefold() not in taken)))
            for n in usable)
        scanned = []
        for note in notes:
            if note.text is None or note.error:
                continue
            record = self.state.get(note.file.path)
            if record is not None and record.sha256 == note.sha256 \
                    and record.terms == index.terms_digest:
                note.mentions = record.mentions
            else:
                note.mentions = index.scan_mentions(note.text)
                note.rescanned = True
            scanned.append(note.mentions)
        return index.with_generic(scanned)

    def _parse(self, note: _Note) -> None:
        if note.page is None and note.text is not None:
            note.page = parse_page(note.text, note.wiki_path, note.sha256)
            note.title, note.aliases = note.page.title, tuple(note.page.aliases)
            if note.page.frontmatter_error:
                note.error = note.page.frontmatter_error.replace(note.wiki_path, note.file.path,
                                                                 1)

    def _resolve_collisions(self, notes: list[_Note]) -> None:
        """Two raw notes that map to one wiki page (a.md and a.txt): the .md one wins."""
        owners: dict[str, _Note] = {}
        rank = {s: i for i, s in enumerate(NOTE_SUFFIXES)}
        ordered = sorted((n for n in notes if n.text is not None and not n.empty),
                         key=lambda n: (rank.get(Path(n.file.path).suffix.lower(), 9),
                                        n.file.path))
        for note in ordered:
            key = note.wiki_path.casefold()
            if key in owners:
                note.error = (f"{note.file.path}: compiles to the same wiki page as "
                              f"{owners[key].file.path} ({owners[key].wiki_path}); rename one "
                              f"of the two notes.")
                note.wiki_path = ""
            else:
                owners[key] = note

    def _unchanged(self, note: _Note, index: TitleIndex) -> bool:
        record = self.state.get(note.file.path)
        if self.force or record is None or record.status != "ingested":
            return False
        if record.key != self._key(note):
            return False
        if record.wiki != note.wiki_path or not self.wiki.exists(note.wiki_path):
            return False
        if self.compiler.links_in_key \
                and record.links != self._links_index(note, index).links_digest(
                    note.mentions, note.wiki_path):
            return False     # a page it mentions appeared, moved or went: relink it
        if note.rescanned and not self.dry_run:
            self.state.refresh(note.file.path, mentions=note.mentions,
                               terms=index.terms_digest)
        return True

    def _plan_only(self, todo: list[_Note], gone: list[str]) -> None:
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
            verdict = self._removal_verdict(path, record)
            self.outcomes.append(FileOutcome(path, verdict[0], "would " + verdict[1],
                                             record.wiki))

    # -- applying ---------------------------------------------------------------------------

    def _apply(self, todo: list[_Note], gone: list[str], index: TitleIndex, total: int) -> None:
        done = 0
        for path in gone:
            self._remove(path)
            done += 1
            self._tick(done, total, path)
            self._commit()
        for note in todo:
            self._parse(note)
            self.state.transition(note.file.path, "pending", sha256=note.sha256,
                                  key=self._key(note) if note.sha256 else "",
                                  compiler=self.compiler.identity, title=note.title,
                                  aliases=note.aliases, moved_from=note.moved_from)
        self._commit(final=True)
        ready = []
        for note in todo:
            if note.error:
                self._fail(note, note.error)
                done += 1
                self._tick(done, total, note.file.path)
            else:
                ready.append(note)
        for note, (ok, result) in self._compiled(ready, index):
            if ok:
                self._store(note, result, index)
            else:
                self._fail(note, result)
            done += 1
            self._tick(done, total, note.file.path)
            self._commit()
        prune_moves(self.state.moves, [r.wiki for r in self.state.files.values() if r.wiki])

    def _compiled(self, notes: list[_Note],
                  index: TitleIndex) -> Iterator[tuple[_Note, tuple[bool, str]]]:
        """(note, (True, page text) or (False, error)): in note order when compiling in this
        thread, in order of completion with a pool of workers (LLM calls)."""
        def one(note: _Note) -> tuple[bool, str]:
            try:
                return True, self.compiler.compile(self._input(note),
                                                   self._links_index(note, index)).text
            except IngestError as exc:
                return False, str(exc)
            except Exception as exc:  # noqa: BLE001 - a compiler bug fails one note, not all
                return False, (f"{note.file.path}: internal error while compiling "
                               f"({type(exc).__name__}: {exc}); please report it.")

        workers = max(1, int(getattr(self.compiler, "concurrency", 1)))
        if workers == 1 or len(notes) <= 1:
            for note in notes:
                yield note, one(note)
            return
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest") as pool:
            futures = {pool.submit(one, note): note for note in notes}
            try:
                for future in as_completed(futures):
                    yield futures[future], future.result()
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise

    def _links_index(self, note: _Note, index: TitleIndex) -> TitleIndex:
        """The title index ``note`` may link into: with scopes configured, only the pages
        every reader of the note sees (scopes/linking.py)."""
        if self.linkable.needs_frontmatter(note.file.path):
            self._parse(note)
        frontmatter = note.page.frontmatter if note.page is not None else None
        return self.linkable.for_note(index, note.file.path, frontmatter, TitleIndex.within)

    def _input(self, note: _Note) -> NoteInput:
        return NoteInput(note.file.path, note.wiki_path, note.text or "", note.sha256,
                         note.file.mtime, note.page, self.history.get(note.file.path))

    def _key(self, note: _Note) -> str:
        return compile_key(note.sha256, self.compiler.key_identity,
                           dates_key(self.history.get(note.file.path)),
                           self.overlay.digest(note.wiki_path))

    def _store(self, note: _Note, text: str, index: TitleIndex) -> None:
        record = self.state.get(note.file.path)
        current = None
        with contextlib.suppress(IngestError):      # write() below says why it cannot be
            current = self.wiki.read(note.wiki_path)
        text = self.overlay.apply(note.wiki_path, text)
        source = current
        old = self.state.get(note.moved_from) if note.moved_from else None
        if old is not None:
            # the old page, or (a run killed after removing it) the new page written from it
            with contextlib.suppress(IngestError):
                source = self.wiki.read(old.wiki) or current
            text = carry_created(source, text)
        data = carry_record(source, text, note.wiki_path, (note.moved_from, note.file.path)
                            ).encode("utf-8")
        limit = self.settings.limits.max_page_bytes
        if len(data) > limit:
            self._fail(note, f"{note.file.path}: its compiled page would be {len(data):,} bytes, "
                             f"over limits.max_page_bytes ({limit:,}), so no command could read "
                             f"it; not written. Split the note or raise limits.max_page_bytes.")
            return
        reason = ""
        if record is not None and record.wiki_sha256 and record.wiki == note.wiki_path:
            if current is not None and _page_sha256(current) != record.wiki_sha256 \
                    and without_record(current) != without_record(data):
                reason = (f"replaced wiki/{note.wiki_path}, which had been edited by hand "
                          f"(the raw note changed, and raw/ is the source of truth).")
        try:
            self.wiki.write(note.wiki_path, data)
        except IngestError as exc:
            self._fail(note, f"{note.file.path}: {exc}")
            return
        except OSError as exc:
            self._fail(note, f"{note.file.path}: cannot write wiki/{note.wiki_path} "
                             f"({exc.strerror or exc}); check permissions and free space.")
            return
        links = self._links_index(note, index).links_digest(note.mentions, note.wiki_path) \
            if self.compiler.links_in_key else ""
        if old is not None:
            self._finish_move(note, old)
            reason = f"moved from {note.moved_from} ({note.move_how}). {reason}".strip()
        self.state.transition(note.file.path, "ingested", wiki=note.wiki_path,
                              wiki_sha256=_page_sha256(data), links=links,
                              mentions=note.mentions, terms=index.terms_digest, error="",
                              moved_from="", signature=note.signature or signature(note.text))
        self.outcomes.append(FileOutcome(note.file.path, "moved" if old else "ingested",
                                         reason, note.wiki_path))

    def _finish_move(self, note: _Note, old: Any) -> None:
        """After the moved note's page is written: the old page goes (or is kept and marked,
        if edited by hand), its record too, and the move is remembered. A run killed in
        between redoes this from the new page (see _store)."""
        if old.wiki.casefold() != note.wiki_path.casefold() \
                and not self._owned_elsewhere(note.moved_from, old.wiki):
            data = self.wiki.read(old.wiki)
            if data is not None:
                if _written_by_us(data, old):
                    self.wiki.remove(old.wiki)
                else:
                    self.wiki.mark_source_deleted(old.wiki, data)
        record_move(self.state.moves, old.wiki, note.wiki_path, title=old.title,
                    raw=note.file.path, from_raw=note.moved_from, how=note.move_how)
        self.state.drop(note.moved_from)

    def _fail(self, note: _Note, error: str) -> None:
        changes: dict[str, Any] = {"error": error}
        if not note.wiki_path:      # lost a name collision: it owns no wiki page
            changes.update(wiki="", wiki_sha256="")
        self.state.transition(note.file.path, "failed", **changes)
        self.outcomes.append(FileOutcome(note.file.path, "failed", error, note.wiki_path))

    def _remove(self, path: str) -> None:
        record = self.state.files[path]
        status, reason = self._removal_verdict(path, record)
        if record.wiki and not self._owned_elsewhere(path, record.wiki):
            data = self.wiki.read(record.wiki)
            if data is not None:
                if status == "removed":
                    self.wiki.remove(record.wiki)
                else:
                    self.wiki.mark_source_deleted(record.wiki, data)
        self.state.drop(path)
        self.outcomes.append(FileOutcome(path, status, reason, record.wiki))

    def _removal_verdict(self, path: str, record: Any) -> tuple[Outcome, str]:
        """("removed" | "kept", reason) for the page of a raw note that is gone."""
        data = self.wiki.read(record.wiki) if record.wiki else None
        if data is None or self._owned_elsewhere(path, record.wiki):
            return "removed", "raw note deleted; it had no wiki page of its own."
        if _written_by_us(data, record):
            return "removed", f"raw note deleted; removed wiki/{record.wiki}."
        return "kept", (f"raw note deleted, but wiki/{record.wiki} was edited by hand after "
                        f"mindgraph wrote it: kept it and marked it source_deleted: true. "
                        f"Delete it yourself if it is no longer needed.")

    def _owned_elsewhere(self, path: str, wiki_path: str) -> bool:
        return any(p != path and r.wiki == wiki_path and r.status == "ingested"
                   for p, r in self.state.files.items())

    # -- bookkeeping ------------------------------------------------------------------------

    def _commit(self, final: bool = False) -> None:
        """Save the state (after making the pages it records durable). A compiler with a commit
        interval saves at most that often, and at most SAVE_SHARE of the run's time: a save
        writes every record, so saving at a fixed interval made a large first run quadratic."""
        if self.dry_run:
            return
        now = time.monotonic()
        interval = float(getattr(self.compiler, "commit_interval_s", 0.0))
        if interval:
            interval = max(interval, self.save_seconds / SAVE_SHARE)
        if final or now - self.last_commit >= interval:
            self.wiki.make_durable()
            self.state.save()
            self.last_commit = time.monotonic()
            self.save_seconds = self.last_commit - now

    def _tick(self, done: int, total: int, path: str) -> None:
        if self.progress is not None:
            self.progress(done, total, path)

    def _report(self, started: float) -> IngestReport:
        outcomes = tuple(sorted(self.outcomes, key=lambda o: (o.path, o.status)))
        count = {s: sum(1 for o in outcomes if o.status == s)
                 for s in ("ingested", "failed", "removed", "kept", "pending", "moved")}
        return IngestReport(
            compiler=self.compiler.identity,
            ingested=count["pending"] if self.dry_run else count["ingested"],
            skipped=self.skipped, failed=count["failed"], removed=count["removed"],
            kept=count["kept"], moved=count["moved"] + sum(
                1 for o in outcomes if o.status == "pending" and o.reason.startswith("would move")),
            provider_calls=int(getattr(self.compiler, "calls", 0)),
            seconds=round(time.perf_counter() - started, 3), dry_run=self.dry_run,
            files=outcomes)


def _written_by_us(data: bytes, record: Any) -> bool:
    """True when a page is exactly what we wrote (or, for a record left pending by a crash,
    a page compiled from that very raw content by that compiler)."""
    if record.wiki_sha256 and _page_sha256(data) == record.wiki_sha256:
        return True
    # a pending record keeps the hash of the page before it: a run killed after writing the
    # new page and before recording it left a page of ours that this hash does not know
    if record.status != "pending" or not record.sha256:
        return False
    head = data[:4096].decode("utf-8", errors="replace")
    return f"sha256: {record.sha256}" in head and (f"generator: {record.compiler}" in head
                                                   or f"compiler: {record.compiler}" in head)


def _page_sha256(data: bytes) -> str:
    """The hash that tells a hand edit: of the page without its trust record (which
    `mindgraph verify` writes and a recompile carries over)."""
    return sha256_bytes(without_record(data))


@contextlib.contextmanager
def _lock(state_dir: Path, dry_run: bool) -> Iterator[None]:
    """One ingest at a time per workspace (a dry run only reads, so it takes no lock)."""
    if dry_run:
        yield
        return
    try:
        import fcntl
    except ImportError:      # Windows: no advisory locks; run one ingest at a time
        yield
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    with open(state_dir / LOCK_FILENAME, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise IngestError(f"another `mindgraph ingest` is running on {state_dir.parent} "
                              f"(it holds {handle.name}). Wait for it to finish.") from exc
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
