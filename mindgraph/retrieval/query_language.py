"""The language of a query in this vault: a query of Han characters alone is Chinese or
Japanese as the pages say.

``page.language.query_language`` reads a query's letters alone, and Han without kana reads as
Chinese: 「伏見稲荷」 in a Japanese vault was answered in Chinese (最相关的内容在…) and its
Japanese page marked ``other_language``. Here such a query is Japanese when the vault has
Japanese pages and no Chinese ones, Chinese when Chinese and no Japanese; in a vault of both
it stays Chinese unless the analyzer's dictionaries say Japanese clearly (MeCab knows words
over more of it than jieba: ``analyzer.han_query_languages``, by which it is cut); in a vault
of neither it stays Chinese.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable

from ..page.language import page_language, query_language
from ..page.model import Page
from .analyzer import han_query_languages


def query_language_in(query: str, languages: Callable[[], Counter[str]]) -> str:
    """``query_language`` of ``query``, but for a query of Han alone the language the vault's
    pages (``languages()``: a count per language, asked only for such a query) and the
    dictionaries say (see the module)."""
    lang = query_language(query)
    if lang != "zh":
        return lang
    counts = languages()
    japanese, chinese = counts.get("ja", 0), counts.get("zh", 0)
    if japanese and not chinese:
        return "ja"
    if japanese and chinese and han_query_languages(query) == ("ja",):
        return "ja"
    return "zh"


def vault_languages(pages: Iterable[Page]) -> Counter[str]:
    """How many of the pages are written in each language."""
    return Counter(page_language(page) for page in pages)


def languages_of(pages: Iterable[Page]) -> Callable[[], Counter[str]]:
    """``vault_languages`` of a fixed set of pages as the ``languages`` a VectorRetriever
    takes: counted on first use (only a query of Han alone asks), then kept. A retriever
    built without it knows no pages, and reads such a query as Chinese in any vault."""
    pages = list(pages)
    counted: list[Counter[str]] = []

    def languages() -> Counter[str]:
        if not counted:
            counted.append(vault_languages(pages))
        return counted[0]
    return languages
