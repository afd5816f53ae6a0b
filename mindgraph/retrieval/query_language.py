"""The language of a query in this vault: a query of Han characters alone is Chinese or
Japanese as the pages say.

``page.language.query_language`` reads a query's letters alone, and Han without kana reads as
Chinese: 「伏見稲荷」 in a Japanese vault was answered in Chinese (最相关的内容在…) and its
Japanese page marked ``other_language``. Here such a query is Japanese when the vault has
Japanese pages and no Chinese ones, Chinese when Chinese and no Japanese; in a vault of both
it stays Chinese unless the analyzer's dictionaries say Japanese clearly (MeCab knows words
over more of it than jieba: ``analyzer.han_query_languages``, by which it is cut); in a vault
of neither it stays Chinese. A query written with characters Japanese does not use (Simplified
forms: 这, 设, 笔记 — none in JIS X 0208 as Windows' code page 932 extends it) is Chinese in any
vault: a Chinese question over a Japanese vault was cut by MeCab, as Japanese, and answered in
Japanese. Every Chinese question of the dev and held-out sets has 5 to 21 such characters, no
Japanese one has any.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Iterable

from ..page.language import page_language, query_language
from ..page.model import Page
from .analyzer import han_query_languages

_HAN = re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002ffff]")


def query_language_in(query: str, languages: Callable[[], Counter[str]]) -> str:
    """``query_language`` of ``query``, but for a query of Han alone the language the vault's
    pages (``languages()``: a count per language, asked only for such a query) and the
    dictionaries say (see the module)."""
    lang = query_language(query)
    if lang != "zh" or simplified_han(query):
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


def simplified_han(query: str) -> int:
    """How many of ``query``'s Han characters Japanese text does not use: outside JIS X 0208
    and the vendor extensions of code page 932 (Simplified forms such as 这 设 笔 记)."""
    count = 0
    for ch in _HAN.findall(query):
        try:
            ch.encode("cp932")
        except UnicodeEncodeError:
            count += 1
    return count
