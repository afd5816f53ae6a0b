"""Add wikilinks where a note mentions another page's title, file name or alias.

Only the first mention of each page is linked, and never inside code, an existing link, a
heading, a callout title, a URL, an HTML tag, a tag or a comment; pages the note already
links to are left alone. In Chinese and Japanese, which have no spaces, a mention must start
and end on word boundaries (``mindgraph.text.cjk``) and never cut a katakana compound:
プレビューモード does not link ビュー, クレジットカード does not link クレジット. Matching ignores case but the text keeps its case:
``[[Target|text as written]]`` (with an escaped pipe inside tables). In a vault with pages in
several languages a mention links only to a page in the note's language (``TitleIndex.target``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from typing import Callable, Iterable, Iterator

from ..page.links import MDLINK_RE, WIKILINK_RE
from ..page.markdown import mask_code, mask_comments
from ..text.cjk import CJK_RUN, KATAKANA, text_hint, word_bounds
from .index import TitleIndex, latin_word_goes_on
from .normalise import heading_of
from .term_matcher import is_term, shorter_terms, term_spans

# Each span that must not be linked, with the strings one of which it cannot match without
# (a line holding none of them is not searched for it: most lines hold none).
_PROTECT_RES = (
    (("[[",), WIKILINK_RE),
    (("](",), MDLINK_RE),
    # a link MDLINK_RE bounds out (long text, an odd URL); one level of [brackets] inside
    (("](",), re.compile(r"\[(?:[^\[\]\n]|\[[^\[\]\n]*\]){0,2000}\]\([^)\n]*\)")),
    (("<",), re.compile(r"<(?:https?|mailto|ftp)[^>\s]*>")),       # autolinks
    (("://", "www.", "@"),
     re.compile(r"(?:https?|ftp|file|obsidian)://\S+|www\.\S+|\b[\w.+-]+@[\w-]+\.[\w.]+")),
    (("<",), re.compile(r"</?[A-Za-z][^<>\n]*>")),                  # HTML tags
    (("#",), re.compile(r"(?:(?<=\s)|^)#[\w\-/]+")),               # #tags
    (("[^",), re.compile(r"\[\^[^\]\n]*\]")),                        # footnote references
    (("^",), re.compile(r"\s\^[\w-]+\s*$")),                        # block ids
    (("$",), re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$")),              # inline math
)
# a line holding none of the needles above has nothing to protect (most lines)
_ANY_NEEDLE = re.compile("|".join(re.escape(needle) for needle in dict.fromkeys(
    n for needles, _ in _PROTECT_RES for n in needles)))
# A file name with one of these cannot be the target of a [[wikilink]]: # starts a heading,
# | an alias, ^ a block, and brackets end the link.
UNLINKABLE = "#|^[]"
_CALLOUT_RE = re.compile(r"^\s*(?:>\s*)+\[!")
_TABLE_RE = re.compile(r"^\s*(?:>\s*)*\|")
_BLANK = "\x00"


def add_links(body: str, source_path: str, index: TitleIndex,
              already_linked: Iterable[str] = ()) -> tuple[str, list[str]]:
    """The body with links added, and the pages linked (in order of first mention)."""
    if not index.terms or not body:
        return body, []
    lines = body.split("\n")
    linked = set(already_linked) | {source_path}
    refused: set[str] = set()       # pages Obsidian cannot link to by their name
    added: list[str] = []
    edits: dict[int, list[tuple[int, int, str]]] = {}
    targets: dict[str, str | None] = {}     # each mention's page (a note repeats its terms)

    def target_of(text: str) -> str | None:
        if text not in targets:
            targets[text] = index.target(text, source_path)
        return targets[text]

    def settled(text: str) -> bool:
        """True when a mention written ``text`` would add no link (no page, or its page is
        linked already or cannot be)."""
        target = target_of(text)
        return target is None or target in linked or target in refused

    for number, start, end, masked in _found(body, index, settled):
        written = lines[number][start:end]
        target = target_of(written)
        if target is None or target in linked or target in refused:
            continue
        name = index.link_target(target, source_path)
        if any(ch in name for ch in UNLINKABLE):   # Obsidian cannot link to this name
            refused.add(target)
            continue
        linked.add(target)
        added.append(target)
        edits.setdefault(number, []).append(
            (start, end, _link(name, written, bool(_TABLE_RE.match(masked)))))
    for number, changes in edits.items():
        text = lines[number]
        for start, end, replacement in sorted(changes, reverse=True):
            text = text[:start] + replacement + text[end:]
        lines[number] = text
    return "\n".join(lines), added


def find_mentions(body: str, index: TitleIndex) -> Iterator[tuple[int, re.Match[str]]]:
    """(line number, match) of every mention ``add_links`` may link, in order.

    The terms are matched in each line as written, exactly as ``TitleIndex.scan_mentions``
    matches them in the whole note, and a match that touches a protected span (code, a
    link, a URL, ...) is dropped: matching in the line with those spans blanked instead
    found mentions the scan did not ("Sync" in ``Synchttps://...``, "Beta Gamma" in
    ``www.alpha Beta Gamma``), so adding their page did not relink the note. A mention
    shortened to CJK word boundaries is one of the shorter terms the scan adds."""
    lines = body.split("\n")
    for number, start, end, _ in _found(body, index):
        match = index.pattern.fullmatch(lines[number], start, end)   # type: ignore[union-attr]
        assert match is not None        # the pattern's match there (see term_matcher.is_term)
        yield number, match


def _found(body: str, index: TitleIndex, settled: Callable[[str], bool] | None = None
           ) -> Iterator[tuple[int, int, int, str]]:
    """``find_mentions`` as spans (line number, start, end in the line), each with its line
    masked (code and comments blanked). No regex is needed: the spans are the pattern's
    (``term_spans``) and a shorter mention is one whose text is a term (``is_term``).

    With ``settled`` (the caller will not use a mention written so), a mention whose every
    outcome is settled is skipped unchecked, and so is a line holding only such mentions: most
    lines only repeat terms linked already (or with no page), and nothing there needs masking,
    protecting or cutting into words. A mention at CJK text may end up shorter (where it would
    cut a word): its outcomes are its text and the shorter terms it starts with
    (``term_matcher.shorter_terms``, which the scan adds for the same reason), so only when
    all of them are settled is it skipped without segmenting its line.

    The pattern's matches are found once over the whole body, not once per line (by the
    Aho-Corasick automaton of ``term_matcher``, the very spans ``pattern.finditer`` gives):
    no term holds a newline and the pattern's boundaries see a newline as they see either
    end of a line, so its matches are those of each line, in order. Only a line with a match is then masked,
    protected and checked (most lines have none)."""
    if not body:
        return
    spans = term_spans(index, body)      # pattern.finditer's spans, found faster
    if not spans:
        return
    unused = None if settled is None else _adds_nothing(index, settled)
    lines: list[str] = []
    masked: list[str] = []
    starts: list[int] = []
    hint: str | None = None
    at, count = 0, len(spans)
    while at < count:
        if unused is not None and unused(body[spans[at][0]:spans[at][1]]):
            at += 1                         # nothing new to link with this mention
            continue
        if not lines:       # the first mention to check: the body as lines, masked
            lines = body.split("\n")
            masked = mask_code(mask_comments(body).split("\n"))
            # where each line starts: the lengths of the lines before it, with their newline
            starts = list(accumulate(map((1).__add__, map(len, lines)), initial=0))
            hint = text_hint(body)
        number = bisect_right(starts, spans[at][0]) - 1
        base, after = starts[number], starts[number + 1]
        stop = at
        while stop < count and spans[stop][0] < after:
            stop += 1
        in_line, at = spans[at:stop], stop
        original, line = lines[number], masked[number]
        if not line.strip() or heading_of(original) is not None or _CALLOUT_RE.match(line):
            continue
        searchable = _protect(line)
        runs: _RunBounds | None = None
        for start, end in in_line:
            start, end = start - base, end - base
            if unused is not None and unused(original[start:end]):
                continue                    # settled (maybe by a link made in this line)
            if searchable[start:end] != original[start:end]:
                continue                    # inside code, a link, a URL, a tag, ...
            if _cuts_cjk_word(original, start, end, None):
                if runs is None:
                    runs = _RunBounds(original, hint)
                stop = _on_word_bounds(index, original, start, end, runs.around(start, end))
                if stop is not None:
                    yield number, start, stop, line
            else:       # the match the pattern makes in the line alone (it sees the same)
                yield number, start, end, line


def _adds_nothing(index: TitleIndex, settled: Callable[[str], bool]) -> Callable[[str], bool]:
    """A test of a mention's text: True when linking it can add no link, whatever its
    line holds. A mention that starts or ends with a CJK character may be cut short to one
    of the shorter terms it starts with (``_on_word_bounds``; ``term_matcher.shorter_terms``,
    which the scan adds for the same reason): it adds nothing only if they are all settled.
    A text found so is remembered: settled stays settled (pages linked only grow)."""
    done: set[str] = set()
    cjk_at = CJK_RUN.match

    def unused(written: str) -> bool:
        if written in done:
            return True
        if not settled(written):
            return False
        if (cjk_at(written, 0, 1) or cjk_at(written, len(written) - 1)) \
                and not all(map(settled, shorter_terms(index, written))):
            return False
        done.add(written)
        return True

    return unused


class _RunBounds:
    """The CJK word boundaries of one line, segmented a run at a time, only for the runs a
    mention touches (``word_bounds`` of the whole line segmented every run of a paragraph
    for the one or two a mention sits in).

    Runs are maximal, so two never touch: every boundary ``_cuts_cjk_word`` and
    ``_on_word_bounds`` ask about for a span (its edges next to a CJK character, the offsets
    inside it) lies in a run the span overlaps, and the boundaries of those runs are the
    whole line's there."""

    def __init__(self, line: str, hint: str | None):
        self.line = line
        # the line's own hint, as word_bounds takes it: no kana in the note, none in the line
        self.hint = hint or text_hint(line)
        self.runs = [found.span() for found in CJK_RUN.finditer(line)]
        self.done: dict[int, set[int]] = {}      # each run's start -> its boundaries

    def around(self, start: int, end: int) -> set[int]:
        """The word boundaries of every run the span [start, end) overlaps."""
        bounds: set[int] = set()
        for low, high in self.runs:
            if high <= start:
                continue
            if low >= end:
                break
            found = self.done.get(low)
            if found is None:
                found = self.done[low] = {low + at for at in word_bounds(self.line[low:high],
                                                                          self.hint)}
            bounds |= found
        return bounds


def _cuts_cjk_word(line: str, start: int, end: int, bounds: set[int] | None) -> bool:
    """True when the span [start, end) of ``line`` may cut a CJK word: it starts or ends at a
    CJK character (with ``bounds``: not on one of those word boundaries), or it splits a run
    of katakana, which Japanese writes as one word (クレジット|カード)."""
    for edge, inside, outside in ((start, start, start - 1), (end, end - 1, end)):
        if not CJK_RUN.match(line, inside, inside + 1):
            continue
        if bounds is None or edge not in bounds:
            return True
        if 0 <= outside < len(line) and KATAKANA.match(line, inside, inside + 1) \
                and KATAKANA.match(line, outside, outside + 1):
            return True
    return False


def _on_word_bounds(index: TitleIndex, line: str, start: int, end: int,
                    bounds: set[int]) -> int | None:
    """Where the longest mention starting at ``start`` (a match up to ``end``) that cuts no
    CJK word ends, or None."""
    # the end, then each word boundary inside the span, longest first (a span is a few
    # characters; the line's boundaries may be hundreds)
    for stop in (end, *(e for e in range(end - 1, start, -1) if e in bounds)):
        if latin_word_goes_on(line[stop:stop + 1]):     # a Latin word goes on
            continue
        if is_term(index, line[start:stop]) and not _cuts_cjk_word(line, start, stop, bounds):
            return stop
    return None


def _protect(line: str) -> str:
    """The line with every span that must not be linked blanked out (positions kept)."""
    if not _ANY_NEEDLE.search(line):
        return line
    for needles, pattern in _PROTECT_RES:
        if any(needle in line for needle in needles) and pattern.search(line):
            line = pattern.sub(lambda m: _BLANK * len(m.group(0)), line)
    return line


def _link(target: str, written: str, in_table: bool) -> str:
    if written == target:
        return f"[[{target}]]"
    pipe = "\\|" if in_table else "|"  # a bare pipe would split the table cell
    return f"[[{target}{pipe}{written}]]"
