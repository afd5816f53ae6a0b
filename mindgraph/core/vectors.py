"""Vectors and hybrid retrieval: the embedding model and the vector store (both opened on
first use), `embed`, hybrid search, proactive context, and the changed pages a long-running
process keeps embedded (mixed into ``Mindgraph``)."""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from ..errors import MindgraphError, in_general_terms
from ..fsutil import writing_nothing
from ..page.language import query_language
from .indexes import WarmIndexes, query

if TYPE_CHECKING:
    from ..retrieval.context import ContextBlock
    from ..retrieval.hybrid import HybridResponse, HybridRetriever, SearchOptions
    from ..retrieval.vector import VectorRetriever
    from ..vectors.live import LiveVectors


class VectorSearch(WarmIndexes):
    """The model, the store and the hybrid retriever over the warm indexes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._embedder: Any = None
        self._store: Any = None
        self._vector: tuple[VectorRetriever | None, str | None] | None = None
        self._hybrid: HybridRetriever | None = None

    @functools.cached_property
    def _live(self) -> LiveVectors:
        """Changed pages still to embed (made on first use: a keyword search never needs it)."""
        from ..ingest.moves import moves_of, vector_sources
        from ..vectors.live import LiveVectors

        settings = self.settings
        return LiveVectors(settings.serve.embed_changes_max_chunks,
                           settings.embedding.batch_size,
                           lambda: vector_sources(moves_of(settings.state_dir)))

    def _pages_changed(self, touched: tuple[str, ...]) -> None:
        self._hybrid = None
        if "_live" in self.__dict__:    # not made yet: hybrid search never used vectors here
            self._live.changed(touched, self._embed_pending)

    def _embed_pending(self, max_chunks: int) -> None:
        """Embed the changed pages that still lack vectors (see vectors/live.py)."""
        if self._cache is None:
            return
        waiting = bool(self._live.pending)
        if self._live.catch_up(self._cache.pages, {p.path for p in self._cache.problems},
                               lambda: (self.embedding_provider(), self.vector_store()),
                               max_chunks):
            self._hybrid = None         # its answers carry the old note
        if waiting and self._vector is not None and self._vector[0] is not None:
            self._vector[0].forget_models()     # a model may have its first vectors now

    def embedding_provider(self) -> Any:
        """The configured embedding provider (the local model loads on first use)."""
        with self._lock:
            if self._embedder is None:
                from ..providers.embedding.factory import create_embedding_provider

                self._embedder = create_embedding_provider(self.settings)
            return self._embedder

    def start_model(self, query: str = "") -> None:
        """Start loading the local model on a thread (``warm``; with one model per language,
        the one that embeds ``query``): a fresh process about to
        search reads its indexes meanwhile, and the model's own loading (onnxruntime, the
        tokenizer) runs partly outside the GIL. The first query embedding waits for it; a
        load that fails is left to that embedding to report. Nothing for other providers,
        nor when the store holds no vectors of the model (the search is keyword-only)."""
        try:
            provider = self.embedding_provider()
            store = self.vector_store()     # here: the query holds the lock from now on
        except MindgraphError:
            return          # the search reports it (a bad configuration, a store down)
        # one model per language (routed.py): the model of ``query``'s language
        warm_for = getattr(provider, "warm_for", None)
        warm = functools.partial(warm_for, query) if warm_for is not None else \
            getattr(provider, "warm", None)
        if warm_for is not None and query_language(query) == "zh" \
                and provider.route_of("ja") != provider.route_of("zh"):
            # Han alone is Japanese or Chinese as the pages say (retrieval/query_language.py),
            # known once they are read: the model loads from then on, beside the indexes
            warm = functools.partial(_warm_as_pages_say, self, warm_for, query)
        if warm is not None:
            threading.Thread(target=_quietly, args=(_if_embedded, store, provider, warm),
                             name="mindgraph-model").start()

    def vector_store(self) -> Any:
        """The configured vector store (StoreError naming the DSN when it cannot be reached)."""
        with self._lock:
            if self._store is None:
                from ..stores.factory import create_store

                self._store = create_store(self.settings, self.embedding_provider())
            return self._store

    def _vector_retriever(self) -> tuple[VectorRetriever | None, str | None]:
        """The vector retriever, or None and why (store down, nothing embedded yet)."""
        if self._vector is None:
            try:
                provider = self.embedding_provider()
                store = self.vector_store()
                if store.count(provider.model_version) == 0:
                    # a damaged file reads as empty: say so, not "not embedded yet"
                    damaged = [r for r in store.repairs() if provider.model_version in r]
                    # (which of "never compiled" and "raw/ is empty": the CLI says, with
                    # the folder; an agent is told by the empty answer's own note)
                    self._vector = (None, "; ".join(damaged) or (
                        "the wiki has no pages to embed yet" if not self._pages() else
                        f"no vectors of {provider.model_version} yet; run `mindgraph embed`"))
                else:
                    from ..retrieval.vector import VectorRetriever

                    self._vector = (VectorRetriever(provider, store,
                                                    languages=self._page_languages), None)
            except MindgraphError as exc:      # a provider's text is for the log only
                self._vector = (None, in_general_terms(exc))
            self._live.tried()
        return self._vector

    def _hybrid_retriever(self) -> HybridRetriever:
        if self._hybrid is None:
            from ..retrieval.hybrid import HybridRetriever
            from ..retrieval.wiring import CACHE_FILE, search_helpers

            vector, why = self._vector_retriever()
            self._live.in_use = self._live.in_use or vector is not None
            self._hybrid = HybridRetriever(self._pages(), self.keyword_index(), self.graph(),
                                           vector, self.settings.retrieval, vector_error=why,
                                           vector_note=self._live.note,
                                           **search_helpers(
                                               self.settings, self._state_file(CACHE_FILE)))
        return self._hybrid

    @query
    def hybrid_retriever(self) -> HybridRetriever:
        """The hybrid retriever over the current wiki (for benchmarks and servers)."""
        return self._hybrid_retriever()

    @query
    def plan_embed(self) -> Any:
        """What `embed` would do: chunks to embed, stale and removed ones (no model call).

        Pages that could not be read keep their stored vectors."""
        from ..vectors.chunking import chunker_for
        from ..vectors.sync import plan_sync

        provider = self.embedding_provider()
        store = self.vector_store()
        assert self._cache is not None
        pages = self._cache.pages
        keep = {p.path for p in self._cache.problems if p.path not in pages}
        return plan_sync([pages[p] for p in sorted(pages)], store,
                         self._planned_model_version(store), chunker_for(provider), keep=keep,
                         moved=self._live.moved(), memo_dir=self.settings.state_dir,
                         save_memo=self.save_state_files)

    def _planned_model_version(self, store: Any) -> str:
        from ..providers.embedding.factory import planned_model_version

        planned = planned_model_version(self.settings)
        if planned is not None:
            return planned
        # A remote model of unconfigured width: the store may already know it; else ask once.
        cfg = self.settings.embedding
        prefix = f"{cfg.provider}:{cfg.model}:"
        known = [m for m in store.model_versions() if m.startswith(prefix)]
        return known[0] if len(known) == 1 else self.embedding_provider().model_version

    def embed(self, *, dry_run: bool = False, drop_other_models: bool = False,
              plan: Any = None, progress: Any = None, rebuild_index: bool = False,
              notice: Any = None) -> Any:
        """Embed new and changed sections, remove deleted ones; a re-run over unchanged pages
        makes no embedding call. Returns the SyncReport (``dropped`` lists removed models).
        ``rebuild_index`` then builds the model's approximate index again with the configured
        settings (one built with other settings is otherwise kept, and reported); ``notice``
        (a function of one message) hears what happens meanwhile (waiting for another
        process's embed in the workspace, or its rebuild of the same index).

        The core lock is held only while the plan is taken and when the new vectors go live:
        queries keep being answered during the model calls (the stores are thread-safe)."""
        from ..vectors.lock import embed_lock

        # one embed at a time in the workspace: another waits, then plans again (lock.py); a
        # caller that passes its ``plan`` holds embed_lock while planning. A dry run only reads.
        with writing_nothing() if dry_run else \
                embed_lock(self.settings.state_dir, notice=notice,
                           store=self.vector_store()):
            return self._embed(dry_run=dry_run, drop_other_models=drop_other_models, plan=plan,
                               progress=progress, rebuild_index=rebuild_index, notice=notice)

    def _embed(self, *, dry_run: bool, drop_other_models: bool, plan: Any, progress: Any,
               rebuild_index: bool, notice: Any) -> Any:
        from ..vectors.live import NO_LIMIT
        from ..vectors.sync import apply_sync, report_of

        started = time.perf_counter()
        provider = None
        with self._lock:
            # counted before the plan: the sync that planning does leaves changes to us
            self._live.embeds_running += 1
        deleted, refused = 0, list[str]()
        try:
            with self._lock:
                store = self.vector_store()
                plan = plan or self.plan_embed()
                provider = self.embedding_provider() if not dry_run else None
            if provider is not None:
                deleted = apply_sync(plan, provider, store,
                                     batch_size=self.settings.embedding.batch_size,
                                     progress=progress, refused=refused)
        finally:
            with self._lock:
                self._live.embeds_running -= 1
                # The last embed to end catches up with the pages synced while embeds ran:
                # they were planned with older text, or not at all. A real embed does it
                # without a limit (this is `embed`); a dry run as a query would.
                self._embed_pending(NO_LIMIT if provider is not None else self._live.max_chunks)
        dropped: dict[str, int] = {}
        if drop_other_models:
            for other, count in store.model_versions().items():
                if other != plan.model_version:
                    dropped[other] = count if dry_run else store.drop_model(other)
        store.flush()
        rebuilt = store.rebuild_index(plan.model_version, notice) \
            if rebuild_index and not dry_run else ""
        report = replace(report_of(plan, store, dry_run=dry_run, deleted=deleted,
                                   seconds=time.perf_counter() - started, refused=refused),
                         index_rebuilt=rebuilt)
        if not dry_run:
            with self._lock:
                self._live.in_use = True    # from here on, keep changed pages embedded
                self.forget_vectors()
        return report, dropped

    @query
    def smart_search(self, query: str, limit: int = 10,
                     options: SearchOptions | None = None) -> HybridResponse:
        """Hybrid search: intent router, keyword + vector fusion, graph boost, explanations.

        Never fails because the vector store is down: it answers from keywords and says so in
        the response's ``degradation``."""
        from ..retrieval.hybrid import SearchOptions

        options = options or SearchOptions()
        if options.top_k != limit:
            options = SearchOptions(**{**options.__dict__, "top_k": limit})
        if self._live.due():
            # Retry what failed: the store or provider may be back, another process may have
            # embedded the wiki (`mindgraph embed`) or the pages this one could not.
            if self._vector is not None and self._vector[0] is None:
                self.forget_vectors()
            self._embed_pending(self._live.max_chunks)
        return self._hybrid_retriever().search(query, options)

    def prepare_query(self, query: str) -> None:
        """Embed ``query`` ahead of ``smart_search`` without taking the core lock.

        A server calls this on another thread while earlier queries are answered: the vector
        lands in the retriever's query cache, so model inference (which releases the GIL)
        overlaps the Python work of other requests. Does nothing before the first search has
        opened the vector store; never raises (the search itself reports any failure)."""
        ready = self._vector
        vector = ready[0] if ready is not None else None
        if vector is not None:
            with contextlib.suppress(Exception):
                vector.embed_query(query)

    def context(self, situation: str, *, limit: int = 3, timeout_s: float | None = None,
                excluded: Callable[[], float] | None = None) -> ContextBlock:
        """Top knowledge for a situation as a markdown block, within a hard time limit
        (``excluded``: a clock of seconds not counted against it, retrieval/context.py).

        Never raises but QuotaExceeded (a server's caller used up its LLM calls): on an error
        the block is empty and says why; on a timeout it holds the keyword matches found in
        time (retrieval/context.py), or is empty."""
        from ..retrieval.context import context_within, keyword_results

        timeout = self.settings.serve.context_timeout_s if timeout_s is None else timeout_s
        return context_within(situation, lambda q: self.smart_search(q, max(limit, 5)),
                              timeout, limit, self.settings.serve.context_min_similarity,
                              keywords=lambda q: keyword_results(self.search(q, limit,
                                                                             why=False)),
                              excluded=excluded)

    def forget_vectors(self) -> None:
        """Drop the cached vector retriever (after `embed`, or to retry a store that was down)."""
        with self._lock:
            self._vector = None
            self._hybrid = None


def _warm_as_pages_say(mg: VectorSearch, warm_for: Any, query: str) -> None:
    """``warm_for`` the model of ``query``'s language in ``mg``'s pages (query_language.py)."""
    from ..retrieval.query_language import query_language_in

    with mg._lock:
        language = query_language_in(query, mg._page_languages)
    warm_for(query, language)


def _if_embedded(store: Any, provider: Any, warm: Any) -> None:
    """``warm()`` only when ``store`` holds vectors of ``provider``'s model: on a wiki not
    embedded yet hybrid search is keyword-only, and loading the model (seconds for the
    multilingual one, announced on stderr) bought nothing but a wait. The count reads the
    table the vector retriever reads next, so it is not read twice."""
    if store.count(provider.model_version) > 0:
        warm()


def _quietly(work: Any, *args: Any) -> None:
    """Run ``work(*args)``; an error is for the caller who needs the result to see and
    report."""
    with contextlib.suppress(Exception):
        work(*args)
