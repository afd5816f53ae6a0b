"""The cross-lingual question set: questions asked over only the pages of another language.

A vault that holds the same pages in several languages matches them by frontmatter
``permalink`` (the Obsidian Help vault: 173 pages in en, ja and zh). ``--cross-lingual ja``
keeps the wiki's Japanese pages only (the language read from each page's letters), asks every
question that is not in Japanese over them, and counts the Japanese counterpart of each
relevant page as the answer. A question none of whose pages has a counterpart there is left
out (and counted). The vault is a real one-language vault for each retriever: BM25 statistics
and the graph are built from its pages alone, and the vector side searches only their vectors.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Collection, Mapping

import numpy as np

from ..config import Settings
from ..graph.build import KnowledgeGraph
from ..page.model import Page
from ..retrieval.datasets import Question
from ..retrieval.hybrid import HybridRetriever
from ..retrieval.keyword import KeywordIndex
from ..retrieval.present import page_language
from ..retrieval.query_language import languages_of
from ..retrieval.vector import VectorRetriever
from ..stores.base import VectorHit


class PagesOnly:
    """A vector store seen through a filter: only ``pages`` exist."""

    def __init__(self, store: Any, pages: Collection[str]):
        self._store = store
        self._pages = frozenset(pages)

    def query(self, vector: np.ndarray, k: int, model_version: str, *,
              scopes: Collection[str] | None = None,
              pages: Collection[str] | None = None) -> list[VectorHit]:
        """The store's answer among the kept pages."""
        within = self._pages if pages is None else self._pages & set(pages)
        return self._store.query(vector, k, model_version, scopes=scopes, pages=within)

    def count_within(self, model_version: str, *, scopes: Collection[str] | None = None,
                     pages: Collection[str] | None = None) -> int:
        """The store's count among the kept pages."""
        within = self._pages if pages is None else self._pages & set(pages)
        return self._store.count_within(model_version, scopes=scopes, pages=within)

    def part_counts(self, model_version: str, *, scopes: Collection[str] | None = None,
                    pages: Collection[str] | None = None) -> tuple[int, ...] | None:
        """Each routed model's count among the kept pages (None: the store does not say)."""
        counts = getattr(self._store, "part_counts", None)
        within = self._pages if pages is None else self._pages & set(pages)
        return None if counts is None else counts(model_version, scopes=scopes, pages=within)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def permalink(page: Page) -> str | None:
    """The page's frontmatter permalink (what its translations share), if any."""
    value = page.frontmatter.get("permalink")
    return str(value).strip().strip("/") if value else None


def language_pages(pages: Mapping[str, Page], lang: str) -> dict[str, Page]:
    """The pages written in ``lang``."""
    return {path: page for path, page in pages.items() if page_language(page) == lang}


def cross_lingual_questions(questions: list[Question], pages: Mapping[str, Page],
                            target: Mapping[str, Page], lang: str) -> tuple[list[Question], int]:
    """The questions not in ``lang``, each answered by the ``target`` pages that share a
    permalink with its relevant pages; and how many were left out for want of one."""
    by_link: dict[str, list[str]] = {}
    for path in sorted(target):
        link = permalink(target[path])
        if link:
            by_link.setdefault(link, []).append(path)
    kept, left_out = [], 0
    for question in questions:
        if question.lang == lang:
            continue
        relevant: list[str] = []
        for path in question.relevant:
            link = permalink(pages[path]) if path in pages else None
            relevant += [p for p in by_link.get(link or "", []) if p not in relevant]
        if relevant:
            kept.append(replace(question, id=f"{question.id}>{lang}",
                                relevant=tuple(relevant)))
        else:
            left_out += 1
    return kept, left_out


def language_retriever(settings: Settings, base: HybridRetriever,
                       pages: Mapping[str, Page]) -> HybridRetriever:
    """A hybrid retriever over ``pages`` alone, sharing ``base``'s model and vectors."""
    vector = None
    if base.vector is not None:
        vector = VectorRetriever(base.vector.provider, PagesOnly(base.vector.store, pages),
                                 languages_of(pages.values()))
    return HybridRetriever(dict(pages), KeywordIndex.build(pages.values(), base.keyword.params),
                           KnowledgeGraph.build(pages, settings.graph), vector,
                           settings.retrieval, expander=base.expander,
                           vector_error=base.vector_error)
