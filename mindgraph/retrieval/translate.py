"""Questions over pages in another language: the question's words, translated for BM25.

When almost none of the pages searched are in the query's language (an English question over
a vault of Japanese notes), BM25 can match only the few Latin words the pages share with the
question. ``QueryTranslator`` then adds, for each English word (and two-word phrase) of the
question, the translations a bilingual dictionary gives (text/bilingual.py) in each language
the pages are written in — only those the pages contain, the ``per_word`` most common among
them (the vault's own word for the thing: 笔记 for "notes", not 题解). The other way round, a
Chinese or Japanese question over pages at least a tenth English has its words (and pairs of
adjacent words) looked up forwards in the same dictionaries, keeping the ``per_english`` (3)
English words the most pages contain: an English gloss list names synonyms, one of which is
the vault's (3 scored above 2 on dev and held-out questions). A word the analyser cuts in
parts counts the pages that hold all of them. An English question's translations reach BM25
as one concept per word (``added_concepts``: its translations' index terms scored as one term,
a probabilistic structured query), weighing ``CONCEPT_WEIGHT`` (1.75) against a word of the
question as written, a rarer sense's share less by its share of the pages (``_best``): as a
bag of terms of their own (before), a word with two translations counted twice and the bag
outweighed the product names the pages share with the question. A Chinese or Japanese
question's English glosses stay terms of their own (``added_terms``, ``TRANSLATED_WEIGHT``).
The vector side needs no such help when its model is multilingual; the two are fused as usual
(an English-only model's vectors of the pages get the unsupported-language factor, hybrid.py).

Measured (``mindgraph bench <questions> --cross-lingual ja|zh|en``, README Benchmarks, hybrid
MRR@10 dev / held-out, MiniLM): English questions over the Japanese-only vault 0.664 / 0.619
as a bag → 0.696 / 0.641 as concepts (with the dictionary's base forms and clippings: "synced"
→ 同期), over the Chinese-only one 0.744 / 0.673 → 0.765 / 0.702; Japanese and Chinese
questions over the English-only vault 0.224 / 0.287 untranslated → 0.778 / 0.709. A vault
that has pages in the query's language (the mixed en+ja+zh vault) is searched exactly as
before.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from ..page.model import Page
from ..text import bilingual
from ..text.cjk import CJK_RUN as _CJK_RUN
from .analyzer import STOP_WORDS, analyze
from .calibration import spread
from .keyword import Concept, KeywordIndex
from .query_language import query_language_in, vault_languages

MIN_SHARE = 0.1          # a language with fewer of the pages is neither "the vault's" nor
                         # missing: below it the query's own language counts as absent
SAMPLE = 100             # pages whose language is read (spread over the sorted paths): every
                         # page's took 0.76 s of a fresh process's first query on the vault
_ENGLISH_WORD = re.compile(r"[a-z][a-z\-]+")
TRANSLATED_WEIGHT = 1.5  # a translation against a word of the question as written (1): over
                         # pages in another language the question's own words match only
                         # product names and code the pages share with it. Keyword MRR@10 of
                         # English questions over the ja-only / zh-only pages, dev and
                         # held-out, × 1: 0.649 0.635 / 0.721 0.647; × 1.5: 0.685 0.662 /
                         # 0.748 0.657; × 2: 0.667 0.667 / 0.720 0.673; × 0.6 lower everywhere
                         # (an English question's translations are concepts now: below)
CONCEPT_WEIGHT = 1.75    # an English word's translations, scored as one concept, against a
                         # word of the question as written (1). Hybrid MRR@10 of English
                         # questions over the ja-only / zh-only pages, dev and held-out, with
                         # four translations a word: × 1.5: 0.693 0.629 / 0.756 0.700;
                         # × 1.75: 0.696 0.641 / 0.765 0.702 (three a word, × 1.5: 0.692
                         # 0.617 / 0.754 0.690; the bag of terms of before: 0.664 0.619 /
                         # 0.744 0.673)



class QueryTranslator:
    """Adds the translations of an English query's words for the languages of the pages."""

    def __init__(self, pages: Mapping[str, Page], keyword: KeywordIndex, per_word: int = 4,
                 per_english: int = 3,
                 lookup: Callable[[str, str], tuple[str, ...]] | None = None,
                 cache_dir: Path | None = None,
                 english: Callable[[str, str], tuple[str, ...]] | None = None,
                 page_languages: Callable[[], Counter[str]] | None = None):
        self.pages = pages
        # how many pages are in each language, for a query of Han alone (query_language.py;
        # the retriever passes its own count, read once for both)
        self._page_languages = page_languages or functools.cache(
            lambda: vault_languages(self.pages.values()))
        if lookup is None:      # the dictionaries, their tables kept in this workspace's folder
            lookup = functools.partial(bilingual.translations, cache_dir=cache_dir)
        if english is None:
            english = functools.partial(bilingual.english, cache_dir=cache_dir)
        self._english = english
        self._shares: dict[str, float] | None = None
        self.keyword = keyword
        self.per_word = per_word
        self.per_english = per_english
        self._lookup = lookup
        self._cache: dict[str, tuple[tuple[str, str], ...]] = {}
        self._english_cache: dict[str, dict[str, float]] = {}
        self._counts: dict[tuple[str, str], int] = {}

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
        """True when almost no page is in the query's language and a dictionary translates
        it into the pages' languages: an English question over pages mostly in languages a
        dictionary covers, or a Chinese or Japanese one over pages at least a tenth English."""
        return bool(self.languages(query))

    def query_language(self, query: str) -> str:
        """The query's language in these pages: a query of Han alone is Japanese in a
        Japanese vault (query_language.py), looked up and cut as such."""
        return query_language_in(query, self._page_languages)

    def languages(self, query: str) -> tuple[str, ...]:
        """The languages the query's words are translated into (none: it needs none)."""
        lang = self.query_language(query)
        if self.shares.get(lang, 0.0) >= MIN_SHARE:
            return ()
        if lang == "en":
            return self.targets
        if lang in bilingual.LANGUAGES and self.shares.get("en", 0.0) >= MIN_SHARE:
            return ("en",)
        return ()

    def added_words(self, query: str) -> tuple[str, ...]:
        """The translations added to ``query`` (none when it needs none)."""
        return tuple(dict.fromkeys(word for _, word, _, _ in self._translation(query)))

    def added_terms(self, query: str) -> dict[str, float]:
        """A Chinese or Japanese question's English words over English pages, as index
        terms each with its weight against the query's own words' 1: ``TRANSLATED_WEIGHT``
        for the vault's usual gloss, a rarer one less (``_best``); a term two glosses share
        keeps the higher. Each gloss is a term of its own: scored as one concept per word,
        they lost (keyword MRR@10 of ja/zh questions over the English pages, dev / held-out,
        0.771 / 0.695 → 0.719 / 0.713). () for an English question (``added_concepts``)."""
        out: dict[str, float] = {}
        if self.languages(query) != ("en",):
            return out
        for _, word, lang, weight in self._translation(query):
            for term in _terms(word, lang):
                out[term] = max(out.get(term, 0.0), TRANSLATED_WEIGHT * weight)
        return out

    def english_terms(self, query: str) -> dict[str, float]:
        """The index terms of a Chinese or Japanese question's words in English, each with
        its weight (as ``added_terms``), whatever the pages' languages ({} for another
        language's question): for searching the question's translation over the English
        twins of the pages (twins.py)."""
        if self.query_language(query) not in bilingual.LANGUAGES:
            return {}
        found = self._english_cache.get(query)
        if found is None:
            found = {}
            for word, _, weight in self._into_english(query):
                for term in _terms(word, "en"):
                    found[term] = max(found.get(term, 0.0), TRANSLATED_WEIGHT * weight)
            if len(self._english_cache) > 1024:
                self._english_cache.clear()
            self._english_cache[query] = found
        return found

    def added_concepts(self, query: str) -> list[Concept]:
        """An English question's translations over Chinese or Japanese pages: one concept
        per word (or phrase) of the question and language, its translations' index terms
        each sharing by its translation's weight (``_best``; a word cut in parts shares it
        among them), scored as one term weighing ``CONCEPT_WEIGHT``
        (``SparseBM25.concept_scores``). [] for a question translated into English."""
        if self.languages(query) == ("en",):
            return []
        shares: dict[tuple[str, str], dict[str, float]] = {}
        for source, word, lang, weight in self._translation(query):
            terms = _terms(word, lang)
            own = shares.setdefault((source, lang), {})
            for term in terms:
                own[term] = own.get(term, 0.0) + weight / len(terms)
        return [Concept(terms, CONCEPT_WEIGHT) for terms in shares.values() if terms]

    def _translation(self, query: str) -> tuple[tuple[str, str, str, float], ...]:
        """Each translation added to ``query``: (its English source, "" for a Chinese or
        Japanese question's, the translation, its language, its weight)."""
        languages = self.languages(query)
        if not languages:
            return ()
        found = self._cache.get(query)
        if found is None:
            found = self._cache[query] = tuple(("", *t) for t in self._into_english(query)) \
                if languages == ("en",) else tuple(
                    pair for lang in languages for pair in self._translate(query, lang))
            if len(self._cache) > 1024:
                self._cache.clear()
        return found

    def _translate(self, query: str, lang: str) -> list[tuple[str, str, str, float]]:
        words = [w for w in _ENGLISH_WORD.findall(query.lower()) if w not in STOP_WORDS]
        phrases = [f"{a} {b}" for a, b in zip(words, words[1:])]
        out: list[tuple[str, str, str, float]] = []
        for phrase in dict.fromkeys(phrases + [p for w in words for p in _hyphenated(w)]):
            out += [(phrase, word, lang, weight) for word, weight in
                    self._best(self._lookup(phrase, lang), lang, self.per_word)]
        return out

    def _into_english(self, query: str) -> list[tuple[str, str, float]]:
        """A Chinese or Japanese question's words (and pairs of adjacent words, which the
        segmenter may have cut from one dictionary word) in English."""
        lang = self.query_language(query)
        words = [t for t in analyze(query, query=True, lang=lang) if _CJK_RUN.fullmatch(t)]
        pairs = [a + b for a, b in zip(words, words[1:])]
        out: list[tuple[str, str, float]] = []
        for word in dict.fromkeys(pairs + words):
            out += [(english, "en", weight) for english, weight in
                    self._best(self._english(word, lang), "en", self.per_english)]
        return out

    def _best(self, candidates: tuple[str, ...], lang: str, keep: int
              ) -> list[tuple[str, float]]:
        """The ``keep`` candidates that the most pages contain whole, each with its weight:
        1 for the one the most pages use, the square root of its share of that for the
        others (a sense the vault seldom uses is seldom the one meant, and BM25 would give
        it a rare word's weight: JMdict's メール for "text", 心にとめる for "note")."""
        ranked = []
        for order, word in enumerate(candidates):
            pages = self._pages_with(word, lang)
            if pages:
                ranked.append((-pages, order, word))
        kept = sorted(ranked)[:keep]
        return [(word, (count / kept[0][0]) ** 0.5) for count, _, word in kept]

    def _pages_with(self, word: str, lang: str) -> int:
        """How many pages hold every index term of ``word`` (0: some term in none). A word
        the analyser cuts in parts counts the pages that have them all, not the rarest part's
        (注意書き, cut into 注意 + 書き, counted as common as 書き and beat ノート for "note")."""
        found = self._counts.get((word, lang))
        if found is None:
            terms = _terms(word, lang)
            ids = self.keyword.vocab.lookup(list(terms))
            if not terms or len(ids) != len(terms):
                found = 0
            elif len(ids) == 1:
                found = self.keyword.pages.document_frequency(int(ids[0]))
            else:
                rows = np.ones(self.keyword.pages.n_rows, dtype=bool)
                for term_id in ids:
                    rows &= self.keyword.pages.scores(np.array([term_id])) > 0
                found = len(set(self.keyword.pages.groups[rows].tolist()))
            if len(self._counts) > 65536:
                self._counts.clear()
            self._counts[(word, lang)] = found
        return found


def _hyphenated(word: str) -> list[str]:
    """``word``, and a hyphenated one's parts too, as a phrase and one by one ("slip-box" →
    "slip box", slip, box): a dictionary seldom lists a compound a writer made up."""
    parts = [p for p in word.split("-") if len(p) > 1 and p not in STOP_WORDS]
    if len(parts) < 2:
        return [word]
    return [word, " ".join(parts), *parts] if len(parts) == 2 else [word, *parts]


@functools.lru_cache(maxsize=65536)
def _terms(word: str, lang: str) -> tuple[str, ...]:
    """A dictionary word's index terms (MeCab or jieba: the cost of a lookup, so memoised)."""
    return tuple(analyze(word, lang=lang))
