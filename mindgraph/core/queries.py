"""Read queries over the warm indexes: pages, sections, links, keyword search, the graph and
the trust of results (mixed into ``Mindgraph``)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import NotFoundError
from .indexes import WarmIndexes, query

if TYPE_CHECKING:
    from ..graph.communities import Community
    from ..graph.query import Neighbor
    from ..page.model import Page, Section
    from ..retrieval.explain import SearchResult


class Queries(WarmIndexes):
    """Pages, search and graph queries, each a call into its package."""

    @query
    def page(self, name: str) -> Page:
        """A page by path, title, alias or file name (NotFoundError with suggestions)."""
        from ..ingest.failed_notes import failed_note_named, failed_notes, failure_text
        from ..page.lookup import find_page

        pages = self._pages()
        try:
            return find_page(pages, name)
        except NotFoundError as exc:
            if not str(exc).startswith("No page named"):
                raise
            if not pages and not self._scoped():
                from ..ingest.no_pages import why_no_pages

                # "compile the notes first" of a raw folder holding none sent people to
                # run an ingest that compiles nothing
                raise NotFoundError(f"No page named '{name.strip()}'. "
                                    f"{why_no_pages(self.settings)}") from None
            failed = failed_notes(self.settings.state_dir, self._raw_visible,
                                  self.settings.raw_dir)
            raw = failed_note_named(failed, name)
            if raw is None:
                raise
            raise NotFoundError(f"No page named '{name.strip()}'. "
                                + failure_text(raw, failed[raw], self.settings.paths.raw)
                                ) from None

    def _scoped(self) -> bool:
        """True for an identity's view (its empty view says nothing of the wiki)."""
        from .workspace import ScopedMindgraph

        return isinstance(self, ScopedMindgraph)

    @query
    def section(self, name: str, section_id: str) -> tuple[Page, Section]:
        """One section of a page."""
        page = self.page(name)
        section = page.section(section_id)
        if section is None:
            ids = ", ".join(s.id for s in page.sections) or "none"
            raise NotFoundError(f"{page.path} has no section '{section_id}'. Sections: {ids}.")
        return page, section

    @query
    def extract(self, name: str, block: int = 1, language: str | None = None) -> Any:
        """The parsed fenced json/yaml data block of a page."""
        from ..page.data import extract_data

        return extract_data(self.page(name), block, language, self.settings.raw_dir,
                            self.settings.paths.raw)

    @query
    def url(self, name: str) -> str:
        """A stable address for a page: obsidian:// when wiki/ or a folder above it holds a
        .obsidian folder (page/address.py), else file://."""
        from ..page.address import page_url

        return page_url(self.settings.wiki_dir, self.page(name).path)

    @query
    def links(self, name: str) -> dict[str, Any]:
        """Outgoing links with their resolution, and backlinks."""
        return self.vault().links_of(self.page(name))

    @query
    def query_language(self, query: str) -> str:
        """``query``'s language in these pages, as search answers it (a query of Han alone
        is Japanese in a Japanese vault: retrieval/query_language.py)."""
        from ..retrieval.query_language import query_language_in

        return query_language_in(query, self._page_languages)

    @query
    def search(self, query: str, limit: int = 10, why: bool = True, localized: bool = False
               ) -> list[SearchResult]:
        """Keyword (BM25) search: pages with their best section, snippet and why they matched
        (``why=False``: not which words in which field; ``localized``: said in the query's
        language, for a reader: text/answer_labels.py); pages in the query's language
        first, as in hybrid search (``retrieval.other_language_factor``; a query of Han
        alone is Japanese in a Japanese vault, as there: retrieval/query_language.py)."""
        from ..retrieval.explain import explain, query_words
        from ..retrieval.present import language_weight
        from ..retrieval.query_language import query_language_in
        from ..retrieval.subwords import speaks

        from ..text.cjk import one_query

        with self._lock, one_query():       # the query's runs cut once, for this answer only
            index = self.keyword_index()
            pages = self._cache.pages if self._cache else {}
            retrieval = self.settings.retrieval
            lang = query_language_in(query, self._page_languages)
            subwords = index.subword_terms(query, retrieval.subword_chars) \
                if retrieval.subword_weight > 0 else {}
            if subwords and not speaks(lang, self._page_languages()):
                subwords = {}
            hits = index.search(query, limit * 2, concepts=index.subword_concepts(
                subwords, retrieval.subword_weight))
            factor = retrieval.other_language_factor
            hits = sorted((replace(h, score=h.score * language_weight(pages[h.path], lang,
                                                                      factor))
                           for h in hits), key=lambda h: (-h.score, h.path))
            words = query_words(query)      # once: every hit explains the same query
            return [explain(replace(h, rank=rank), pages[h.path], query, why,
                            index.embedded.get((h.path, h.section_id or ""), ()), subwords,
                            words, lang if localized else "en")
                    for rank, h in enumerate(hits[:limit], 1)]

    @query
    def trust_of(self, paths: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Each page's trust level, status and freshness (trust/answer.py)."""
        from ..trust.answer import page_trust
        from ..trust.evidence_drift import EvidenceFiles
        from ..trust.freshness import utc_today

        pages, today = self._pages(), utc_today()
        s = self.settings
        files = EvidenceFiles(s.raw_dir, s.wiki_dir, s.trust.fetch_max_bytes)
        return {p: page_trust(pages[p], today, files) for p in paths if p in pages}

    @query
    def related(self, name: str, depth: int = 1, direction: str = "both",
                links_only: bool = False) -> list[Neighbor]:
        """Pages within ``depth`` links (and shared tags, unless ``links_only``) of a page."""
        from ..graph.build import EXTRACTED, INFERRED
        from ..graph.query import neighbors

        with self._lock:
            graph = self.graph()
            kinds = (EXTRACTED,) if links_only else (EXTRACTED, INFERRED)
            return neighbors(graph, self.page(name).path, depth, direction, kinds)  # type: ignore[arg-type]

    @query
    def path(self, source: str, target: str, via_tags: bool = False) -> list[str]:
        """The shortest chain of links between two pages (NotFoundError when unconnected);
        ``via_tags``: shared tags count as steps too."""
        return self.path_with_steps(source, target, via_tags)["path"]

    @query
    def path_with_steps(self, source: str, target: str, via_tags: bool = False
                        ) -> dict[str, Any]:
        """``path`` and how each step is joined, as REST and MCP answer it: {"path": pages,
        "steps": [{"from", "to", "direction"}]}, direction "out" (the page links the next),
        "in" (the next links it: the chain walks that link backwards), "both" or "tag"."""
        from ..graph.build import EXTRACTED, INFERRED
        from ..graph.query import shortest_path, step_directions

        kinds = (EXTRACTED, INFERRED) if via_tags else (EXTRACTED,)
        # one snapshot: a refresh applies to the graph in place, so the steps are labelled
        # under the same hold of the lock the chain was found in (else a link dropped
        # meanwhile reads "tag")
        with self._lock:
            graph = self.graph()
            found = shortest_path(graph, self.page(source).path, self.page(target).path,
                                  kinds=kinds)
            ways = step_directions(graph, found, kinds)
        return {"path": found, "steps": [{"from": a, "to": b, "direction": way}
                                         for a, b, way in zip(found, found[1:], ways)]}

    @query
    def communities(self, min_size: int = 1) -> list[Community]:
        """Leiden communities of the graph (deterministic for the configured seed), those of
        fewer than ``min_size`` pages left out (a page with no links is a community of one)."""
        from ..graph.communities import detect_communities

        with self._lock:
            return [c for c in detect_communities(self.graph()) if c.size >= min_size]

    @query
    def hubs(self, limit: int = 10):
        """The most connected pages."""
        from ..graph.query import hubs

        with self._lock:
            return hubs(self.graph(), limit)

    @query
    def orphans(self):
        """Pages with no links in or out."""
        from ..graph.query import orphans

        with self._lock:
            return orphans(self.graph())
