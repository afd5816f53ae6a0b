"""English questions over Chinese or Japanese pages: the question's words, translated for BM25.

When almost none of the pages searched are in the query's language (an English question over
a vault of Japanese notes), BM25 can match only the few Latin words the pages share with the
question. ``QueryTranslator`` then adds, for each English word (and two-word phrase) of the
question, the translations a bilingual dictionary gives (text/bilingual.py) in each language
the pages are written in — only those the pages contain, the ``per_word`` most common among
them (the vault's own word for the thing: 笔记 for "notes", not 题解). The vector side needs no
such help when its model is multilingual (``embedding.languages``); the two are fused as usual.

Measured (``mindgraph bench <questions> --cross-lingual ja|zh``, README Benchmarks): English
dev / held-out questions over the Japanese-only vault, keyword MRR@10 0.451 / 0.426 → 0.62 /
0.56; over the Chinese-only one 0.516 / 0.502 → 0.65 / 0.61. A vault that has pages in the
query's language (the mixed en+ja+zh vault) is searched exactly as before.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable, Mapping

from ..page.language import page_language, query_language
from ..page.model import Page
from ..text import bilingual
from .analyzer import STOP_WORDS, analyze
from .calibration import spread
from .keyword import KeywordIndex

MIN_SHARE = 0.1          # a language with fewer of the pages is neither "the vault's" nor
                         # missing: below it the query's own language counts as absent
SAMPLE = 100             # pages whose language is read (spread over the sorted paths): every
                         # page's took 0.76 s of a fresh process's first query on the vault
_ENGLISH_WORD = re.compile(r"[a-z][a-z\-]+")


def vault_languages(pages: Iterable[Page]) -> Counter[str]:
    """How many of the pages are written in each language."""
    return Counter(page_language(page) for page in pages)


class QueryTranslator:
    """Adds the translations of an English query's words for the languages of the pages."""

    def __init__(self, pages: Mapping[str, Page], keyword: KeywordIndex, per_word: int = 2,
                 lookup: Callable[[str, str], tuple[str, ...]] | None = None,
                 cache_dir: Path | None = None):
        self.pages = pages
        if lookup is None:      # the dictionaries, their tables kept in this workspace's folder
            lookup = functools.partial(bilingual.translations, cache_dir=cache_dir)
        self._shares: dict[str, float] | None = None
        self.keyword = keyword
        self.per_word = per_word
        self._lookup = lookup
        self._cache: dict[str, tuple[str, ...]] = {}

    @property
    def shares(self) -> dict[str, float]:
        """Each language's share of the pages (read from a sample of them, once)."""
        if self._shares is None:
            sample = spread(list(self.pages), SAMPLE)
            counts = vault_languages(self.pages[path] for path in sample)
            total = sum(counts.values()) or 1
            self._shares = {lang: n / total for lang, n in counts.items()}
        return self._shares

    @property
    def targets(self) -> tuple[str, ...]:
        """The languages translated into: those of at least a tenth of the pages that a
        dictionary covers."""
        return tuple(sorted(lang for lang, share in self.shares.items()
                            if share >= MIN_SHARE and lang in bilingual.LANGUAGES))

    def wanted(self, query: str) -> bool:
        """True when the query is English, the pages have almost none in English, and most
        of them are in a language a dictionary covers."""
        return query_language(query) == "en" and self.shares.get("en", 0.0) < MIN_SHARE \
            and bool(self.targets)

    def added_words(self, query: str) -> tuple[str, ...]:
        """The translations added to ``query`` (none when it needs none)."""
        if not self.wanted(query):
            return ()
        found = self._cache.get(query)
        if found is None:
            found = self._cache[query] = tuple(dict.fromkeys(
                word for lang in self.targets for word in self._translate(query, lang)))
            if len(self._cache) > 1024:
                self._cache.clear()
        return found

    def _translate(self, query: str, lang: str) -> list[str]:
        words = [w for w in _ENGLISH_WORD.findall(query.lower()) if w not in STOP_WORDS]
        phrases = [f"{a} {b}" for a, b in zip(words, words[1:])]
        out: list[str] = []
        for phrase in dict.fromkeys(phrases + words):
            out += self._best(self._lookup(phrase, lang), lang)
        return out

    def _best(self, candidates: tuple[str, ...], lang: str) -> list[str]:
        """The ``per_word`` candidates that the most pages contain (all their terms known)."""
        ranked = []
        for order, word in enumerate(candidates):
            terms = _terms(word, lang)
            ids = self.keyword.vocab.lookup(list(terms))
            if not terms or len(ids) != len(terms):
                continue
            pages = min(self.keyword.pages.document_frequency(int(i)) for i in ids)
            ranked.append((-pages, order, word))
        return [word for _, _, word in sorted(ranked)[: self.per_word]]


@functools.lru_cache(maxsize=65536)
def _terms(word: str, lang: str) -> tuple[str, ...]:
    """A dictionary word's index terms (MeCab or jieba: the cost of a lookup, so memoised)."""
    return tuple(analyze(word, lang=lang))
