"""The vault's words that contain a short Chinese or Japanese query word: 霜 finds 霜冻.

Chinese and Japanese are indexed as dictionary words (analyzer.py), so a page's 霜冻 ("frost")
is the one term 霜冻, and a search for 霜 — a word of its own — matched nothing in it. A
query word of Han characters no longer than ``max_chars`` is also searched as the vault's
words that contain it (those the index has seen: its vocabulary), all of them scored as one
term at a lower weight (``SparseBM25.concept_scores``: their frequencies summed, their
document frequencies too, so a character inside many words weighs as a common one). Only a
word no page has as a word of its own is looked up (停 where the pages say 悬停 and 停止, not
文件 where they also say 文件夹: always looking up 1-character words lost an agent question),
and only when at least ``MIN_SHARE`` of the pages are in the query's language (``speaks``):
over pages in another language almost every word of the query is unseen, and the few Han
words such pages hold matched at random (without that condition held-out Japanese questions
over the Chinese pages MRR@10 0.829 → 0.792, Chinese ones over the English pages 0.715 →
0.706). Katakana words are left alone: キーボード is no match for ボード.

A query's expansion is capped: at most ``MAX_PER_WORD`` words for one query word and
``MAX_TERMS`` in all, taken in the query's order (the dev, held-out and fresh questions over
the obsidian-help vault expand to 16 terms at most, 16 for one word). A 1,000-character query
of single common Han characters expanded to 3,015 terms, and each search scored them all
(``python bench/bench_subword_cap.py``).
"""

from __future__ import annotations

import bisect
import re
from itertools import islice
from typing import Iterable, Iterator, Mapping

from ..text.cjk import HAN_CHAR
from .bm25 import Vocabulary

_HAN = re.compile(HAN_CHAR)
MIN_SHARE = 0.1     # as retrieval/translate.py's: below it a language is absent from a vault
_SEPARATOR = "\n"       # in no term: the analyser's terms hold no whitespace
MAX_PER_WORD = 128      # the vault's words searched for one query word, at most
MAX_TERMS = 256         # ... and for the whole query


class Subwords:
    """The Han terms of a vocabulary, searchable for the ones containing a string."""

    def __init__(self) -> None:
        self._terms: list[str] = []
        self._starts: list[int] = []    # offset of each term in ``_text``
        self._text = ""
        self._seen = 0                  # vocabulary entries read (ids are never reused)

    def refresh(self, vocab: Vocabulary) -> None:
        """Take in the terms ``vocab`` gained since the last call."""
        if len(vocab) == self._seen:
            return
        new = [t for t in islice(vocab.ids, self._seen, None) if _HAN.search(t)]
        self._seen = len(vocab)
        if not new:
            return
        offset = len(self._text)
        for term in new:
            self._starts.append(offset)
            offset += len(term) + 1
        self._terms.extend(new)
        self._text += _SEPARATOR.join(new) + _SEPARATOR

    def containing(self, word: str) -> Iterator[str]:
        """The terms longer than ``word`` that contain it, in vocabulary order, found as they
        are read (a capped expansion stops reading)."""
        text, starts, terms = self._text, self._starts, self._terms
        at = text.find(word)
        while at >= 0:
            i = bisect.bisect_right(starts, at) - 1
            term = terms[i]
            if term != word:
                yield term
            at = text.find(word, starts[i] + len(term) + 1)    # the next term


def has_han(text: str) -> bool:
    """True when ``text`` holds a Han character (NFKC leaves them Han)."""
    return not text.isascii() and _HAN.search(text) is not None


def expandable(terms: Iterable[str], max_chars: int) -> list[str]:
    """The query terms ``Subwords`` looks up: Han words of at most ``max_chars`` characters."""
    return [t for t in terms if len(t) <= max_chars and _HAN.search(t)]


def speaks(lang: str, counts: Mapping[str, int]) -> bool:
    """True when at least ``MIN_SHARE`` of the pages (``counts``: pages per language) are in
    ``lang``."""
    total = sum(counts.values())
    return total > 0 and counts.get(lang, 0) >= MIN_SHARE * total
