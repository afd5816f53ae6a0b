"""Line-level markdown scanning: code fences, inline code, headings and frontmatter.

Everything that must ignore code (headings, links, tags) works on *masked* lines: lines inside
fenced code become empty and inline code spans become spaces, so positions stay the same.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# where a line HEADING_RE may match starts ("#" after at most three spaces)
_HEADING_START = re.compile(r"^ {0,3}#", re.M)
HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
# compiled once (hot paths: every heading and comment of every note)
_CLOSING_HASHES = re.compile(r"[ \t]+#+$")
_NOT_NEWLINE = re.compile(r"[^\n]")
_SLUG_PUNCTUATION = re.compile(r"[`*_~\[\]()<>\"'!?.,:;{}|\\/=+^$@%&]")
_SLUG_SEPARATORS = re.compile(r"[\s#-]+")
INLINE_CODE_RE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_COMMENT_CLOSERS = {"%%": "%%", "<!--": "-->"}
FRONTMATTER_RE = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)",
                            re.S | re.M)


@dataclass(frozen=True)
class Heading:
    """An ATX heading outside code: 1-based line number, level 1-6 and its text."""

    line: int
    level: int
    text: str


def split_frontmatter(text: str) -> tuple[str | None, str, int]:
    """Split ``text`` into (frontmatter YAML or None, body, number of lines the block took)."""
    if not text.startswith("---"):
        return None, text, 0
    match = FRONTMATTER_RE.match(text)
    if not match:
        return None, text, 0
    block = match.group(1)
    consumed = text[: match.end()]
    return block, text[match.end():], consumed.count("\n") + (0 if consumed.endswith("\n") else 1)


def mask_code(lines: list[str]) -> list[str]:
    """Blank fenced code lines and inline code spans; keep line count and column positions."""
    masked: list[str] = []
    fence: tuple[str, int] | None = None
    for line in lines:
        if fence is None and "`" not in line and "~" not in line:
            masked.append(line)     # no fence, no inline code (most lines): no regex to run
            continue
        if fence is not None:
            match = FENCE_RE.match(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= fence[1] \
                    and not match.group(2).strip():
                fence = None
            masked.append("")
            continue
        match = FENCE_RE.match(line)
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = (match.group(1)[0], len(match.group(1)))
            masked.append("")
            continue
        if "`" in line:
            line = INLINE_CODE_RE.sub(lambda m: " " * len(m.group(0)), line)
        masked.append(line)
    return masked


def comment_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every Obsidian %%comment%% and HTML <!-- comment --> in ``text``.

    One pass with ``str.find``, linear in the text: a comment that is never closed is
    text, as is every later opener of its kind (none of them can have a closer either). A
    lazy regex (``%%.*?%%``) rescans to the end from each unclosed opener: quadratic, and a
    note of 100,000 "<!--" took minutes."""
    spans: list[tuple[int, int]] = []
    # the next position of each opener kind, searched again only once the scan passed it
    ahead = {o: text.find(o) for o in _COMMENT_CLOSERS}
    at = 0
    while True:
        for opener, position in ahead.items():
            if 0 <= position < at:
                ahead[opener] = text.find(opener, at)
        found = [(position, opener) for opener, position in ahead.items() if position >= 0]
        if not found:
            return spans
        start, opener = min(found)
        end = text.find(_COMMENT_CLOSERS[opener], start + len(opener))
        if end < 0:
            ahead[opener] = -1
            continue
        at = end + len(_COMMENT_CLOSERS[opener])
        spans.append((start, at))


def replace_comments(text: str, replace: Callable[[str], str]) -> str:
    """``text`` with every comment (see ``comment_spans``) replaced by ``replace(comment)``."""
    spans = comment_spans(text) if "%%" in text or "<!--" in text else []
    if not spans:
        return text
    pieces, last = [], 0
    for start, end in spans:
        pieces += [text[last:start], replace(text[start:end])]
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def mask_comments(text: str) -> str:
    """Replace Obsidian %%comments%% and HTML comments with spaces (newlines kept)."""
    return replace_comments(text, lambda comment: _NOT_NEWLINE.sub(" ", comment))


def find_headings(lines: list[str], masked_lines: list[str],
                  first_line: int = 1) -> list[Heading]:
    """ATX headings found in masked lines (so none inside code), text taken from ``lines``."""
    headings = []
    for offset, line in enumerate(masked_lines):
        if not line or line.lstrip(" ")[:1] != "#":
            continue
        if not HEADING_RE.match(line):
            continue
        match = HEADING_RE.match(lines[offset])
        if not match:
            continue
        text = (match.group(2) or "").strip()
        text = _CLOSING_HASHES.sub("", text).strip()
        if not text:
            continue
        headings.append(Heading(first_line + offset, len(match.group(1)), text))
    return headings


def heading_lines(text: str) -> int:
    """How many lines of ``text`` start as an ATX heading does (code included): at least
    its headings, found with one regex scan."""
    return sum(1 for _ in _HEADING_START.finditer(text))


def heading_count(text: str, past: int = 0) -> int:
    """How many ATX headings ``text`` (a whole note, frontmatter included) has outside code
    and comments, as ``parse_page`` finds them. A note with at most ``past`` lines that start
    as a heading does cannot have more than ``past`` headings: its count is not taken (0),
    so checking a cap costs a note under it one regex scan (counting them all took 13% of
    the ingest of a note of 9,000 headings)."""
    if text.count("#") <= past or heading_lines(text) <= past:
        return 0
    _, body, fm_lines = split_frontmatter(text)
    return len(find_headings(body.split("\n"), mask_code(mask_comments(body).split("\n")),
                             fm_lines + 1))


def slugify(text: str) -> str:
    """A URL-safe id fragment that keeps letters of every script (CJK included)."""
    text = _SLUG_PUNCTUATION.sub(" ", text.lower())
    return _SLUG_SEPARATORS.sub("-", text).strip("-") or "section"
