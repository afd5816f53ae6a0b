"""The warm derived state of a workspace: the page cache, and the vault, keyword index and
graph kept in step with it, under one lock.

Every public query runs through ``query`` (the lock, and one sync with the files per
outermost call). The keyword index and the graph are opened on first use only, so a keyword
search never loads the graph and a graph query never loads the keyword index.

Each sync that changed something saves the page cache, the keyword index and the graph under
.mindgraph, for the next process. At 100,000 notes those files are 0.3-0.8 GB each and their
saves take seconds: a long-running process that changes pages often (the watcher) sets
``defer_saves``, so a change is searchable as soon as the indexes in memory have it, and
calls ``save_state`` when it is idle (and ``close`` does). The files are caches checked
against the wiki when loaded, so one left stale by a crash costs the next start only the
pages changed since.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from ..config import Settings
from ..fsutil import keep_file_digests, writable, writes_allowed

if TYPE_CHECKING:
    from collections import Counter

    from ..graph.build import KnowledgeGraph
    from ..page.cache import ChangeSet, PageCache
    from ..page.model import Page
    from ..page.vault import Vault
    from ..retrieval.keyword import KeywordIndex

T = TypeVar("T")


def query(method: Callable[..., T]) -> Callable[..., T]:
    """Run a public query under the lock, syncing with the files once per outermost call."""

    @functools.wraps(method)
    def wrapper(self: "WarmIndexes", *args: Any, **kwargs: Any) -> T:
        with self._lock:
            self._depth += 1
            try:
                if self._depth == 1 and (self._cache is None or self.auto_refresh):
                    self.sync()
                return method(self, *args, **kwargs)
            finally:
                self._depth -= 1

    return wrapper


class WarmIndexes:
    """The page cache and the indexes derived from it (mixed into ``Mindgraph``)."""

    settings: Settings

    def __init__(self, settings: Settings, *, auto_refresh: bool = True):
        self.settings = settings
        self.auto_refresh = auto_refresh
        keep_file_digests(settings.state_dir)      # pinned model and dictionary files
        self._lock = threading.RLock()
        self._cache: PageCache | None = None
        self._vault: Vault | None = None
        self._keyword: KeywordIndex | None = None
        self._graph: KnowledgeGraph | None = None
        # how many pages are in each language (for a query of Han alone), read on first use
        self._languages: Counter[str] | None = None
        self._depth = 0
        self.defer_saves = False
        self._save_state_files = True
        self._unsaved: set[str] = set()     # state files behind memory (``defer_saves``)

    @property
    def save_state_files(self) -> bool:
        """False: nothing is written under the state folder (a dry run, in this object or
        within ``fsutil.writing_nothing`` in this thread; a read-only filesystem): the
        indexes live in memory for this process only."""
        return self._save_state_files and writes_allowed()

    @save_state_files.setter
    def save_state_files(self, save: bool) -> None:
        self._save_state_files = save

    def sync(self) -> ChangeSet:
        """Re-read wiki files that changed on disk and update every derived index.

        Called before each query (unless ``auto_refresh`` is off), so a page edited by a
        person or by ``mindgraph ingest`` is visible to the next query that could see it.
        """
        with self._lock:
            if self._cache is None:
                from ..page.cache import open_pages
                from ..page.vault import PageLimits

                self.settings.require_wiki()
                if self.save_state_files and not writable(self.settings.state_dir):
                    # a read-only state folder (a mounted snapshot, a shared copy): answer
                    # from memory rather than fail on the first cache file written
                    self.save_state_files = False
                self._cache, changes = open_pages(
                    self.settings.wiki_dir, self.settings.state_dir,
                    self.settings.serve.watch_wiki, PageLimits.of(self.settings.limits),
                    save=self.save_state_files)
            else:
                changes = self._cache.refresh(save=not self.defer_saves and
                                              self.save_state_files)
            if changes:
                self._vault = self._languages = None
                pages = self._cache.pages
                if self._keyword is not None:
                    self._keyword.apply(pages, changes.added, changes.changed, changes.removed)
                    self._unsaved.add("keyword")
                if self._graph is not None:
                    self._graph.apply(pages, changes.added, changes.changed, changes.removed)
                    self._unsaved.add("graph")
                if self.defer_saves or not self.save_state_files:
                    self._unsaved.add("pages")
                else:
                    self.save_state()
                self._pages_changed((*changes.added, *changes.changed, *changes.removed))
            return changes

    @property
    def unsaved_state(self) -> bool:
        """True when a state file under .mindgraph is behind memory (``defer_saves``)."""
        return bool(self._unsaved)

    def save_state(self) -> None:
        """Write the state files that are behind memory (the page cache, the keyword index,
        the graph)."""
        with self._lock:
            if not self.save_state_files:
                return
            if "pages" in self._unsaved and self._cache is not None:
                self._cache.save()
            if "keyword" in self._unsaved and self._keyword is not None:
                self._keyword.save(self._state_file("keyword.pickle"))
            if "graph" in self._unsaved and self._graph is not None:
                self._graph.save(self._state_file("graph.pickle"))
            self._unsaved.clear()

    def _pages_changed(self, touched: tuple[str, ...]) -> None:
        """Hook: pages were added, changed or removed (the vectors follow them)."""

    def _state_file(self, name: str) -> Path:
        return self.settings.state_dir / name

    def _page_languages(self) -> Counter[str]:
        """How many pages are in each language (counted once per state of the pages: a
        query of Han alone asks, query_language.py)."""
        from ..retrieval.query_language import vault_languages

        if self._languages is None:
            self._languages = vault_languages(self._pages().values())
        return self._languages

    def _pages(self) -> dict[str, Page]:
        if self._cache is None:
            self.sync()
        assert self._cache is not None
        return self._cache.pages

    @query
    def current_pages(self) -> dict[str, Page]:
        """The parsed pages by path, current with the wiki (do not modify): no vault nor link
        resolver is built for them (at 100,000 notes that takes seconds)."""
        return self._pages()

    @query
    def vault(self) -> Vault:
        """The parsed wiki with its link resolver, current with the files on disk."""
        with self._lock:
            pages = self._pages()
            if self._vault is None:
                from ..ingest.moves import moved_pages, moves_of
                from ..page.vault import Vault

                assert self._cache is not None
                self._vault = Vault(self.settings.wiki_dir, pages, self._cache.problems,
                                    moved_pages(moves_of(self.settings.state_dir)))
            return self._vault

    @query
    def keyword_index(self) -> KeywordIndex:
        """The BM25 index over sections and pages, current with the wiki."""
        with self._lock:
            pages = self._pages()
            if self._keyword is None:
                from ..retrieval.keyword import KeywordParams, open_keyword_index

                index = self.settings.index
                params = KeywordParams(embed_chars=index.embed_max_chars
                                       if index.expand_embeds else 0)
                self._keyword = open_keyword_index(pages, self._state_file("keyword.pickle"),
                                                   params, save=self.save_state_files)
            return self._keyword

    @query
    def graph(self) -> KnowledgeGraph:
        """The knowledge graph, current with the wiki."""
        with self._lock:
            pages = self._pages()
            if self._graph is None:
                from ..graph.build import open_graph

                self._graph = open_graph(pages, self._state_file("graph.pickle"),
                                         self.settings.graph, save=self.save_state_files)
            return self._graph

    def refresh(self) -> ChangeSet:
        """Bring every index up to date with the wiki now; returns what changed."""
        return self.sync()
