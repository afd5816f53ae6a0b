"""The composition root: one object that wires settings, stores, providers and engines.

Only the entry points (CLI, REST, MCP) build a ``Mindgraph``; everything below receives what
it needs through arguments. The object keeps derived state warm between calls (a server
holds one for its lifetime) and refreshes it from disk when wiki files change, under a lock,
so concurrent requests never see a half-updated index.
"""

from __future__ import annotations

import datetime as dt
import functools
import threading
from collections import Counter
from pathlib import Path
from typing import Any, Callable, TypeVar

from .config import Settings, load_settings
from .coverage.report import CoverageReport, measure_coverage
from .coverage.units import DEFAULT_EXCLUDES, discover_units
from .errors import NotFoundError
from .page.address import page_url
from .page.check import CheckReport, check_vault
from .page.data import extract_data
from .page.lookup import find_page
from .graph.build import KnowledgeGraph, open_graph
from .ingest.pipeline import run_ingest
from .ingest.report import IngestReport
from .ingest.state import STATE_FILENAME, IngestState
from .graph.communities import Community, detect_communities
from .graph.query import Neighbor, hubs, neighbors, orphans, shortest_path
from .page.cache import ChangeSet, PageCache, open_pages
from .page.model import Page, Section
from .page.vault import Vault
from .retrieval.explain import SearchResult, explain
from .retrieval.keyword import KeywordIndex, open_keyword_index
from .timeline.build import Timeline, build_timeline
from .usage import UsageLog

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

    @classmethod
    def open(cls, base_dir: str | Path = ".", config: str | Path | None = None) -> "Mindgraph":
        """Load settings from ``base_dir``/mindgraph.yml (or ``config``) and wire everything."""
        return cls(load_settings(base_dir, config))

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
                if not self.settings.wiki_dir.is_dir():
                    raise NotFoundError(f"Wiki folder {self.settings.wiki_dir} does not exist. "
                                        f"Run `mindgraph ingest` first or set paths.wiki.")
                self._cache, changes = open_pages(self.settings.wiki_dir,
                                                  self.settings.state_dir)
            else:
                changes = self._cache.refresh()
            if changes:
                self._vault = None
                pages = self._cache.pages
                if self._keyword is not None:
                    self._keyword.apply(pages, changes.added, changes.changed, changes.removed)
                    self._keyword.save(self._state_file("keyword.pickle"))
                if self._graph is not None:
                    self._graph.apply(pages, changes.added, changes.changed, changes.removed)
                    self._graph.save(self._state_file("graph.pickle"))
            return changes

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
                self._vault = Vault(self.settings.wiki_dir, pages, self._cache.problems)
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
        return extract_data(self.page(name), block, language)

    @_query
    def url(self, name: str) -> str:
        """A stable address for a page (obsidian:// in an Obsidian vault, else file://)."""
        return page_url(self.settings.wiki_dir, self.page(name).path)

    @_query
    def links(self, name: str) -> dict[str, Any]:
        """Outgoing links with their resolution, and backlinks."""
        vault = self.vault()
        page = self.page(name)
        outgoing = []
        for link in page.links:
            result = vault.resolve(link, page.path)
            outgoing.append({"target": link.target, "heading": link.heading,
                             "block": link.block, "line": link.line, "syntax": link.syntax,
                             "relation": link.relation, "status": result.status,
                             "page": result.target,
                             "candidates": [] if result.status == "resolved"
                             else list(result.candidates)})
        backlinks = [{"page": src.path, "line": link.line, "section": link.section_id,
                      "relation": link.relation}
                     for src, link, result in vault.resolved_links()
                     if result.status == "resolved" and result.target == page.path
                     and src.path != page.path]
        return {"page": page.path, "outgoing": outgoing, "backlinks": backlinks}

    # -- search and graph ------------------------------------------------------------------
    @_query
    def search(self, query: str, limit: int = 10) -> list[SearchResult]:
        """Keyword (BM25) search: pages with their best section, snippet and why they matched."""
        with self._lock:
            index = self.keyword_index()
            pages = self._cache.pages if self._cache else {}
            return [explain(hit, pages[hit.path], query) for hit in index.search(query, limit)]

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
    def path(self, source: str, target: str) -> list[str]:
        """The shortest chain of pages between two pages (NotFoundError when unconnected)."""
        with self._lock:
            return shortest_path(self.graph(), self.page(source).path, self.page(target).path)

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

    # -- compile -------------------------------------------------------------------------
    def ingest(self, *, provider: Any = None, dry_run: bool = False, force: bool = False,
               only: tuple[str, ...] = (), progress: Any = None) -> IngestReport:
        """Compile raw/ into wiki/ (offline or with the configured LLM), then re-sync indexes."""
        with self._lock:
            report = run_ingest(self.settings, provider=provider, dry_run=dry_run, force=force,
                                only=only, progress=progress)
            if self._cache is not None and not dry_run:
                self.sync()
            return report

    # -- reports -------------------------------------------------------------------------
    @_query
    def stats(self) -> dict[str, Any]:
        """Counts: pages, sections, links by kind and resolution, tags, raw files by state."""
        vault = self.vault()
        pages = vault.pages
        links: Counter[str] = Counter()
        resolution: Counter[str] = Counter()
        for _, link, result in vault.resolved_links():
            links[link.syntax if link.relation == "wikilink" else link.relation] += 1
            resolution[result.status] += 1
        tags: Counter[str] = Counter(t.lower() for p in pages.values() for t in p.tags)
        state = IngestState.load(self.settings.state_dir / STATE_FILENAME)
        raw_states = Counter(record.status for record in state.files.values())
        return {"wiki": str(self.settings.wiki_dir), "pages": len(pages),
                "sections": sum(len(p.sections) for p in pages.values()),
                "links": {"total": sum(links.values()), "by_kind": dict(links.most_common()),
                          "by_resolution": dict(resolution.most_common())},
                "tags": {"distinct": len(tags),
                         "top": [{"tag": t, "pages": n} for t, n in tags.most_common(10)]},
                "problems": len(vault.problems),
                "raw": {"files": len(state.files), "by_state": dict(raw_states.most_common())}}

    @_query
    def check(self) -> CheckReport:
        """Lint the wiki."""
        return check_vault(self.vault())

    @_query
    def coverage(self, codebase: str | Path, *, service_level: bool = False,
                 excludes: tuple[str, ...] = (), default_excludes: bool = True,
                 min_mentions: int = 1) -> CoverageReport:
        """How much of ``codebase`` the wiki refers to."""
        patterns = tuple(excludes) + (DEFAULT_EXCLUDES if default_excludes else ())
        units = discover_units(Path(codebase), patterns, service_level)
        return measure_coverage(units, self.vault().pages.values(), codebase=str(codebase),
                                level="service" if service_level else "module",
                                min_mentions=min_mentions)

    def timeline(self, concept: str, *, since: dt.date | None = None,
                 until: dt.date | None = None, newest_first: bool = False,
                 limit: int | None = None, use_git: bool = True) -> Timeline:
        """Dated notes (raw and wiki) that mention ``concept``, in date order."""
        return build_timeline(concept, [("raw", self.settings.raw_dir),
                                        ("wiki", self.settings.wiki_dir)],
                              since=since, until=until, newest_first=newest_first,
                              limit=limit, use_git=use_git)
