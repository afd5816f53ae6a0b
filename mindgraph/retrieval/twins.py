"""Translations of one page vouch for each other: a question searched over the twins too.

A vault that holds the same page in several languages (Obsidian Help: 173 pages in en, ja
and zh; any site published in several languages) ties the translations together by one
frontmatter ``permalink``. A Japanese or Chinese question whose words are not its page's
words (「引っ張ってくる」 for a page that says ドラッグ) may still share words with the page's
English twin once translated (text/bilingual.py: 引っ張る → drag, pull): the English page is
often the fuller one, and the dictionary knows more English synonyms than the vault uses in
its own language. So BM25 also scores the question's English translation over the English
pages, and each English page's score is credited, at ``TWIN_WEIGHT``, to its twin in the
question's language. Without twins (no permalinks, one language) nothing changes.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ..page.language import page_language
from ..page.model import Page
from ..page.permalinks import permalink

TWIN_WEIGHT = 0.5        # a twin's normalised score against the page's own (1)


class Twins:
    """Pages grouped by permalink: each page's translation in another language."""

    def __init__(self, pages: Mapping[str, Page]):
        groups: dict[str, dict[str, str]] = {}
        self.language: dict[str, str] = {}      # of the pages with a permalink (read once)
        for path, page in pages.items():
            link = permalink(page)
            if link is not None:
                lang = self.language[path] = page_language(page)
                groups.setdefault(link, {}).setdefault(lang, path)
        # path of a page in one language → its twin in another, for groups of ≥ 2 languages
        self._twin: dict[tuple[str, str], str] = {}
        for by_lang in groups.values():
            if len(by_lang) < 2:
                continue
            for path in by_lang.values():
                for lang, other in by_lang.items():
                    if other != path:
                        self._twin[(path, lang)] = other
        self.count = len(self._twin)

    def twin(self, path: str, lang: str) -> str | None:
        """``path``'s translation in ``lang`` (None when it has none)."""
        return self._twin.get((path, lang))


def twin_ranking(hits: Iterable[Any], twins: Twins, lang: str, limit: int
                 ) -> list[tuple[str, float, str | None]]:
    """Keyword ``hits`` on English pages as a ranking of their twins in ``lang`` (the first
    ``limit``)."""
    out: dict[str, float] = {}
    for hit in hits:
        if twins.language.get(hit.path) != "en":
            continue
        mine = twins.twin(hit.path, lang)
        if mine is not None and mine not in out:
            out[mine] = hit.score
            if len(out) >= limit:
                break
    return [(path, score, None) for path, score in out.items()]
