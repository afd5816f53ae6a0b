"""One run of the watcher: the ordinary ingest, the indexes, then the vectors of what changed.

Nothing here compiles, parses or embeds by itself: a run calls ``Mindgraph.ingest`` (the
crash-safe ingest state machine, the very one `mindgraph ingest` runs: it scans raw/, skips
notes whose hash and compile key are unchanged, removes the pages of deleted notes and
relinks the pages a new title concerns; a run that would remove most pages is held, not
applied: ingest/guard.py), ``Mindgraph.sync`` (the page cache, the keyword index
and the graph take only the pages that changed) and the vector sync of mindgraph/vectors/ for
only the pages this run touched. The first run after a start reconciles everything (a full
ingest and a full `embed` plan), so whatever changed while nothing watched — or what a killed
run left half done — is completed then. Later runs hand the ingest the raw notes that changed
and the watcher's ``IngestSession``: a run that only edits notes (no note added, removed or
renamed, no title changed) reads and compiles just those (ingest/targeted.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..core import Mindgraph
from ..errors import MindgraphError, RemovalsHeld
from ..ingest.session import IngestSession
from ..ingest.state import STATE_FILENAME, IngestState
from .notices import track_warnings
from .paths import RAW, WIKI, Change
from .status import RunRecord, now_iso


def sync_run(mg: Mindgraph, changes: Iterable[Change], *, trigger: str = "change",
             touches: int = 0, embed: bool = True,
             indexed: dict[str, str] | None = None,
             session: IngestSession | None = None,
             failing: dict[str, str] | None = None,
             warned: dict[str, tuple[str, ...]] | None = None,
             notice: Callable[[str], None] | None = None) -> RunRecord:
    """Bring the wiki, the indexes and (with ``embed``) the vectors up to date with
    ``changes`` (all of it when ``trigger`` is "start"); ``indexed`` (wiki path → hash of
    the indexed bytes) is updated for the pages the run made current. ``failing`` (raw path
    → why, the notes that failed in earlier runs) is kept current: a note in it that did
    not change and fails again for the same reason is counted in ``still_failing``, not
    listed among this run's failures. ``warned`` (raw path → its compile warnings) is kept
    current the same way; the warnings new in this run go to ``record.warnings``.
    ``notice`` hears, once a run, when its ingest has waited a second for the apply lock."""
    started = time.perf_counter()
    changes = sorted(changes)
    full = trigger == "start"
    record = RunRecord(now_iso(), trigger, [str(c) for c in changes], touches)
    try:
        everything = full or any(c.area == WIKI and c.folder for c in changes)
        # The vectors held before the run: the core may embed some pages itself as it syncs
        # them (vectors/live.py), and the log counts what the whole run embedded.
        held = _vectors_held(mg) if embed and not everything else None
        pages_touched = {c.path for c in changes if c.area == WIKI and not c.folder}
        if (full or any(c.area == RAW for c in changes)) and mg.settings.raw_dir.is_dir():
            pages_touched |= _ingest(mg, record, session, None if full else changes,
                                     {} if failing is None else failing,
                                     {} if warned is None else warned, notice)
        synced = mg.sync()
        pages_touched |= {*synced.added, *synced.changed, *synced.removed}
        pages = dict(mg.current_pages())
        if indexed is not None and not full and record.ingest != "targeted":
            # what the run wrote or removed that no report named (a moved note's old page):
            # the wiki's events for it then match what was indexed, not a change to redo (a
            # targeted run names every page it wrote: no pass over 100,000 pages for it)
            pages_touched |= {p for p, sha in indexed.items()
                              if p not in pages or pages[p].content_hash != sha}
        record.reindexed = sorted(pages_touched)
        if embed:
            _embed(mg, record, pages, None if everything else pages_touched, held)
            if record.compiled or record.moved or record.removed:
                _enrich(mg, record)
        if indexed is not None:
            if full:
                indexed.clear()
            for path in (pages if full else pages_touched):
                if path in pages:
                    indexed[path] = pages[path].content_hash
                else:
                    indexed.pop(path, None)
    except RemovalsHeld as exc:     # raw/ empty or wrong: nothing removed, retried later
        record.error, record.held = str(exc), True
        _forget_missing(mg.settings.raw_dir, failing, warned)
    except MindgraphError as exc:
        record.error = str(exc)
    except Exception as exc:  # noqa: BLE001 - the watcher reports it and goes on
        record.error = f"internal error ({type(exc).__name__}: {exc}); please report it"
    record.seconds = round(time.perf_counter() - started, 3)
    return record


def _ingest(mg: Mindgraph, record: RunRecord, session: IngestSession | None,
            changes: list[Change] | None, failing: dict[str, str],
            warned: dict[str, tuple[str, ...]],
            notice: Callable[[str], None] | None = None) -> set[str]:
    """Run the ingest (targeted at the raw notes among ``changes`` when there is a session and
    no raw folder changed); the wiki pages it wrote or removed."""
    changed = None
    if session is not None and changes is not None \
            and not any(c.area == RAW and c.folder for c in changes):
        changed = [c.path for c in changes if c.area == RAW]
    report = mg.ingest(session=session, changed=changed, notice=notice)
    record.ingest = report.plan
    record.compiled = [f.path for f in report.files if f.status == "ingested"]
    record.moved = [{"from": f.moved_from, "to": f.path} for f in report.files
                    if f.status == "moved"]
    record.removed = [f.path for f in report.files if f.status in ("removed", "kept")]
    _failures(record, report.files, failing, report.plan != "targeted",
              None if changes is None else [c for c in changes if c.area == RAW])
    state_file = mg.settings.state_dir / STATE_FILENAME
    state = session.state_for(state_file) if session is not None else \
        IngestState.load(state_file)
    track_warnings(record, report.files, state.files, warned, complete=changes is None)
    return {f.wiki for f in report.files
            if f.wiki and f.status in ("ingested", "moved", "removed", "kept")}


def _failures(record: RunRecord, files: Iterable[Any], failing: dict[str, str],
              complete: bool, changed: list[Change] | None) -> None:
    """This run's failures in ``record.failed`` (a changed note's, and a note's that did not
    fail before or fails for another reason now), the notes that only failed again as they
    did in ``record.still_failing``; ``failing`` updated (all of it after a run that
    retried every failing note, ``complete``)."""
    before = dict(failing)
    if complete:
        failing.clear()

    paths = {c.path for c in changed or ()}
    folders = tuple(c.path.rstrip("/") + "/" for c in changed or () if c.folder)

    def changed_now(path: str) -> bool:
        return changed is None or path in paths or (bool(folders) and path.startswith(folders))

    for f in files:
        if f.status != "failed":
            failing.pop(f.path, None)
            continue
        failing[f.path] = f.reason
        if before.get(f.path) == f.reason and not changed_now(f.path):
            record.still_failing += 1
        else:
            record.failed.append(f.message)


def _forget_missing(raw_dir: Path, failing: dict[str, str] | None,
                    warned: dict[str, tuple[str, ...]] | None) -> None:
    """Drop the notes no longer in raw/ from ``failing`` and ``warned``: a held run applies
    nothing, so its ingest never reported them gone, and GET /sync/status went on listing a
    deleted note as failing. They come back with their files (the next run reads them)."""
    for notes in (failing, warned):
        for path in [p for p in notes or () if not (raw_dir / p).is_file()]:
            del notes[path]  # type: ignore[union-attr]


def _enrich(mg: Mindgraph, record: RunRecord) -> None:
    """enrich.after_ingest's stage (its own recompile is seen by the next run as wiki changes,
    which compile nothing, so it never loops)."""
    from ..enrich.stage import enrich_after

    _, why = enrich_after(mg)
    if why and not record.error:
        record.error = why


def _vectors_held(mg: Mindgraph) -> dict[str, dict[str, str]] | None:
    """Page → chunk id → content hash of the vectors stored for the configured model (None
    when the store or the model cannot be reached: the embed step then says why)."""
    try:
        return mg.vector_store().hashes(mg.embedding_provider().model_version)
    except MindgraphError:
        return None


def _embed(mg: Mindgraph, record: RunRecord, pages: dict[str, Any],
           touched: set[str] | None, held: dict[str, dict[str, str]] | None) -> None:
    """Embed the touched pages' new sections and drop the vectors of removed ones (``None``:
    plan the whole wiki, as `mindgraph embed` does)."""
    if touched is None:
        report, _ = mg.embed()
        record.embedded, record.vectors_removed = report.embedded, report.deleted_chunks
    elif touched:
        from ..vectors.chunking import chunker_for
        from ..vectors.sync import sync_pages

        provider, store = mg.embedding_provider(), mg.vector_store()
        changed = [pages[p] for p in sorted(touched) if p in pages]
        unreadable = {p.path for p in mg.vault().problems}
        keep = (set(pages) | unreadable) - {p.path for p in changed}
        report = sync_pages(changed, provider, store, chunker_for(provider), keep=keep,
                            batch_size=mg.settings.embedding.batch_size)
        store.flush()
        now = store.hashes(provider.model_version)
        for page in touched:
            before, after = (held or {}).get(page, {}), now.get(page, {})
            record.embedded += sum(1 for c, h in after.items() if before.get(c) != h)
            record.vectors_removed += len(before.keys() - after.keys())
    else:
        return
    if record.embedded or record.vectors_removed:
        mg.forget_vectors()         # the next hybrid answer sees the new vectors
    if report.refused:
        record.error = f"{len(report.refused)} section(s) not embedded: {report.refused[0]}"
