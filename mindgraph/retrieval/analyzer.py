"""One analyzer for every language: text → index terms, the same for documents and queries.

- Text is NFKC-normalised (full-width forms become ASCII) and lower-cased.
- Latin-script (and other space-separated) words become terms; English stop words are dropped
  and words are stemmed with the Snowball English stemmer ("notes" and "note" meet).
- Chinese and Japanese runs, which have no spaces, are cut into words by a dictionary
  (``mindgraph.text.cjk``: MeCab with UniDic for Japanese, jieba for Chinese); each word is a
  term (Japanese verbs and adjectives in their dictionary form: 動かない → 動く), and function
  words (particles, endings, pronouns, question words: が, とは, 何, ですか, 什么, 是, 的) are
  the stop words of the two languages. A run is Japanese when it has kana, or when it is Han
  alone in a Japanese text (``lang``, or kana elsewhere in the text); else Chinese.
  Overlapping character bigrams, which matched across words (「が動」 in 「Syncが動かない」 met
  動作, 「ボード」 took ホワイトボード to キーボード), are kept for Korean (Hangul) only.
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

from ..text.cjk import CJK_CHARS as _CJK_RANGES
from ..text.cjk import CJK_RUN as _CJK_RUN
from ..text.cjk import (KATAKANA_WORD, Word, fresh_words, known_characters, run_language,
                        text_hint, words)

# How CJK runs become terms: "words", "words+bigrams" (a long word's bigrams too, never
# across words) or "bigrams" (overlapping bigrams of the whole run); ``CJK_STOP``: function
# words are left out. Measured side by side by bench/bench_cjk.py (see the README).
CJK_TERMS = "words"
CJK_STOP = True
CJK_PARTS = True
_HIRAGANA_ONLY = re.compile("^[\u3040-\u309f]+$")
# A word: letters and digits, without underscore and without CJK.
_WORD = re.compile(f"[^\\W_{_CJK_RANGES}]+")
# Code-like compounds: words joined by . - : / # @ = + or underscores.
# (?<!\w) and possessive quantifiers keep the scan linear: no retry from inside a word.
_COMPOUND = re.compile(r"(?<!\w)\w++(?:[-.:/#@=+]++\w++)++|(?<!\w)[^\W_]++(?:_++[^\W_]++)++")
_JOINERS = re.compile(r"[-.:/#@=+_]")     # one of them is in every _COMPOUND match
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


# Names of operating systems that end in "os" like a plural: Porter2 would strip the "s"
# (macOS → "maco", iPadOS → "ipado"), so highlights and explanations showed no real word. Kept
# whole, as Porter2 keeps its own few such words ("cosmos", "atlas", "news").
INVARIANT_WORDS = frozenset({"macos", "ios", "ipados", "watchos", "visionos", "chromeos"})


def _stem(word: str) -> str:
    """Snowball (Porter2) English stem, memoised: a vocabulary is far smaller than a text."""
    stem = _STEM_CACHE.get(word)
    if stem is None:
        global _STEMMER
        if _STEMMER is None:
            import snowballstemmer

            _STEMMER = snowballstemmer.stemmer("english").stemWord
        stem = word if word in INVARIANT_WORDS or not word.isascii() or word.isdigit() \
            else _STEMMER(word)
        if len(_STEM_CACHE) < 2_000_000:
            _STEM_CACHE[word] = stem
    return stem


stem = _stem    # the public name (a defined term's words are compared stemmed: definition.py)


def normalize(text: str) -> str:
    """NFKC and lower case: the form every term is taken from."""
    return unicodedata.normalize("NFKC", text).lower()


def analyze(text: str, query: bool = False, lang: str | None = None,
            only: Iterable[str] | None = None) -> list[str]:
    """The index terms of ``text``, with repeats (so they can be counted); ``query``: the text
    is a question (see ``_bigram_terms``); ``lang``: the language of the page the text is
    from (Han-only runs of a "ja" page are Japanese); ``only``: the caller asks which of these
    terms the text has, so a CJK run without the first character of any of them is not cut
    (cutting is what costs: explaining a hit cut its whole section)."""
    text = normalize(text)
    cache = _STEM_CACHE
    # One findall per kind of term: regex scanning runs in C, only the hits reach Python.
    terms = [cache.get(w) or _stem(w) for w in _WORD.findall(text) if w not in STOP_WORDS]
    runs = _CJK_RUN.findall(text)
    if runs:
        hint = lang if lang in ("ja", "zh") else text_hint(text)
        firsts = _first_characters(only)
        han = _han_languages(runs) if query and hint is None else ("zh",)
        for run in runs:
            if firsts is None or not firsts.isdisjoint(run):
                run_lang = run_language(run, hint)
                for each in (han if run_lang == "zh" else (run_lang,)):
                    _cjk_terms(run, each, terms.append, query)
    terms.extend(t for t in _COMPOUND.findall(text) if not _CJK_RUN.search(t))
    terms.extend(t for t in _SYMBOLS.findall(text) if not _FURNITURE.match(t))
    return terms


def han_query_languages(query: str) -> tuple[str, ...]:
    """The languages a query's runs of Han alone are cut in (``_han_languages``): ("ja",)
    when MeCab knows words over more of them than jieba does, ("zh",), or both."""
    return _han_languages(_CJK_RUN.findall(normalize(query)))


def _han_languages(runs: list[str]) -> tuple[str, ...]:
    """The languages the runs of Han alone of a query are cut in, when nothing says which
    (no kana, no ``lang``): the one whose dictionary knows words over more of them; both on
    a tie (清水寺: 清水|寺 either way) or when each knows words over more than half of them
    (a name both languages write: jieba knows 任天堂 whole, MeCab 任天|堂 as a page has it).

    Pages are cut in their own language, but a query of kanji alone was cut as Chinese:
    「伏見稲荷」 gave no word of the Japanese page's 伏見|稲荷 (jieba's one unknown word
    伏見稲荷 is tagged a symbol), 「稲荷」 gave 荷 and 「東京都庁」 東|京都, not 東京|都庁.
    Each dictionary guesses words from characters where it knows none (MeCab: 什么是双链笔记
    → 什么|是|双|链笔|记; jieba: 日本語入力 → 日本|語入力), which ``known_characters`` leaves
    out. The whole query is judged, not each run: a query is written in one language."""
    han = [run for run in runs if run_language(run) == "zh"]
    if not han or CJK_TERMS == "bigrams":
        return ("zh",)
    japanese = sum(known_characters(run, "ja", fresh=True) for run in han)
    chinese = sum(known_characters(run, "zh", fresh=True) for run in han)
    half = sum(len(run) for run in han) / 2
    if japanese == chinese or (japanese > half and chinese > half):
        return ("ja", "zh")
    return ("ja",) if japanese > chinese else ("zh",)


def _first_characters(terms: Iterable[str] | None) -> frozenset[str] | None:
    """The first characters of the CJK ``terms`` (a run without any gives none of them; a
    Japanese verb's dictionary form starts as it is written: 動か → 動く)."""
    if terms is None:
        return None
    return frozenset(t[0] for t in terms if _CJK_RUN.match(t))


def _cjk_terms(run: str, lang: str, append: Callable[[str], None], query: bool) -> None:
    """The terms of one CJK run: its words (see the module), or bigrams for Korean; a
    query's run is cut afresh (``fresh_words``: no cache shared with other tenants' searches
    tells whether the word was asked before)."""
    if CJK_TERMS == "bigrams" or lang == "ko":
        _bigram_terms(run, append, query)
        return
    for word in (fresh_words if query else words)(run, lang):
        for term in _word_terms(word):
            append(term)


def _word_terms(word: Word) -> tuple[str, ...]:
    """The terms of one CJK word (none for a function word)."""
    if word.function and (CJK_STOP or not word.text.isalnum()):
        return ()
    if CJK_TERMS == "words+bigrams" and len(word.text) >= 3:
        text = word.text
        return (word.base, *(text[i:i + 2] for i in range(len(text) - 1)))
    return (word.base, *word.parts) if CJK_PARTS else (word.base,)


def _bigram_terms(run: str, append: Callable[[str], None], query: bool = False) -> None:
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


def highlight_terms(text: str, terms: Iterable[str], lang: str | None = None
                    ) -> list[tuple[int, int]]:
    """Character spans of ``text`` whose analysis yields one of ``terms`` (for snippets).

    The spans of ``iter_highlights``, got faster (a third of a keyword search's time is
    snippets): each kind of piece is filtered on its own and the kept ones sorted once,
    instead of merging every piece of the text in order; and compound tokens are not looked
    for when no wanted term has their joining characters (every compound term has one)."""
    wanted = set(terms)
    if not wanted:
        return []
    lowered = text.lower()
    passes = list(_term_passes(lowered, lang, any(_CJK_RUN.search(t) for t in wanted),
                               wanted, compounds=any(_JOINERS.search(t) for t in wanted)))
    keep = wanted.isdisjoint
    return merge_spans([(start, end) for found in passes for start, end, own in found
                        if not keep(own)])


def iter_highlights(text: str, terms: Iterable[str], lang: str | None = None
                    ) -> Iterator[tuple[int, int]]:
    """The spans of ``highlight_terms`` in order of their start, unmerged and found lazily.

    A caller that needs only the first few (a snippet window) stops reading early, and the
    text is scanned only that far; CJK runs are not scanned for a query without CJK terms.
    (Code and symbol runs always are: NFKC can turn symbols into letters, "™" into "tm".)
    A CJK span is always a whole word: a word is lit when one of its terms is wanted.
    Each kind of piece is filtered before the kinds are merged in order, and a word is
    stemmed once however often the text has it: in a snippet of a section without the
    query's words (one the vector side found) the words cost a scan in C, not a step in
    Python each (at 10,000 notes snippets were half of a hybrid query's time).
    """
    wanted = set(terms)
    if not wanted:
        return iter(())
    lowered = text.lower()
    passes = _term_passes(lowered, lang, any(_CJK_RUN.search(t) for t in wanted), wanted,
                          compounds=any(_JOINERS.search(t) for t in wanted))
    next(passes)        # the words: _wanted_words reads only those of a wanted term
    keep = wanted.isdisjoint
    return ((start, end) for start, end, _ in heapq.merge(
        _wanted_words(lowered, wanted),
        *(((start, end, own) for start, end, own in found if not keep(own))
          for found in passes)))


def _wanted_words(lowered: str, wanted: set[str]) -> Iterator[tuple[int, int, tuple[str]]]:
    """The spans of ``_word_spans`` whose term is in ``wanted``, in order."""
    lit: dict[str, tuple[str]] = {}
    for word in set(_WORD.findall(lowered)):
        form = word if word.isascii() else normalize(word)
        if form not in STOP_WORDS:
            term = _STEM_CACHE.get(form) or _stem(form)
            if term in wanted:
                lit[word] = (term,)
    if not lit:
        return
    for match in _WORD.finditer(lowered):
        own = lit.get(match.group())
        if own is not None:
            yield match.start(), match.end(), own


def iter_term_spans(text: str, lang: str | None = None, cjk: bool = True,
                    only: Iterable[str] | None = None, query: bool = False
                    ) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """Every piece of ``text`` that gives index terms, as (start, end, its terms), in order
    of start; ``cjk``: CJK runs are read too (they need the segmenter); ``only``: as for
    ``analyze``, CJK runs that cannot give one of these terms are skipped; ``query``: the
    text is a query, its runs cut afresh as ``analyze`` cuts them."""
    lowered = text.lower()
    return heapq.merge(*_term_passes(lowered, lang, cjk, only, query=query))


def _term_passes(lowered: str, lang: str | None, cjk: bool,
                 only: Iterable[str] | None, compounds: bool = True, query: bool = False
                 ) -> Iterator[Iterator[tuple[int, int, tuple[str, ...]]]]:
    """The pieces of ``iter_term_spans`` by kind (words, CJK runs, compounds, symbols), each
    in order of start."""
    yield _word_spans(lowered)
    if cjk:
        hint = lang if lang in ("ja", "zh") else text_hint(lowered)
        yield _cjk_spans(lowered, hint, _first_characters(only),
                         fresh_words if query else words)
    if compounds:
        yield _whole_spans(_COMPOUND, lowered)
    yield _whole_spans(_SYMBOLS, lowered)


def _word_spans(lowered: str) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    cache = _STEM_CACHE
    for match in _WORD.finditer(lowered):
        word = match.group()
        if not word.isascii():      # ASCII is already in normal form once lower-cased
            word = normalize(word)
        if word not in STOP_WORDS:
            yield match.start(), match.end(), (cache.get(word) or _stem(word),)


def _cjk_spans(lowered: str, hint: str | None, firsts: frozenset[str] | None,
               cut: Callable[[str, str], tuple[Word, ...]] = words
               ) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    for match in _CJK_RUN.finditer(lowered):
        run, start = match.group(), match.start()
        if firsts is not None and firsts.isdisjoint(run):
            continue
        lang = run_language(run, hint)
        if CJK_TERMS == "bigrams" or lang == "ko":
            if len(run) == 1:
                yield start, match.end(), (run,)
            for i in range(len(run) - 1 if len(run) > 1 else 0):
                yield start + i, start + i + 2, (run[i:i + 2],)
            continue
        for first, last, found in _shown_words(cut(run, lang)):
            if found:
                yield start + first, start + last, found


def _shown_words(cut: tuple[Word, ...]) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """(start, end, terms) of the words of a run as a reader sees them: katakana written
    together is one word even where the dictionary has two (プラグ|イン: プラグイン), and a
    Japanese verb or adjective ends with its endings (折りたたま|れ|た: 折りたたまれた)."""
    group: list[Word] = []
    for i, word in enumerate((*cut, None)):
        if word is not None and KATAKANA_WORD.fullmatch(word.text) and not word.function:
            group.append(word)
            continue
        if group:
            yield (group[0].start, group[-1].end,
                   tuple(normalize(t) for w in group for t in _word_terms(w)))
            group = []
        if word is not None and not (word.ending and i and _inflected(cut, i)):
            end = word.end
            if word.inflects and not word.function:
                for after in cut[i + 1:]:
                    if not after.ending:
                        break
                    end = after.end
            yield word.start, end, tuple(normalize(t) for t in _word_terms(word))


def _inflected(cut: tuple[Word, ...], i: int) -> bool:
    """True when the ending ``cut[i]`` is shown with the verb or adjective before it."""
    while i and cut[i - 1].ending:
        i -= 1
    return i > 0 and cut[i - 1].inflects and not cut[i - 1].function


def _whole_spans(pattern: re.Pattern[str], lowered: str
                 ) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    for match in pattern.finditer(lowered):
        if pattern is _SYMBOLS and _FURNITURE.match(match.group()):
            continue
        if pattern is _COMPOUND and _CJK_RUN.search(match.group()):
            continue
        yield match.start(), match.end(), (normalize(match.group()),)


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted spans with overlapping and touching ones joined."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged
