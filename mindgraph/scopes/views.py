"""One identity's workspace: the pages its view sees, and a core that answers over them only.

The cheapest correct way to enforce visibility in every read path is to never hand an engine
a page the caller may not see: a view's core gets its own page set (``ViewPages``) and builds
its own keyword index, graph and hybrid retriever over it, while sharing the workspace's
embedding model and vector store (whose queries it restricts to its pages). So search,
fusion and the graph boost, get/section/extract, links and backlinks, related and path,
communities and hubs, stats and coverage see one view — and an unknown page gets the same
"no page named X" whether X exists in another scope or not, because for this core it does not.

Links: a page in the view keeps every link it was written with, and the view's own resolver
(over its pages alone) resolves them. So a link to a page the caller does not see — another
scope's, another tenant's — is "missing", a broken link, in exactly the words of a link to a
page that does not exist: which of the two it is shows nowhere (links, check, stats, graph).
The link's text is the caller's to read anyway (it is in the page). Backlinks come only from
pages in the view. Views are cached per distinct view (tenant, agent, teams) and follow
the workspace's page cache: a view recomputes when the workspace's pages changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from ..errors import Forbidden
from ..page.cache import ChangeSet
from ..page.rawlines import source_paths
from ..page.model import Page
from ..page.vault import PageProblem, Vault
from .identity import Identity
from .view import View


PENDING_NOTE = ("some changed pages are not embedded yet; vector results may miss them until "
                "`mindgraph embed` runs")


def visible_pages(vault: Vault, view: View) -> dict[str, Page]:
    """The pages of ``vault`` that ``view`` sees, each as written: a link to a page the view
    does not see stays, and resolves (in the view) as a link to no page does."""
    if view.identity.is_local:
        return dict(vault.pages)
    return {path: page for path, page in vault.pages.items() if view.sees(page)}


class ViewPages:
    """A page source for a view's core (the interface of ``PageCache`` it uses): the view's
    pages, recomputed when the workspace's vault changes."""

    def __init__(self, source: Callable[[], Vault], view: View):
        self._source = source
        self.view = view
        self._seen: Vault | None = None
        self._pages: dict[str, Page] = {}
        self._problems: list[PageProblem] = []

    @property
    def pages(self) -> dict[str, Page]:
        """The pages the view sees, by path."""
        return self._pages

    @property
    def problems(self) -> list[PageProblem]:
        """Problems of files the view would see."""
        return self._problems

    def refresh(self, save: bool = True) -> ChangeSet:
        """Follow the workspace: the view's pages added, changed and removed since last time
        (``save`` as PageCache.refresh's: a view's pages are the workspace's, nothing to save)."""
        vault = self._source()
        if vault is self._seen:
            return ChangeSet()
        self._seen = vault
        new, old = visible_pages(vault, self.view), self._pages
        changes = ChangeSet(tuple(sorted(new.keys() - old.keys())),
                            tuple(sorted(p for p in new.keys() & old.keys()
                                         if new[p].content_hash != old[p].content_hash)),
                            tuple(sorted(old.keys() - new.keys())))
        self._pages = {p: (old[p] if p in old and p not in changes.changed else page)
                       for p, page in new.items()}
        self._problems = [x for x in vault.problems
                          if x.path in new or (x.path not in vault.pages
                                               and self.view.sees_path(x.path))]
        return changes

    def close(self) -> None:
        """Nothing to release: the workspace's cache does the watching."""


class ScopedQueries:
    """Mixin for a view's core (``core.ScopedMindgraph``): the same queries over one view's
    pages, with the workspace's model and vector store, and no writes."""

    def __init__(self, base: Any, view: View):
        super().__init__(base.settings, auto_refresh=True)  # type: ignore[call-arg]
        self._base, self.view = base, view
        self._lock = base._lock           # one lock: a view reads the base's pages
        self._cache = ViewPages(base.vault, view)
        self._vector_of: Any = None

    @property
    def identity(self) -> Identity:
        """Who this core answers for."""
        return self.view.identity

    def _state_file(self, name: str) -> Path:
        # the view's own indexes, next to the workspace's
        key = hashlib.sha256(repr(self.view.key).encode()).hexdigest()[:16]
        folder = self._base.settings.state_dir / "views" / key
        folder.mkdir(parents=True, exist_ok=True)
        return folder / name

    def embedding_provider(self) -> Any:
        """The workspace's embedding provider."""
        return self._base.embedding_provider()

    def vector_store(self) -> Any:
        """The workspace's vector store."""
        return self._base.vector_store()

    def _vector_retriever(self) -> tuple[Any, str | None]:
        vector, why = self._base._vector_retriever()
        if vector is None:
            return None, why
        # the workspace keeps changed pages embedded once vectors answer (vectors/live.py):
        # an identity's search counts (else a page created through POST /documents, or any
        # page changed while only identities searched, was never embedded)
        self._base._live.in_use = True
        return vector.within(self._cache.pages, self.view.key, self._page_languages), why

    def _hybrid_retriever(self) -> Any:
        current = self._base._vector
        if current is not self._vector_of:    # the workspace embedded or retried its store
            self._vector_of, self._hybrid = current, None
        # the workspace's note counts and names pages of every scope: say only that it exists
        note = PENDING_NOTE if self._base._live.note else None
        if note != self._live.note:
            self._live.note, self._hybrid = note, None
        return super()._hybrid_retriever()  # type: ignore[misc]

    def _embed_pending(self, max_chunks: int) -> None:
        self._base._embed_pending(max_chunks)     # the workspace embeds what changed

    @property
    def usage_log(self) -> Any:
        """The workspace's usage log, as this identity's: its lines only, marked with it."""
        return replace(self._base.usage_log, identity=self.identity.name)

    def forget_vectors(self) -> None:
        """Drop the cached retrievers (the workspace's vectors changed)."""
        with self._lock:
            self._hybrid = None

    def prepare_query(self, query: str) -> None:
        """Embed ``query`` ahead of time, into this view's part of the query cache (nothing
        before its first search has built its retriever; never raises)."""
        vector = getattr(self._hybrid, "vector", None)
        if vector is not None:
            with contextlib.suppress(Exception):
                vector.embed_query(query)

    def _sources(self) -> set[str]:
        """The raw notes the view's pages were compiled from."""
        return {source for page in self.vault().pages.values()
                for source in source_paths(page.frontmatter)}

    @property
    def _raw_visible(self) -> Callable[[str], bool]:
        """Which raw notes (paths relative to raw/) the view counts: its folders' notes and
        the sources of its pages."""
        sources, view = self._sources(), self.view
        return lambda path: path in sources or view.sees_path(path)

    @property
    def _note_visible(self) -> Callable[[str, Page], bool]:
        """Which notes a timeline may show: the view's wiki pages, and the raw notes of its
        folders (frontmatter rules included) or behind its pages."""
        sources, view, pages = self._sources(), self.view, self.vault().pages
        return lambda folder, page: page.path in pages if folder == "wiki" else (
            page.path in sources or view.sees_path(page.path, page.frontmatter))

    def ingest(self, **_: Any) -> Any:
        """Refused: compiling writes the whole workspace."""
        raise Forbidden(f"{self.identity.name} may not compile the workspace; only the local "
                        f"identity may (run `mindgraph ingest` on the server).")

    def embed(self, **_: Any) -> Any:
        """Refused: embedding writes the whole workspace's vectors."""
        raise Forbidden(f"{self.identity.name} may not embed the workspace; only the local "
                        f"identity may (run `mindgraph embed` on the server).")

    @property
    def propagation(self) -> Any:
        """Refused: propagation plans span the workspace and write its pages."""
        raise Forbidden(f"{self.identity.name} may not see or apply fact propagation: its plans "
                        f"span every scope and write the wiki; only the local identity may.")

    def close(self) -> None:
        """Nothing to release: the workspace owns the store."""


class ViewRegistry:
    """One view core per identity, built on first use (identities that see the same pages
    share their indexes' files)."""

    def __init__(self) -> None:
        self._cores: dict[Identity, Any] = {}
        self._lock = threading.Lock()

    def get(self, view: View, build: Callable[[View], Any]) -> Any:
        """The core of ``view`` (built with ``build`` the first time)."""
        with self._lock:
            core = self._cores.get(view.identity)
            if core is None:
                core = self._cores[view.identity] = build(view)
            return core


__all__ = ["ScopedQueries", "ViewPages", "ViewRegistry", "visible_pages"]
