"""Incremental embedding of a wiki into a vector store.

``plan_sync`` compares the chunks of the given pages (the whole wiki) with what the store
holds for the model (``store.hashes``): chunks that are new or whose hash changed are to be
embedded, chunks that vanished from a page are stale, pages the store has but the wiki no
longer has are removed. It makes no embedding call, so ``--dry-run`` is just the plan.

``apply_sync`` deletes first, then embeds and upserts in batches (identical texts embedded
once), flushing the store as often as costs at most a tenth of the run (every batch while a
flush is cheap; at 100k chunks, whose file takes a second or two to write, every ~20 s) and
at the end, also when a provider
error stops the run: whatever was stored stays valid, and the next run resumes from there.
A re-run over unchanged pages embeds nothing.

A page that moved (``moved``: new page → [(old page, old title)], from the ingest state's
moves) and has no vectors yet takes the old page's: a chunk whose stored hash is its own, or
what its hash was under the old title (a renamed page's context line), is handed over with
``store.move_chunks`` instead of being embedded; the rest of the old page goes as usual. A
renamed page whose body is unchanged keeps the chunks of its old title (the title is each
chunk's first line and shifts where long sections split): its vectors stay valid until its
body changes, and then the page is chunked and embedded under its new title.
"""

from __future__ import annotations

import time
from pathlib import Path
from dataclasses import dataclass, field, replace
from typing import Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from ..errors import AgentNote, ConfigError, in_general_terms, note_around
from ..page.model import Page
from ..providers.embedding.base import EmbeddingProvider
from ..stores.base import ChunkMove, VectorRecord, VectorStore
from .chunk_memo import ChunkMemo
from .chunking import Chunk, Chunker, chunker_for, hash_under_title

# a flush waits until embedding has run this many times as long as the last flush took: a
# kill loses at most that much work (one batch while flushes are cheap), for <= 10% overhead
FLUSH_COST_RATIO = 10.0


@dataclass(frozen=True)
class SyncPlan:
    """What a sync would do for one model_version."""

    model_version: str
    pages: int                                   # pages considered
    chunks: int                                  # chunks they have now
    to_embed: tuple[Chunk, ...]                  # new or changed chunks
    stale: dict[str, tuple[str, ...]] = field(default_factory=dict)  # page → chunk ids to drop
    removed_pages: tuple[str, ...] = ()          # pages stored but gone from the wiki
    new_pages: tuple[str, ...] = ()              # pages with no stored chunk yet
    removed_chunks: int = 0                      # chunks of removed pages (this model)
    carried: tuple[ChunkMove, ...] = ()          # stored chunks a moved page takes over

    @property
    def unchanged(self) -> int:
        """Chunks already stored with the same hash."""
        return self.chunks - len(self.to_embed)

    @property
    def stale_chunks(self) -> int:
        """Chunks to delete from pages that still exist."""
        return sum(len(ids) for ids in self.stale.values())

    @property
    def changed_pages(self) -> tuple[str, ...]:
        """Pages with at least one chunk to embed or delete (new pages included)."""
        return tuple(sorted({c.page for c in self.to_embed} | set(self.stale)))

    @property
    def is_noop(self) -> bool:
        """True when the store is already up to date."""
        return not (self.to_embed or self.stale or self.removed_pages)


@dataclass(frozen=True)
class SyncReport:
    """What a sync did (or, for a dry run, would do)."""

    model_version: str
    store: str
    pages: int
    chunks: int
    embedded: int
    unchanged: int
    deleted_chunks: int
    removed_pages: tuple[str, ...]
    changed_pages: tuple[str, ...]
    other_models: dict[str, int]
    dry_run: bool
    seconds: float
    refused: tuple[str, ...] = ()                # chunks whose vector was unusable (why)
    repaired: tuple[str, ...] = ()               # what the store left out of damaged files
    index_warnings: tuple[str, ...] = ()         # the model's index built with other settings
    index_rebuilt: str = ""                      # what --rebuild-index did

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (for --json)."""
        return {"model_version": self.model_version, "store": self.store, "pages": self.pages,
                "chunks": self.chunks, "embedded": self.embedded, "unchanged": self.unchanged,
                "deleted_chunks": self.deleted_chunks,
                "removed_pages": list(self.removed_pages),
                "changed_pages": list(self.changed_pages),
                "other_models": self.other_models, "dry_run": self.dry_run,
                "refused": list(self.refused), "repaired": list(self.repaired),
                "index_warnings": list(self.index_warnings),
                "index_rebuilt": self.index_rebuilt,
                "seconds": round(self.seconds, 3)}


def plan_sync(pages: Iterable[Page], store: VectorStore, model_version: str,
              chunker: Chunker, *, keep: Collection[str] = (),
              moved: Mapping[str, Sequence[tuple[str, str]]] | None = None,
              memo_dir: Path | None = None, save_memo: bool = True) -> SyncPlan:
    """Compare the pages' chunks with the store; ``keep`` names pages to leave as stored,
    ``moved`` where moved pages came from (see the module docstring). With ``memo_dir``, pages
    planned before whose file and stored chunks are the same are not chunked again
    (chunk_memo.py): a no-op plan then reads no tokenizer (``save_memo`` false: the memo is
    read, never written; a dry run writes nothing).

    ``pages`` must be the whole wiki: a stored page missing from it is planned for removal,
    unless it is in ``keep`` (e.g. a page that could not be read this time).
    """
    stored = store.hashes(model_version)
    pages = list(pages)
    present = {p.path for p in pages} | set(keep)
    carried: list[ChunkMove] = []
    to_embed: list[Chunk] = []
    stale: dict[str, tuple[str, ...]] = {}
    seen: set[str] = set()
    new_pages: list[str] = []
    total = 0
    memo = None if memo_dir is None else \
        ChunkMemo.load(memo_dir, model_version,
                       getattr(chunker, "memo_key", getattr(chunker, "max_tokens", 0)))
    for page in pages:
        seen.add(page.path)
        sources = (moved or {}).get(page.path, ())
        held = stored.get(page.path, {})
        if memo is not None and not sources and memo.unchanged(page, held):
            total += len(held)
            continue
        chunks = _chunks_of(page, chunker, sources, stored, present)
        if memo is not None:
            memo.record(page, chunks)
        total += len(chunks)
        if not held and chunks:
            new_pages.append(page.path)
            chunks = _carry(page, chunks, sources, stored, present, carried)
        to_embed.extend(c for c in chunks if held.get(c.chunk_id) != c.content_hash)
        gone = set(held) - {c.chunk_id for c in chunks}
        if gone:
            stale[page.path] = tuple(sorted(gone))
    removed = tuple(sorted(p for p in stored if p not in seen and p not in keep))
    if memo is not None:
        memo.keep_only(seen)
        if save_memo:
            memo.save()
    return SyncPlan(model_version=model_version, pages=len(seen), chunks=total,
                    to_embed=tuple(to_embed), stale=stale, removed_pages=removed,
                    new_pages=tuple(new_pages),
                    removed_chunks=sum(len(stored[p]) for p in removed) - len(carried),
                    carried=tuple(carried))


def _chunks_of(page: Page, chunker: Chunker, sources: Sequence[tuple[str, str]],
               stored: Mapping[str, Mapping[str, str]], present: Collection[str]) -> list[Chunk]:
    """The page's chunks; for a renamed page, those under an old title when every one of
    them is stored (at the page, or at the old page it takes them from)."""
    for old, old_title in sources:
        if not old_title or old_title == page.title:
            continue
        held = {**(stored.get(old, {}) if old not in present else {}),
                **stored.get(page.path, {})}
        if not held:
            continue
        chunks = chunker.chunk_page(replace(page, title=old_title))
        if chunks and all(held.get(c.chunk_id) == c.content_hash for c in chunks):
            return chunks
    return chunker.chunk_page(page)


def _carry(page: Page, chunks: list[Chunk], sources: Sequence[tuple[str, str]],
           stored: Mapping[str, Mapping[str, str]], present: Collection[str],
           carried: list[ChunkMove]) -> list[Chunk]:
    """The chunks of a moved page still to embed; those an old page holds go to
    ``carried``. The old page's vectors may have been made under any earlier title."""
    titles = {title for _, title in sources}
    for old, _ in sources:
        held = stored.get(old)
        if not held or old in present:
            continue
        rest = []
        for chunk in chunks:
            if held.get(chunk.chunk_id) in {chunk.content_hash} | {
                    hash_under_title(chunk, page.title, title) for title in titles}:
                carried.append(ChunkMove(old, chunk.chunk_id, page.path, chunk.content_hash))
            else:
                rest.append(chunk)
        return rest
    return chunks


def apply_sync(plan: SyncPlan, provider: EmbeddingProvider, store: VectorStore, *,
               batch_size: int = 64,
               progress: Callable[[int], None] | None = None,
               refused: list[str] | None = None) -> int:
    """Carry out a plan; return the number of chunks deleted. ``progress(n)`` per batch.

    A removed page loses its vectors of every model, not only this one: it is gone. A vector
    that is all zeros or holds NaN/inf (a broken model or server) is not stored: its chunk is
    named in ``refused`` with the reason, and the next run tries it again.
    """
    if plan.to_embed and provider.model_version != plan.model_version:
        raise ConfigError(f"The embedding provider answers as {provider.model_version}, but "
                          f"the store was compared for {plan.model_version}. Set "
                          f"embedding.dimension in mindgraph.yml and run again.")
    deleted = 0
    upgrade = getattr(store, "upgrade", None)
    if upgrade is not None:     # an older layout's vectors moved to this one's (stores/routed.py)
        upgrade()
    if plan.carried:
        store.move_chunks(plan.model_version, plan.carried)
    for page, chunk_ids in plan.stale.items():
        deleted += store.delete(page, chunk_ids, model_version=plan.model_version)
    for page in plan.removed_pages:
        deleted += store.delete(page)
    flushed_at, flush_cost = time.monotonic(), 0.0
    try:
        for start in range(0, len(plan.to_embed), batch_size):
            batch = plan.to_embed[start:start + batch_size]
            routed = hasattr(provider, "route_of")
            # one text embedded once per model (a section's second vector has its text,
            # embedded by the multilingual model: embedding.cross_lingual_vectors)
            keys = [(c.text, c.route if routed else -1) for c in batch]
            unique = list(dict.fromkeys(keys))
            texts = [text for text, _ in unique]
            vectors = provider.embed_documents(texts, [route for _, route in unique]) \
                if routed else provider.embed_documents(texts)
            row_of = {key: i for i, key in enumerate(unique)}
            unusable = unusable_rows(vectors)
            records = []
            for c, key in zip(batch, keys):
                row = row_of[key]
                if row in unusable:
                    if refused is not None:
                        refused.append(f"{c.page}#{c.chunk_id}: {provider.model_version} "
                                       f"returned {unusable[row]}; not stored (a broken "
                                       f"model or server). Run `mindgraph embed` again or "
                                       f"check the embedding provider.")
                    continue
                records.append(VectorRecord(page=c.page, chunk_id=c.chunk_id,
                                            section_id=c.section_id,
                                            content_hash=c.content_hash, vector=vectors[row],
                                            scope=c.scope))
            store.upsert(plan.model_version, records)
            if time.monotonic() - flushed_at >= FLUSH_COST_RATIO * flush_cost:
                started = time.monotonic()
                store.flush()
                flushed_at = time.monotonic()
                flush_cost = flushed_at - started
            if progress is not None:
                progress(len(batch))
    finally:
        store.flush()
    return deleted


def unusable_rows(vectors: np.ndarray) -> dict[int, str]:
    """Rows that cannot be compared by cosine: row → "an all-zero vector" or "a vector
    with NaN or infinite values"."""
    matrix = np.asarray(vectors, dtype=np.float32)
    bad: dict[int, str] = {}
    finite = np.isfinite(matrix).all(axis=1)
    for row in np.flatnonzero(~finite):
        bad[int(row)] = "a vector with NaN or infinite values"
    for row in np.flatnonzero(finite & ~matrix.any(axis=1)):
        bad[int(row)] = "an all-zero vector"
    return bad


def sync_pages(pages: Iterable[Page], provider: EmbeddingProvider, store: VectorStore,
               chunker: Chunker, *, keep: Collection[str] = (), batch_size: int = 64,
               dry_run: bool = False,
               progress: Callable[[int], None] | None = None) -> SyncReport:
    """Plan and (unless ``dry_run``) apply a sync; the one call most callers need."""
    started = time.perf_counter()
    plan = plan_sync(pages, store, provider.model_version, chunker, keep=keep)
    deleted = 0
    refused: list[str] = []
    if not dry_run:
        deleted = apply_sync(plan, provider, store, batch_size=batch_size, progress=progress,
                             refused=refused)
    return report_of(plan, store, dry_run=dry_run, deleted=deleted,
                     seconds=time.perf_counter() - started, refused=refused)


def sync_changed_pages(pages: Mapping[str, Page], touched: Collection[str],
                       provider: EmbeddingProvider, store: VectorStore, *, max_chunks: int,
                       batch_size: int = 64, unreadable: Collection[str] = (),
                       moved: Mapping[str, Sequence[tuple[str, str]]] | None = None
                       ) -> str | None:
    """Embed the new sections of the ``touched`` pages (and forget pages no longer in
    ``pages``) unless that means more than ``max_chunks`` embeddings; the reason when it
    was not done (too many, or the provider or store failed), else None. ``unreadable``
    pages keep their vectors, as in ``mindgraph embed``."""
    changed = [pages[p] for p in touched if p in pages]
    try:
        plan = plan_sync(changed, store, provider.model_version, chunker_for(provider),
                         keep=(set(pages) | set(unreadable)) - {p.path for p in changed},
                         moved=moved)
        if len(plan.to_embed) > max_chunks:
            return (f"changed pages not embedded yet: {len(plan.changed_pages)} (over "
                    f"serve.embed_changes_max_chunks); vector results may miss them until "
                    f"`mindgraph embed` runs")
        refused: list[str] = []
        apply_sync(plan, provider, store, batch_size=batch_size, refused=refused)
        if refused:     # names a page (maybe of another scope) and the model: for the log
            return AgentNote(f"changed pages could not be embedded ({len(refused)} section(s) "
                             f"refused by the embedding model; the server's log has the "
                             f"details); vector results may miss them",
                             f"changed pages could not be embedded ({len(refused)} section(s) "
                             f"refused: {refused[0]}); vector results may miss them")
    except Exception as exc:  # noqa: BLE001 - called before a query, which must not fail
        return note_around(in_general_terms(exc), "changed pages could not be embedded "
                           "({}); vector results may miss them until `mindgraph embed` runs")
    return None


def report_of(plan: SyncPlan, store: VectorStore, *, dry_run: bool, deleted: int,
              seconds: float, refused: Collection[str] = ()) -> SyncReport:
    """The report for a plan, applied (``deleted`` counted) or not."""
    others = {m: n for m, n in store.model_versions().items() if m != plan.model_version}
    would_delete = plan.stale_chunks + plan.removed_chunks
    return SyncReport(model_version=plan.model_version, store=store.description,
                      pages=plan.pages, chunks=plan.chunks,
                      embedded=len(plan.to_embed) - len(refused), unchanged=plan.unchanged,
                      deleted_chunks=deleted if not dry_run else would_delete,
                      removed_pages=plan.removed_pages, changed_pages=plan.changed_pages,
                      other_models=others, dry_run=dry_run, seconds=seconds,
                      refused=tuple(refused), repaired=tuple(store.repairs()),
                      index_warnings=tuple(store.index_warnings(plan.model_version)))
