"""Where a note mentions index terms: the title regex's matches, found by an Aho-Corasick
automaton (``ahocorasick_rs``) instead of the regex: 4x faster over the Obsidian Help vault, 6x over 10,000 generated notes.

``term_spans(index, text)`` is exactly ``[m.span() for m in index.pattern.finditer(text)]``:
the regex (``TitleIndex.pattern``) matches at the leftmost position it can, the longest term
there whose ends pass its boundaries (no Latin letter or digit before or after), ignoring case
as ``re.IGNORECASE`` does. The automaton finds every occurrence of every term (overlapping) in
the text folded to one character per character (``fold``: what ``re.IGNORECASE`` holds equal
folds equal, and positions are kept: "İ".lower() is two characters, so İ folds as the regex
folds it, to "i"), then the boundaries are checked and the leftmost longest kept, as the regex
does. When the automaton cannot reproduce the regex (two terms that differ only in characters
the regex holds equal, like "ſ" and "s", which the regex tries in order rather than longest
first; or a pattern not built from the index's terms), the regex runs instead.

The regex itself is not built while the automaton can stand for it (``TitleIndex.pattern``:
~0.05 s over the vault's 1,300 terms, in the parent before any worker forks): whether a text
is a term, as ``pattern.fullmatch`` tells, is whether its fold is a term's fold
(``is_term``), and ``shorter_terms`` is ``TitleIndex._shorter_terms`` so found.

``scan_mentions`` is ``TitleIndex.scan_mentions`` over those spans. It lives here, not in
index.py, because that module's source is part of every note's recorded terms digest:
editing it would rescan every note of every workspace once.
"""

from __future__ import annotations

import re
import weakref
from operator import itemgetter
from typing import Any

import _sre

try:        # the sets of characters re.IGNORECASE holds equal beyond their lower case
    from re._compiler import _EXTRA_CASES  # type: ignore[attr-defined]
except ImportError:     # another Python's re: the regex runs (``matcher`` gives None)
    _EXTRA_CASES = None

from ..text.cjk import CJK_RUN
from .index import _WORD, TitleIndex, _trie_regex, latin_word_goes_on

# re.IGNORECASE holds two characters equal when their simple lower cases are equal, or in one
# of these sets (i/ı, s/ſ, µ/μ, σ/ς, ...): each set folds to its smallest member.
_SETS: dict[int, int] = {}
for _lower, _others in (_EXTRA_CASES or {}).items():
    _SETS[_lower] = min(_lower, *_others)
_FIX = {chr(k): chr(v) for k, v in _SETS.items() if k != v}
_FIX_RE = re.compile("[" + "".join(re.escape(c) for c in sorted(_FIX)) + "]" if _FIX else "(?!)")
_FIX_TABLE = str.maketrans(_FIX)
# str.lower() is the simple lower case of each character but for İ (two characters) and a
# final Σ (ς, which folds with σ anyway)
_DOTTED_I = "\u0130"
_WORD_RE = re.compile(_WORD, re.I)     # the pattern's boundary class, with its flags
_IS_WORD: dict[str, bool] = {}          # each character seen: in that class?
_START, _END = itemgetter(1), itemgetter(2)     # of the automaton's (term, start, end)

# id(pattern) -> (a weak reference to it, its _Terms): not a WeakKeyDictionary, which
# hashes the pattern (its whole source, 30 µs a look-up over the vault's terms)
_MATCHERS: dict[int, tuple[weakref.ref, Any]] = {}
# indexes whose pattern was not built from their own terms (a scoped index's)
_FOREIGN: "weakref.WeakKeyDictionary[TitleIndex, re.Pattern[str]]" = weakref.WeakKeyDictionary()


def fold(text: str) -> str:
    """``text`` with each character replaced by the one ``re.IGNORECASE`` holds it equal to
    (the same length: position i of the result stands for position i of ``text``)."""
    if text.isascii():      # each ASCII letter's lower case is all the regex holds it equal to
        return text.lower()
    if _DOTTED_I in text:
        text = text.replace(_DOTTED_I, chr(_sre.unicode_tolower(ord(_DOTTED_I))))
    text = text.lower()
    return text.translate(_FIX_TABLE) if _FIX_RE.search(text) else text


def term_spans(index: TitleIndex, text: str) -> list[tuple[int, int]]:
    """``[m.span() for m in index.pattern.finditer(text)]``, found faster."""
    if not text:
        return []
    automaton = matcher(index)
    if automaton is None:
        pattern = index.pattern
        return [found.span() for found in pattern.finditer(text)] if pattern is not None else []
    found = automaton.find_matches_as_indexes(fold(text), overlapping=True)
    if not found:
        return []
    # leftmost first, the longest first at one start (two stable sorts by C key functions)
    found.sort(key=_END, reverse=True)
    found.sort(key=_START)
    spans: list[tuple[int, int]] = []
    after = 0
    size = len(text)
    word = _IS_WORD
    for _, start, end in found:
        if start < after:
            continue
        if start:
            char = text[start - 1]
            before = word.get(char)
            if before or before is None and _is_word(char):
                continue
        if end < size:
            char = text[end]
            next_ = word.get(char)
            if next_ or next_ is None and _is_word(char):
                continue
        spans.append((start, end))
        after = end
    return spans


def _is_word(char: str) -> bool:
    """True when ``char`` is in the pattern's boundary class (remembered)."""
    found = _IS_WORD[char] = _WORD_RE.match(char) is not None
    return found


class _Terms:
    """An index's terms as the automaton matches them: the automaton, each term folded, and
    the shorter terms found per spelling."""

    def __init__(self, automaton: Any, folded: list[str]):
        self.automaton = automaton
        self.folded = frozenset(folded)
        self.shorter: dict[str, tuple[str, ...]] = {}


# where an index keeps its _Terms (copies made by ``with_generic_terms`` share it), when they
# were made from its own terms without its pattern
_OWN = "_term_matcher"
_UNSET = object()
# every _Terms made so, each with the terms it was made of: a pattern built later from those
# terms (``within`` hands its index's pattern to a scoped index) uses it too
_MADE: "weakref.WeakKeyDictionary[_Terms, list[str]]" = weakref.WeakKeyDictionary()


def matcher(index: TitleIndex) -> Any:
    """The automaton of ``index.pattern``'s terms, built once per index and its copies, or
    per pattern (a scoped index shares its parent's pattern), or None when it would not
    match as the pattern does."""
    terms = _terms(index)
    return None if terms is None else terms.automaton


def _terms(index: TitleIndex) -> _Terms | None:
    known = index.__dict__.get(_OWN, _UNSET)
    if known is not _UNSET:
        return known
    if _EXTRA_CASES is None:
        return None
    if "pattern" not in index.__dict__:     # the automaton is made from the index's terms
        terms = list(index.terms)
        built = index.__dict__[_OWN] = _automaton(terms) if terms else None
        if built is not None:
            _MADE[built] = terms
        return built
    pattern = index.pattern     # built before (maybe handed over by ``within``)
    if pattern is None:
        return None
    known = _MATCHERS.get(id(pattern))
    if known is not None and known[0]() is pattern:
        return known[1]
    if _FOREIGN.get(index) is pattern:
        return None
    terms = list(index.terms)
    built = None
    for made, made_of in list(_MADE.items()):
        if _made_from(pattern, made_of):
            built = made        # a pattern of another index's terms, automaton made already
            break
    if built is None:
        # a pattern made before (or handed over by ``within``) is checked against these
        # terms by making its source again (the trie of 10,000 notes' titles: ~0.3 s)
        if not _made_from(pattern, terms):
            # not built from this index's terms (``within`` keeps its parent's pattern): the
            # parent's automaton is used once the parent has built it
            _FOREIGN[index] = pattern
            return None
        built = _automaton(terms)
    key = id(pattern)
    _MATCHERS[key] = weakref.ref(pattern, lambda _: _MATCHERS.pop(key, None)), built
    return built


def is_term(index: TitleIndex, text: str) -> bool:
    """True when ``text`` is one of the index's terms, as ``index.pattern.fullmatch(text)``
    tells where the text before it passed the pattern's start boundary."""
    terms = _terms(index)
    if terms is None:
        pattern = index.pattern
        return pattern is not None and pattern.fullmatch(text) is not None
    return fold(text) in terms.folded


def shorter_terms(index: TitleIndex, matched: str) -> tuple[str, ...]:
    """``index._shorter_terms(matched)``: the shorter terms a mention written ``matched``
    starts with, where the linker may end it (not inside a Latin word)."""
    terms = _terms(index)
    if terms is None:
        return index._shorter_terms(matched)
    shorter = terms.shorter.get(matched)
    if shorter is None:
        folded = terms.folded
        shorter = terms.shorter[matched] = tuple(
            matched[:stop] for stop in range(1, len(matched))
            if not latin_word_goes_on(matched[stop]) and fold(matched[:stop]) in folded)
    return shorter


def _made_from(pattern: re.Pattern[str], terms: list[str]) -> bool:
    """True when ``pattern`` is the one TitleIndex.pattern makes of ``terms``."""
    first = "".join(sorted({re.escape(t[0]) for t in terms}))
    return pattern.pattern == rf"(?=[{first}])(?<!{_WORD})(?:{_trie_regex(terms)})(?!{_WORD})" \
        and bool(pattern.flags & re.I)


def _automaton(terms: list[str]) -> _Terms | None:
    folded = [fold(term) for term in terms]
    if any(f != t for f, t in zip(folded, terms)) and _forks_at_equal_characters(terms, folded):
        return None
    import ahocorasick_rs

    return _Terms(ahocorasick_rs.AhoCorasick(folded), folded)


def _forks_at_equal_characters(terms: list[str], folded: list[str]) -> bool:
    """True when two terms fork at characters the regex holds equal ("ſx" and "sy"): the
    regex tries one branch of its trie (the first in code point order) before the other,
    not the longest term first, so the automaton would not match as it does."""
    seen: dict[str, str] = {}
    for term, key in zip(terms, folded):
        for end in range(1, len(term) + 1):
            if seen.setdefault(key[:end], term[:end]) != term[:end]:
                return True
    return False


def scan_mentions(index: TitleIndex, text: str) -> tuple[str, ...]:
    """``index.scan_mentions(text)``: the terms ``text`` mentions, sorted, and where a
    mention touches CJK text the shorter terms it starts with."""
    found = {text[start:end] for start, end in term_spans(index, text)}
    if not text.isascii():      # a mention starting or ending with a CJK character
        cjk_at = CJK_RUN.match
        for matched in list(found):
            if cjk_at(matched, 0, 1) or cjk_at(matched, len(matched) - 1):
                found.update(shorter_terms(index, matched))
    return tuple(sorted({" ".join(term.split()).lower() for term in found}))
