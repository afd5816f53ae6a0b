"""One analyzer for every language: text → index terms, the same for documents and queries.

- Text is NFKC-normalised (full-width forms become ASCII) and lower-cased.
- Latin-script (and other space-separated) words become terms; English stop words are dropped
  and words are stemmed with the Snowball English stemmer ("notes" and "note" meet).
- Chinese, Japanese and Korean runs (Han, Hiragana, Katakana, Hangul), which have no spaces,
  become overlapping character bigrams ("双链笔记" → 双链 链笔 笔记); a run of one character
  is a term of its own.
- Code tokens keep their whole form AND their parts: ``snake_case_names`` gives
  ``snake_case_names``, ``snake``, ``case``, ``names``; ``file.py`` gives ``file.py``, ``file``,
  ``py``; ``task-todo:`` gives ``task-todo``, ``task``, ``todo``; runs of two or more symbols
  such as ``![[``, ``{{`` or ``://`` are terms of their own.

Whole forms and symbol runs are never stemmed, so they only match themselves.
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from typing import Callable, Iterable, Iterator

_CJK_RANGES = ("\u1100-\u11ff\u3005\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
               "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff")
_CJK_RUN = re.compile(f"[{_CJK_RANGES}]+")
_HIRAGANA_ONLY = re.compile("^[\u3040-\u309f]+$")
# A word: letters and digits, without underscore and without CJK.
_WORD = re.compile(f"[^\\W_{_CJK_RANGES}]+")
# Code-like compounds: words joined by . - : / # @ = + or underscores.
# (?<!\w) and possessive quantifiers keep the scan linear: no retry from inside a word.
_COMPOUND = re.compile(r"(?<!\w)\w++(?:[-.:/#@=+]++\w++)++|(?<!\w)[^\W_]++(?:_++[^\W_]++)++")
# Runs of symbols (2 to 6 characters) such as ![[ {{ :// ==.
# Backticks and quotes are markup around code, not part of it.
_SYMBOLS = re.compile(r"[^\w\s`'\"\u2018\u2019\u201c\u201d]{2,6}")
# Symbol runs that are only markdown furniture (table rules, bold markers) carry no meaning.
_FURNITURE = re.compile(r"^[-|:*_=~#>.]+$")

# Lucene's English stop words plus the function words of questions ("how do I ...").
STOP_WORDS = frozenset("""
a an and are as at be but by for if in into is it no not of on or such that the their then
there these they this to was will with i me my we our you your he she him her his its them
what which who whom when where why how do does did done doing can could would should may
might must shall have has had having am been being were so than too very just also about
from up out any all some each other more most own same only both few s t don doesn isn
""".split())

_STEMMER: Callable[[str], str] | None = None
_STEM_CACHE: dict[str, str] = {}


def _stem(word: str) -> str:
    """Snowball (Porter2) English stem, memoised: a vocabulary is far smaller than a text."""
    stem = _STEM_CACHE.get(word)
    if stem is None:
        global _STEMMER
        if _STEMMER is None:
            import snowballstemmer

            _STEMMER = snowballstemmer.stemmer("english").stemWord
        stem = _STEMMER(word) if word.isascii() and not word.isdigit() else word
        if len(_STEM_CACHE) < 2_000_000:
            _STEM_CACHE[word] = stem
    return stem


def normalize(text: str) -> str:
    """NFKC and lower case: the form every term is taken from."""
    return unicodedata.normalize("NFKC", text).lower()


def analyze(text: str, query: bool = False) -> list[str]:
    """The index terms of ``text``, with repeats (so they can be counted); ``query``: the text
    is a question (see ``_cjk_terms`` for the one difference)."""
    text = normalize(text)
    cache = _STEM_CACHE
    # One findall per kind of term: regex scanning runs in C, only the hits reach Python.
    terms = [cache.get(w) or _stem(w) for w in _WORD.findall(text) if w not in STOP_WORDS]
    for run in _CJK_RUN.findall(text):
        _cjk_terms(run, terms.append, query)
    terms.extend(t for t in _COMPOUND.findall(text) if not _CJK_RUN.search(t))
    terms.extend(t for t in _SYMBOLS.findall(text) if not _FURNITURE.match(t))
    return terms


def _cjk_terms(run: str, append: Callable[[str], None], query: bool = False) -> None:
    """Overlapping bigrams of a CJK run; a one-character run is its own term.

    Adding every single character as well was measured and lost on the dev questions (more
    noise from common characters), so only runs of one character keep theirs.

    In a query, a run that mixes kanji or katakana with hiragana leaves out bigrams of
    hiragana alone: in a question they are particles and endings (の, を, します, ください,
    することができますか), the stop words of Japanese, and a long question's many of them
    drowned its few content words. Japanese keyword MRR@10 0.722 → 0.833 on the dev questions,
    0.784 → 0.828 on the held-out ones (recall@5 0.844 → 0.938); Chinese has no kana. Pages
    keep every bigram, so a query written in kana alone still finds kana words in them.
    """
    if len(run) == 1:
        append(run)
        return
    skip_kana = query and not _HIRAGANA_ONLY.match(run)
    for i in range(len(run) - 1):
        pair = run[i:i + 2]
        if skip_kana and _HIRAGANA_ONLY.match(pair):
            continue
        append(pair)


def highlight_terms(text: str, terms: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans of ``text`` whose analysis yields one of ``terms`` (for snippets)."""
    return merge_spans(list(iter_highlights(text, terms)))


def iter_highlights(text: str, terms: Iterable[str]) -> Iterator[tuple[int, int]]:
    """The spans of ``highlight_terms`` in order of their start, unmerged and found lazily.

    A caller that needs only the first few (a snippet window) stops reading early, and the
    text is scanned only that far; CJK runs are not scanned for a query without CJK terms.
    (Code and symbol runs always are: NFKC can turn symbols into letters, "™" into "tm".)
    """
    wanted = set(terms)
    if not wanted:
        return iter(())
    lowered = text.lower()
    passes = [_word_spans(lowered, wanted)]
    if any(_CJK_RUN.search(t) for t in wanted):
        passes.append(_cjk_spans(lowered, wanted))
    passes.extend(_whole_spans(pattern, lowered, wanted) for pattern in (_COMPOUND, _SYMBOLS))
    return heapq.merge(*passes) if len(passes) > 1 else passes[0]


def _word_spans(lowered: str, wanted: set[str]) -> Iterator[tuple[int, int]]:
    cache = _STEM_CACHE
    for match in _WORD.finditer(lowered):
        word = match.group()
        if not word.isascii():      # ASCII is already in normal form once lower-cased
            word = normalize(word)
        if word not in STOP_WORDS and (cache.get(word) or _stem(word)) in wanted:
            yield match.span()


def _cjk_spans(lowered: str, wanted: set[str]) -> Iterator[tuple[int, int]]:
    for match in _CJK_RUN.finditer(lowered):
        run, start = match.group(), match.start()
        if len(run) == 1:
            if run in wanted:
                yield match.span()
            continue
        for i in range(len(run) - 1):
            if run[i:i + 2] in wanted:
                yield start + i, start + i + 2


def _whole_spans(pattern: re.Pattern[str], lowered: str, wanted: set[str]
                 ) -> Iterator[tuple[int, int]]:
    for match in pattern.finditer(lowered):
        if normalize(match.group()) in wanted:
            yield match.span()


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans with overlapping and touching ones joined."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
