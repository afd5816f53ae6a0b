"""The composition root: one object that wires settings, stores, providers and engines.

Only the entry points (CLI, REST, MCP) build a ``Mindgraph``; everything below receives what
it needs through arguments. The object keeps derived state warm between calls (a server
holds one for its lifetime) and refreshes it from disk when wiki files change, under a lock,
so concurrent requests never see a half-updated index.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar

from .config import Settings, load_settings
from .errors import InputError, MindgraphError, NotFoundError
from .graph.build import KnowledgeGraph, open_graph
from .graph.communities import Community, detect_communities
from .graph.query import Neighbor, hubs, neighbors, orphans, shortest_path
from .ingest.moves import moved_pages, moves_of, vector_sources
from .page.address import page_url
from .page.cache import ChangeSet, PageCache, open_pages
from .page.check import CheckReport, check_vault
from .page.data import extract_data
from .page.lookup import find_page
from .page.model import Page, Section
from .page.vault import PageLimits, Vault
from .retrieval.context import ContextBlock
from .retrieval.explain import SearchResult, explain
from .retrieval.hybrid import HybridResponse, HybridRetriever, SearchOptions
from .retrieval.keyword import KeywordIndex, open_keyword_index
from .retrieval.present import language_weight, query_language
from .retrieval.vector import VectorRetriever
from .retrieval.wiring import search_helpers
from .scopes import Identity, Scopes, View, load_scopes
from .scopes.check import unscoped_findings
from .scopes.views import ScopedQueries, ViewRegistry

if TYPE_CHECKING:   # imported where used, so a search does not load the compiler
    from .coverage.report import CoverageReport
    from .ingest.report import IngestReport
    from .calibrate.recency_fit import Fit
    from .lint.findings import LintReport
    from .propagate.service import PropagationService
    from .timeline.build import Timeline
    from .trust.service import TrustService
from .usage import UsageLog
from .vectors.live import NO_LIMIT, LiveVectors

T = TypeVar("T")


def _query(method: Callable[..., T]) -> Callable[..., T]:
    """Run a public query under the lock, syncing with the files once per outermost call."""

    @functools.wraps(method)
    def wrapper(self: "Mindgraph", *args: Any, **kwargs: Any) -> T:
        with self._lock:
            self._depth += 1
            try:
                if self._depth == 1 and (self._cache is None or self.auto_refresh):
                    self.sync()
                return method(self, *args, **kwargs)
            finally:
                self._depth -= 1

    return wrapper


class Mindgraph:
    """A workspace: raw notes, the compiled wiki and everything derived from them."""

    def __init__(self, settings: Settings, *, auto_refresh: bool = True):
        self.settings = settings
        self.auto_refresh = auto_refresh
        self._lock = threading.RLock()
        self._cache: PageCache | None = None
        self._vault: Vault | None = None
        self._keyword: KeywordIndex | None = None
        self._graph: KnowledgeGraph | None = None
        self._depth = 0
        self._embedder: Any = None
        self._store: Any = None
        self._vector: tuple[VectorRetriever | None, str | None] | None = None
        self._hybrid: HybridRetriever | None = None
        self._live = LiveVectors(settings.serve.embed_changes_max_chunks,
                                 settings.embedding.batch_size,
                                 lambda: vector_sources(moves_of(settings.state_dir)))

    @classmethod
    def open(cls, base_dir: str | Path = ".", config: str | Path | None = None) -> "Mindgraph":
        """Load settings from ``base_dir``/mindgraph.yml (or ``config``) and wire everything."""
        return cls(load_settings(base_dir, config))

    @functools.cached_property
    def trust(self) -> "TrustService":
        """Verification, audit and the run ledger (mindgraph/trust/)."""
        from .trust.service import TrustService
        return TrustService(self.settings)

    @property
    def usage_log(self) -> UsageLog:
        """Where queries are logged (serve.usage_log under the state folder; "" = off)."""
        name = self.settings.serve.usage_log
        return UsageLog(self.settings.state_dir / name if name else None,
                        max_bytes=self.settings.serve.usage_log_max_bytes)

    # -- derived state -------------------------------------------------------------------
    def sync(self) -> ChangeSet:
        """Re-read wiki files that changed on disk and update every derived index.

        Called before each query (unless ``auto_refresh`` is off), so a page edited by a
        person or by ``mindgraph ingest`` is visible to the next query that could see it.
        """
        with self._lock:
            if self._cache is None:
                self.settings.require_wiki()
                self._cache, changes = open_pages(
                    self.settings.wiki_dir, self.settings.state_dir,
                    self.settings.serve.watch_wiki, PageLimits.of(self.settings.limits))
            else:
                changes = self._cache.refresh()
            if changes:
                self._vault = None
                self._hybrid = None
                pages = self._cache.pages
                if self._keyword is not None:
                    self._keyword.apply(pages, changes.added, changes.changed, changes.removed)
                    self._keyword.save(self._state_file("keyword.pickle"))
                if self._graph is not None:
                    self._graph.apply(pages, changes.added, changes.changed, changes.removed)
                    self._graph.save(self._state_file("graph.pickle"))
                self._live.changed((*changes.added, *changes.changed, *changes.removed),
                                   self._embed_pending)
            return changes

    def _embed_pending(self, max_chunks: int) -> None:
        """Embed the changed pages that still lack vectors (see vectors/live.py)."""
        if self._cache is None:
            return
        if self._live.catch_up(self._cache.pages, {p.path for p in self._cache.problems},
                               lambda: (self.embedding_provider(), self.vector_store()),
                               max_chunks):
            self._hybrid = None         # its answers carry the old note

    def _state_file(self, name: str) -> Path:
        return self.settings.state_dir / name

    def _pages(self) -> dict[str, Page]:
        if self._cache is None:
            self.sync()
        assert self._cache is not None
        return self._cache.pages

    @_query
    def vault(self) -> Vault:
        """The parsed wiki with its link resolver, current with the files on disk."""
        with self._lock:
            pages = self._pages()
            if self._vault is None:
                assert self._cache is not None
                self._vault = Vault(self.settings.wiki_dir, pages, self._cache.problems,
                                    moved_pages(moves_of(self.settings.state_dir)))
            return self._vault

    @_query
    def keyword_index(self) -> KeywordIndex:
        """The BM25 index over sections and pages, current with the wiki."""
        with self._lock:
            pages = self._pages()
            if self._keyword is None:
                self._keyword = open_keyword_index(pages, self._state_file("keyword.pickle"))
            return self._keyword

    @_query
    def graph(self) -> KnowledgeGraph:
        """The knowledge graph, current with the wiki."""
        with self._lock:
            pages = self._pages()
            if self._graph is None:
                self._graph = open_graph(pages, self._state_file("graph.pickle"),
                                         self.settings.graph)
            return self._graph

    def refresh(self) -> ChangeSet:
        """Bring every index up to date with the wiki now; returns what changed."""
        return self.sync()

    @_query
    def page(self, name: str) -> Page:
        """A page by path, title, alias or file name (NotFoundError with suggestions)."""
        return find_page(self._pages(), name)

    @_query
    def section(self, name: str, section_id: str) -> tuple[Page, Section]:
        """One section of a page."""
        page = self.page(name)
        section = page.section(section_id)
        if section is None:
            ids = ", ".join(s.id for s in page.sections) or "none"
            raise NotFoundError(f"{page.path} has no section '{section_id}'. Sections: {ids}.")
        return page, section

    @_query
    def extract(self, name: str, block: int = 1, language: str | None = None) -> Any:
        """The parsed fenced json/yaml data block of a page."""
        return extract_data(self.page(name), block, language, self.settings.raw_dir,
                            self.settings.paths.raw)

    @_query
    def url(self, name: str) -> str:
        """A stable address for a page (obsidian:// in an Obsidian vault, else file://)."""
        return page_url(self.settings.wiki_dir, self.page(name).path)

    @_query
    def links(self, name: str) -> dict[str, Any]:
        """Outgoing links with their resolution, and backlinks."""
        return self.vault().links_of(self.page(name))

    # -- search and graph ------------------------------------------------------------------
    @_query
    def search(self, query: str, limit: int = 10) -> list[SearchResult]:
        """Keyword (BM25) search: pages with their best section, snippet and why they matched;
        pages in the query's language first, as in hybrid search
        (``retrieval.other_language_factor``)."""
        with self._lock:
            index = self.keyword_index()
            pages = self._cache.pages if self._cache else {}
            hits = index.search(query, limit * 2)
            factor, lang = self.settings.retrieval.other_language_factor, query_language(query)
            hits = sorted((replace(h, score=h.score * language_weight(pages[h.path], lang,
                                                                      factor))
                           for h in hits), key=lambda h: (-h.score, h.path))
            return [explain(replace(h, rank=rank), pages[h.path], query)
                    for rank, h in enumerate(hits[:limit], 1)]

    @_query
    def related(self, name: str, depth: int = 1, direction: str = "both",
                links_only: bool = False) -> list[Neighbor]:
        """Pages within ``depth`` links (and shared tags, unless ``links_only``) of a page."""
        from .graph.build import EXTRACTED, INFERRED

        with self._lock:
            graph = self.graph()
            kinds = (EXTRACTED,) if links_only else (EXTRACTED, INFERRED)
            return neighbors(graph, self.page(name).path, depth, direction, kinds)  # type: ignore[arg-type]

    @_query
    def path(self, source: str, target: str, via_tags: bool = False) -> list[str]:
        """The shortest chain of links between two pages (NotFoundError when unconnected);
        ``via_tags``: shared tags count as steps too."""
        from .graph.build import EXTRACTED, INFERRED

        kinds = (EXTRACTED, INFERRED) if via_tags else (EXTRACTED,)
        with self._lock:
            return shortest_path(self.graph(), self.page(source).path, self.page(target).path,
                                 kinds=kinds)

    @_query
    def communities(self) -> list[Community]:
        """Louvain communities of the graph (deterministic for the configured seed)."""
        with self._lock:
            return detect_communities(self.graph())

    @_query
    def hubs(self, limit: int = 10):
        """The most connected pages."""
        with self._lock:
            return hubs(self.graph(), limit)

    @_query
    def orphans(self):
        """Pages with no links in or out."""
        with self._lock:
            return orphans(self.graph())

    # -- vectors and hybrid retrieval ---------------------------------------------------------
    def embedding_provider(self) -> Any:
        """The configured embedding provider (the local model loads on first use)."""
        with self._lock:
            if self._embedder is None:
                from .providers.embedding.factory import create_embedding_provider

                self._embedder = create_embedding_provider(self.settings)
            return self._embedder

    def vector_store(self) -> Any:
        """The configured vector store (StoreError naming the DSN when it cannot be reached)."""
        with self._lock:
            if self._store is None:
                from .stores.factory import create_store

                self._store = create_store(self.settings)
            return self._store

    def _vector_retriever(self) -> tuple[VectorRetriever | None, str | None]:
        """The vector retriever, or None and why (store down, nothing embedded yet)."""
        if self._vector is None:
            try:
                provider = self.embedding_provider()
                store = self.vector_store()
                if store.count(provider.model_version) == 0:
                    self._vector = (None, f"no vectors of {provider.model_version} yet; run "
                                          f"`mindgraph embed`")
                else:
                    self._vector = (VectorRetriever(provider, store), None)
            except MindgraphError as exc:
                self._vector = (None, str(exc))
            self._live.tried()
        return self._vector

    def _hybrid_retriever(self) -> HybridRetriever:
        if self._hybrid is None:
            vector, why = self._vector_retriever()
            self._live.in_use = self._live.in_use or vector is not None
            self._hybrid = HybridRetriever(self._pages(), self.keyword_index(), self.graph(),
                                           vector, self.settings.retrieval, vector_error=why,
                                           vector_note=self._live.note,
                                           **search_helpers(self.settings))
        return self._hybrid

    @_query
    def hybrid_retriever(self) -> HybridRetriever:
        """The hybrid retriever over the current wiki (for benchmarks and servers)."""
        return self._hybrid_retriever()

    @_query
    def plan_embed(self) -> Any:
        """What `embed` would do: chunks to embed, stale and removed ones (no model call).

        Pages that could not be read keep their stored vectors."""
        from .vectors.chunking import chunker_for
        from .vectors.sync import plan_sync

        provider = self.embedding_provider()
        store = self.vector_store()
        assert self._cache is not None
        pages = self._cache.pages
        keep = {p.path for p in self._cache.problems if p.path not in pages}
        return plan_sync([pages[p] for p in sorted(pages)], store,
                         self._planned_model_version(store), chunker_for(provider), keep=keep,
                         moved=self._live.moved(), memo_dir=self.settings.state_dir)

    def _planned_model_version(self, store: Any) -> str:
        from .providers.embedding.factory import planned_model_version

        planned = planned_model_version(self.settings)
        if planned is not None:
            return planned
        # A remote model of unconfigured width: the store may already know it; else ask once.
        cfg = self.settings.embedding
        prefix = f"{cfg.provider}:{cfg.model}:"
        known = [m for m in store.model_versions() if m.startswith(prefix)]
        return known[0] if len(known) == 1 else self.embedding_provider().model_version

    def embed(self, *, dry_run: bool = False, drop_other_models: bool = False,
              plan: Any = None, progress: Any = None) -> Any:
        """Embed new and changed sections, remove deleted ones; a re-run over unchanged pages
        makes no embedding call. Returns the SyncReport (``dropped`` lists removed models).

        The core lock is held only while the plan is taken and when the new vectors go live:
        queries keep being answered during the model calls (the stores are thread-safe)."""
        from .vectors.sync import apply_sync, report_of

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
        report = report_of(plan, store, dry_run=dry_run, deleted=deleted,
                           seconds=time.perf_counter() - started, refused=refused)
        if not dry_run:
            with self._lock:
                self._live.in_use = True    # from here on, keep changed pages embedded
                self.forget_vectors()
        return report, dropped

    @_query
    def trust_of(self, paths: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Each page's trust level, status and freshness (trust/answer.py)."""
        from .trust.answer import page_trust
        pages, today = self._pages(), self.trust.today()
        return {p: page_trust(pages[p], today) for p in paths if p in pages}

    @_query
    def smart_search(self, query: str, limit: int = 10,
                     options: SearchOptions | None = None) -> HybridResponse:
        """Hybrid search: intent router, keyword + vector fusion, graph boost, explanations.

        Never fails because the vector store is down: it answers from keywords and says so in
        the response's ``degradation``."""
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

    def context(self, situation: str, *, limit: int = 3,
                timeout_s: float | None = None) -> ContextBlock:
        """Top knowledge for a situation as a markdown block, within a hard time limit.

        Never raises: on a timeout or any error the block is empty and says why."""
        from .retrieval.context import context_within

        timeout = self.settings.serve.context_timeout_s if timeout_s is None else timeout_s
        return context_within(situation, lambda q: self.smart_search(q, max(limit, 5)),
                              timeout, limit, self.settings.serve.context_min_similarity)

    def close(self) -> None:
        """Flush and release the vector store (files or connections) and the wiki watch."""
        with self._lock:
            if self._cache is not None:
                self._cache.close()
            if self._store is not None:
                self._store.close()
                self._store = None
                self._vector = None
                self._hybrid = None

    def forget_vectors(self) -> None:
        """Drop the cached vector retriever (after `embed`, or to retry a store that was down)."""
        with self._lock:
            self._vector = None
            self._hybrid = None

    # -- compile -------------------------------------------------------------------------
    def ingest(self, *, provider: Any = None, dry_run: bool = False, force: bool = False,
               only: tuple[str, ...] = (), progress: Any = None) -> IngestReport:
        """Compile raw/ into wiki/ (offline or with the configured LLM), then re-sync indexes.

        Two ingests of one workspace must not run at once (the REST API refuses a second)."""
        from .ingest.pipeline import run_ingest

        # Outside the core lock: ingest only writes wiki/ (each file atomically) and its own
        # state, so queries go on meanwhile and see pages as they land.
        report = run_ingest(self.settings, provider=provider, dry_run=dry_run, force=force,
                            only=only, progress=progress)
        with self._lock:
            if self._cache is not None and not dry_run:
                self.sync()
        return report

    # -- reports -------------------------------------------------------------------------
    @_query
    def stats(self) -> dict[str, Any]:
        """Counts: pages, sections, links by kind and resolution, tags, raw files by state."""
        from .ingest.counts import workspace_stats
        vault = self.vault()
        return workspace_stats(vault, self.settings.state_dir, self._raw_visible,
                               trust=self.trust.mix(vault.pages.values()))

    @_query
    def check(self) -> CheckReport:
        """Lint the wiki, its trust records included (the mix, disputed pages); with scopes
        configured, also the pages no folder rule places."""
        vault = self.vault()
        return unscoped_findings(self.trust.with_trust(check_vault(vault, self.settings.raw_dir),
                                                       vault), self.scopes, vault.pages)

    def calibrate_recency(self, questions: Iterable[Any] = ()) -> "Fit":
        """The recency λ (and evergreen pages) the usage log and ``questions`` argue for."""
        from .calibrate.service import calibrate_recency
        return calibrate_recency(self.hybrid_retriever(), self.usage_log.lines(), questions,
                                 self.settings.retrieval.recency_lambda)

    @property
    def propagation(self) -> "PropagationService":
        """Fact propagation behind approval (mindgraph/propagate/)."""
        from .propagate.service import PropagationService
        return PropagationService(self.vault, self.settings)

    def lint(self, judge: str = "auto") -> "LintReport":
        """What a careful editor would flag in the wiki (mindgraph/lint/), read-only."""
        from .lint.service import lint_workspace
        return lint_workspace(self.vault(), self.settings, judge)  # type: ignore[arg-type]

    def coverage(self, codebase: str | Path, *, service_level: bool = False,
                 excludes: tuple[str, ...] = (), default_excludes: bool = True,
                 min_mentions: int = 1,
                 semantic_threshold: float | None = None) -> CoverageReport:
        """How much of ``codebase`` the wiki refers to; with ``semantic_threshold``, also which
        units' docstrings are that close (cosine) to a section's stored vector."""
        from .coverage.report import measure_coverage
        from .coverage.semantic import find_semantic_links
        from .coverage.units import DEFAULT_EXCLUDES, discover_units

        patterns = tuple(excludes) + (DEFAULT_EXCLUDES if default_excludes else ())
        units = discover_units(Path(codebase), patterns, service_level, skipped := list[str]())
        if not units:   # a gate over nothing would pass: 0/0 is not 100%
            raise InputError(f"{codebase} holds no source files to measure (.py, .ts, .go, "
                             f".rs, ... outside the excludes). Pass the folder of the code, "
                             f"e.g. `mindgraph coverage src`.")
        with self._lock:    # only now: a slow read of the code must not hold every query
            pages = dict(self.vault().pages)
            found = None if semantic_threshold is None else find_semantic_links(
                units, self.embedding_provider(), self.vector_store(), semantic_threshold,
                pages=pages)
        return measure_coverage(units, pages.values(), codebase=str(codebase),
                                level="service" if service_level else "module",
                                min_mentions=min_mentions,
                                semantic=found.links if found else None,
                                semantic_model=found.model_version if found else "",
                                semantic_threshold=semantic_threshold,
                                notes=(*skipped, *(found.notes if found else ())))

    # -- scopes --------------------------------------------------------------------------
    _raw_visible: Callable[[str], bool] | None = None    # a view's filters (scopes/views.py)
    _note_visible: Callable[[str, Page], bool] | None = None

    @functools.cached_property
    def scopes(self) -> Scopes:
        """Identities and the folder → tenant/scope mapping (mindgraph/scopes/)."""
        return load_scopes(self.settings)

    def as_identity(self, identity: Identity) -> "Mindgraph":
        """The workspace as ``identity`` sees it: this core for the local identity (or when
        no identities are configured), else a view's core sharing this one's model and store."""
        if identity.is_local or not self.scopes.enabled:
            return self
        return self._views.get(View(identity, self.scopes.mapping),
                               lambda view: ScopedMindgraph(self, view))

    @functools.cached_property
    def _views(self) -> ViewRegistry:
        return ViewRegistry()

    def timeline(self, concept: str, *, since: dt.date | None = None,
                 until: dt.date | None = None, newest_first: bool = False,
                 limit: int | None = None, use_git: bool = True) -> Timeline:
        """Dated notes (raw and wiki) that mention ``concept``, in date order."""
        from .timeline.build import build_timeline

        s = self.settings
        return build_timeline(concept, [("raw", s.raw_dir), ("wiki", s.wiki_dir)], since=since,
                              until=until, newest_first=newest_first, limit=limit, use_git=use_git,
                              limits=PageLimits.of(s.limits), state_dir=s.state_dir,
                              visible=self._note_visible)


class ScopedMindgraph(ScopedQueries, Mindgraph):
    """The workspace as one identity sees it (built by ``Mindgraph.as_identity``)."""
