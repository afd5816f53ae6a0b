"""The second half of a run (pipeline.py plans it): remove the pages of gone notes, record
the pending notes, compile them and write each page, saving the state as it goes."""

from __future__ import annotations

import contextlib
import contextvars
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, Iterator

from ..errors import IngestError
from ..text.cjk import preload
from ..trust.carry import carry_record, record_text, without_record
from ..trust.ledger import apply_turns
from .index import TitleIndex
from .moves import carry_created, prune_moves, record_move, signature
from .notes import Note
from .removal import page_sha256, removal_verdict, written_by_us
from .term_matcher import matcher
from .report import FileOutcome
from .workers import in_workers, processes_for


class ApplySteps:
    """What a run does once planned; mixed into pipeline._Run, whose state and helpers
    (_parse, _key, _input, _links_index; _commit and _tick from bookkeeping.py) it uses."""

    # provided by pipeline._Run
    state: Any
    wiki: Any
    overlay: Any
    compiler: Any
    settings: Any
    reader: Any
    outcomes: list[FileOutcome]
    journal: bool       # a targeted run (targeted.py)
    stash: Any          # trust_stash.TrustStash
    notice: Any         # hears what a run waits for (None: nobody)

    def _apply(self, todo: list[Note], gone: list[str], index: TitleIndex, total: int) -> None:
        # a page is read, its record carried and the page written (or removed) with no
        # approved plan (verify/propagate --apply) checking and writing it in between: else the
        # record an apply wrote in between is lost, or the apply writes over the new page
        self.apply_turns = apply_turns(self.settings.state_dir, self.notice)
        try:
            self._apply_all(todo, gone, index, total)
        finally:
            self.apply_turns.close()

    def _apply_all(self, todo: list[Note], gone: list[str], index: TitleIndex,
                   total: int) -> None:
        done = 0
        self.compiled_from: dict[str, str] = {}
        if gone:
            with self.apply_turns.turn():
                self._keep_records(gone)
                for path in gone:
                    self._remove(path)
                    done += 1
                    self._tick(done, total, path)
                    self._commit()
        for note in todo:
            self._parse(note)
        ready = [note for note in todo if not note.error]

        def record_pending() -> None:
            """Save the pending records (before any page is written, so a killed run knows
            what it was doing), then fail the notes that cannot compile. With worker
            processes this runs while they compile: they write nothing."""
            nonlocal done
            for note in todo:
                before = self.state.get(note.file.path)
                # the hash the page was compiled from, before "pending" records the new one
                self.compiled_from[note.file.path] = before.sha256 if before else ""
                self.state.transition(note.file.path, "pending", sha256=note.sha256,
                                      key=self._key(note) if note.sha256 else "",
                                      compiler=self.compiler.identity, title=note.title,
                                      aliases=note.aliases, language=note.language,
                                      moved_from=note.moved_from,
                                      **self._scanned(note, index), **self.reader.stat(note))
            self._commit(now=True)
            for note in todo:
                if note.error:
                    self._fail(note, note.error)
                    done += 1
                    self._tick(done, total, note.file.path)

        for note, (ok, result) in self._compiled(ready, index, record_pending):
            if ok:
                with self.apply_turns.turn():       # see _apply
                    self._store(note, result, index)
            else:
                self._fail(note, result)
            done += 1
            self._tick(done, total, note.file.path)
            self._commit()
        if not self.journal:        # a targeted run adds or removes no page
            prune_moves(self.state.moves, [r.wiki for r in self.state.files.values() if r.wiki])
        self.stash.save()

    def _keep_records(self, gone: list[str]) -> None:
        """Keep the trust records of the pages about to be removed (trust_stash.py), saved
        before any of them goes."""
        for path in gone:
            record = self.state.files[path]
            if not record.wiki or self.state.ingested_elsewhere(path, record.wiki):
                continue
            data = self.wiki.read(record.wiki)
            if data is not None and written_by_us(data, record):
                self.stash.keep(path, record.sha256, record.wiki, record_text(data))
        self.stash.save()

    def _compiled(self, notes: list[Note], index: TitleIndex, first: Callable[[], None]
                  ) -> Iterator[tuple[Note, tuple[bool, str]]]:
        """(note, (True, page text) or (False, error)): in note order when compiling in this
        thread or in worker processes (the offline compiler, workers.py), in order of
        completion with a pool of threads (LLM calls). ``first`` runs before any result is
        given: once the worker processes are forked, so while they compile, else before
        compiling."""
        def one(note: Note) -> tuple[bool, str]:
            try:
                return True, self.compiler.compile(self._input(note),
                                                   self._links_index(note, index)).text
            except IngestError as exc:
                return False, str(exc)
            except Exception as exc:  # noqa: BLE001 - a compiler bug fails one note, not all
                return False, (f"{note.file.path}: internal error while compiling "
                               f"({type(exc).__name__}: {exc}); please report it.")

        def signed(note: Note) -> tuple[bool, str, str, tuple[str, str, str]]:
            """The page and what its record needs that takes time: its move signature and
            links digests (pure functions of the note and the index: the parent only
            writes)."""
            ok, text = one(note)
            if not ok:
                return ok, text, "", ()
            return ok, text, note.signature or signature(note.text), \
                self._links_record(note, index)

        processes = processes_for(int(getattr(self.compiler, "processes", 1)), len(notes))
        if processes:
            preload(n.text or "" for n in notes)    # once, shared by the workers
            matcher(index)      # pattern and automaton built once here, not in every worker
            for (ok, text, sign, links), note in zip(
                    in_workers(signed, notes, processes, meanwhile=first), notes):
                note.signature = note.signature or sign
                note.links_record = links
                yield note, (ok, text)
            return
        first()
        if notes:
            matcher(index)      # before a scoped note's index, which shares its pattern
        workers = max(1, int(getattr(self.compiler, "concurrency", 1)))
        if workers == 1 or len(notes) <= 1:
            for note in notes:
                yield note, one(note)
            return
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest") as pool:
            # each in this context: a server's caller is charged for its LLM calls (quotas/)
            futures = {pool.submit(contextvars.copy_context().run, one, note): note
                       for note in notes}
            try:
                for future in as_completed(futures):
                    yield futures[future], future.result()
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise

    def _store(self, note: Note, text: str, index: TitleIndex) -> None:
        record = self.state.get(note.file.path)
        current = None
        with contextlib.suppress(IngestError):      # write() below says why it cannot be
            current = self.wiki.read(note.wiki_path)
        text = self.overlay.apply(note.wiki_path, text)
        source = current
        old = self.state.get(note.moved_from) if note.moved_from else None
        restored = ""
        if old is not None:
            # the old page, or (a run killed after removing it) the new page written from it
            with contextlib.suppress(IngestError):
                source = self.wiki.read(old.wiki) or current
            text = carry_created(source, text)
        elif current is None:
            # the record of a page removed with its note, if the note is back unchanged
            source = self.stash.take(note.file.path, note.sha256)
            if source:
                restored = ("its trust record (verification, evidence) was restored from "
                            "when its page was removed with the note.")
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
            if current is not None and page_sha256(current) != record.wiki_sha256 \
                    and without_record(current) != without_record(data):
                # the note compiles again unchanged too (--force, a page it links to
                # changed, a new compiler): "the raw note changed" sent people looking for
                # an edit nobody made
                why = ("the raw note changed"
                       if self.compiled_from.get(note.file.path) != note.sha256 else
                       "its unchanged raw note was compiled again: --force, a page it links "
                       "to changed, or a new compiler")
                reason = (f"replaced wiki/{note.wiki_path}, which had been edited by hand "
                          f"({why}; raw/ is the source of truth).")
        try:
            self.wiki.write(note.wiki_path, data, current=current)
        except IngestError as exc:
            self._fail(note, f"{note.file.path}: {exc}")
            return
        except OSError as exc:
            self._fail(note, f"{note.file.path}: cannot write wiki/{note.wiki_path} "
                             f"({exc.strerror or exc}); check permissions and free space.")
            return
        links, basis, digest = note.links_record or self._links_record(note, index)
        if old is not None:
            self._finish_move(note, old)
            reason = f"moved from {note.moved_from} ({note.move_how}). {reason}".strip()
        unindexed = _past_the_index_limit(note.file.path, note.wiki_path, data,
                                          self.settings.limits.max_indexed_chars)
        reason = "\n".join(r for r in (reason, restored, *note.warnings, unindexed)
                           if r)     # one a line
        self.state.transition(note.file.path, "ingested", wiki=note.wiki_path,
                              wiki_sha256=page_sha256(data), links=links, links_basis=basis,
                              links_index=digest,
                              mentions=note.mentions, terms=index.terms_digest, error="",
                              warnings=note.warnings, moved_from="",
                              signature=note.signature or signature(note.text))
        self.outcomes.append(FileOutcome(note.file.path, "moved" if old else "ingested",
                                         reason, note.wiki_path, note.warnings,
                                         note.moved_from if old else ""))

    def _links_record(self, note: Note, index: TitleIndex) -> tuple[str, str, str]:
        """The links digest, its basis and the index digest of the note's page ("" each for a
        compiler whose links are not in the key)."""
        if not self.compiler.links_in_key:
            return "", "", ""
        links_index = self._links_index(note, index)
        return (links_index.links_digest(note.mentions, note.wiki_path),
                links_index.links_basis(note.mentions, note.wiki_path), links_index.digest)

    def _finish_move(self, note: Note, old: Any) -> None:
        """After the moved note's page is written: the old page goes (or is kept and marked,
        if edited by hand), its record too, and the move is remembered. A run killed in
        between redoes this from the new page (see _store)."""
        if old.wiki.casefold() != note.wiki_path.casefold() \
                and not self.state.ingested_elsewhere(note.moved_from, old.wiki):
            data = self.wiki.read(old.wiki)
            if data is not None:
                if written_by_us(data, old):
                    self.wiki.remove(old.wiki)
                else:
                    self.wiki.mark_source_deleted(old.wiki, data)
        record_move(self.state.moves, old.wiki, note.wiki_path, title=old.title,
                    raw=note.file.path, from_raw=note.moved_from, how=note.move_how)
        self.state.drop(note.moved_from)

    def _scanned(self, note: Note, index: TitleIndex) -> dict[str, Any]:
        """The mentions a pending record keeps: this run's scan of its bytes, else none (the
        old bytes' scan under the new hash would be reused once the note compiles)."""
        if note.rescanned:
            return {"mentions": note.mentions, "terms": index.terms_digest}
        record = self.state.get(note.file.path)
        if record is not None and record.sha256 != note.sha256:
            return {"mentions": (), "terms": ""}
        return {}

    def _fail(self, note: Note, error: str) -> None:
        changes: dict[str, Any] = {"error": error}
        if not note.wiki_path:      # lost a name collision: it owns no wiki page
            changes.update(wiki="", wiki_sha256="")
        self.state.transition(note.file.path, "failed", **changes)
        self.outcomes.append(FileOutcome(note.file.path, "failed", error, note.wiki_path))

    def _remove(self, path: str) -> None:
        record = self.state.files[path]
        status, reason = removal_verdict(self.wiki, self.state, path, record)
        if record.wiki and not self.state.ingested_elsewhere(path, record.wiki):
            data = self.wiki.read(record.wiki)
            if data is not None:
                if status == "removed":
                    self.wiki.remove(record.wiki)
                else:
                    self.wiki.mark_source_deleted(record.wiki, data)
        self.state.drop(path)
        self.outcomes.append(FileOutcome(path, status, reason, record.wiki))


def _past_the_index_limit(raw_path: str, wiki_path: str, data: bytes, limit: int) -> str:
    """What of the page ``data`` search will not see (limits.max_indexed_chars), as the note
    ingest prints ("" for a page within it). `check` says it too, but a note compiled whole
    and then found by no search for its last words was a surprise at ingest time."""
    if len(data) <= limit:          # characters are at most bytes: nothing can be past it
        return ""
    from ..page.parse import parse_page

    page = parse_page(data.decode("utf-8"), wiki_path, max_indexed_chars=limit)
    if not page.unindexed_chars:
        return ""
    return (f"{raw_path}: its page's last {page.unindexed_chars:,} characters of text are past "
            f"the {limit:,}-character index limit (limits.max_indexed_chars), so search does "
            f"not see them; the page is whole. Split the note, or raise "
            f"limits.max_indexed_chars in mindgraph.yml.")
