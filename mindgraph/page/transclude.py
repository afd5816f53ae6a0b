"""What an embed shows: the text of ``![[Note]]``, ``![[Note#Heading]]`` and ``![[Note#^id]]``.

Obsidian shows an embedded note inline, so a reader of the embedding page reads that text
there. Like Obsidian:
- a heading embed shows the heading and everything under it down to the next heading of the
  same or a higher level (its subsections included); a nested heading (``A#B``) is found by
  its last part, matched loosely (letters and digits, any case: ``anchors.heading_key``);
- a block embed shows the block that carries the id: the paragraph or list item that ends in
  `` ^id``, or, for an id alone on its line, the block just above it (a callout, a list, a
  table);
- a whole-note embed shows the note; here its text from the start, cut at ``max_chars``.
Every text is cut at ``max_chars`` (at a line end when there is one), and its own embeds are
left as written: embeds are expanded one level deep, so a cycle (A embeds B embeds A) ends.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import NamedTuple

from .anchors import heading_key
from .markdown import find_headings, mask_code, mask_comments
from .model import Link, Page

EMBED_MAX_CHARS = 2000
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_INNER_MARKER_RE = re.compile(r"[\s\])]\^")     # a " ^" inside an id: it ends no line's last


def page_embeds(page: Page) -> tuple[Link, ...]:
    """The embeds of other notes in ``page`` (not pictures, media or files, not its own
    headings)."""
    return tuple(link for link in page.links
                 if link.syntax == "embed" and not link.is_attachment and not link.is_self
                 and link.line > 0)


class _Outline(NamedTuple):
    """What finding a heading or a block in a body needs, computed once a body."""

    lines: list[str]
    masked: str                     # the lines, code and comments masked, joined again
    starts: list[int]               # where each line starts in ``masked``
    headings: list                  # find_headings's
    first_heading: dict[str, int]   # heading_key → the index of its first heading
    first_block: dict[str, int]     # the " ^id" that ends a line (lowercase) → where first
    found: dict[str, int]           # a block itself holding a " ^" (lowercase) → where


@functools.lru_cache(maxsize=4)      # a few bodies: an outline holds its body twice
def _outline(body: str) -> _Outline:
    """The outline of ``body``: found once, not once an embed (masking a page of 60,000
    lines and finding its headings took 60 ms, and a page view draws up to 512 embeds of
    it: 30 s, a 504 holding the dashboard's slow lane)."""
    lines = body.split("\n")
    masked = mask_code(mask_comments(body).split("\n"))
    headings = find_headings(lines, masked)
    first: dict[str, int] = {}
    for i, found in enumerate(headings):
        first.setdefault(heading_key(found.text), i)
    starts, blocks, at = [], {}, 0
    for line in masked:
        starts.append(at)
        if "^" in line and (marker := _last_marker(line)) >= 0:
            if block := line[marker + 1:].rstrip().lower():
                blocks.setdefault(block, at + marker)
        at += len(line) + 1
    return _Outline(lines, "\n".join(masked), starts, headings, first, blocks, {})


def _last_marker(line: str) -> int:
    """Where the last ``^`` of ``line`` that may start a block id is (at the line's start or
    after a space, ``]`` or ``)``), or -1. What follows it to the line's end is the only id
    the line can carry, unless an id itself holds such a ``^`` (``_block_marker``)."""
    at = len(line)
    while (at := line.rfind("^", 0, at)) >= 0:
        if at == 0 or line[at - 1].isspace() or line[at - 1] in "])":
            return at
    return -1


def embedded_text(target: Page, link: Link, max_chars: int = EMBED_MAX_CHARS) -> str | None:
    """The text ``link`` (an embed) shows of ``target``; None when its heading or block is
    not there."""
    if link.block:
        text = _block_text(_outline(target.body), link.block)
    elif link.heading:
        text = _heading_text(_outline(target.body), link.heading)
    else:
        text = target.indexed_body.strip()
    if text is None:
        return None
    return _cut(text, max_chars)


def _heading_text(outline: _Outline, heading: str) -> str | None:
    lines, headings = outline.lines, outline.headings
    i = outline.first_heading.get(heading_key(heading.split("#")[-1]))
    if i is None:
        return None
    found = headings[i]
    end = next((h.line for h in headings[i + 1:] if h.level <= found.level), len(lines) + 1)
    return "\n".join(lines[found.line - 1:end - 1]).strip()


def _block_text(outline: _Outline, block: str) -> str | None:
    lines = outline.lines
    key = block.lower()
    if not _INNER_MARKER_RE.search(block) and block == block.rstrip():
        # the id after its line's last marker: every line's indexed once, a lookup here
        at = outline.first_block.get(key, -1)
    elif (at := outline.found.get(key, -2)) == -2:
        at = outline.found[key] = _block_marker(outline.masked, block)
    if at >= 0:
        i = bisect.bisect_right(outline.starts, at) - 1
        own = lines[i][:at - outline.starts[i]].rstrip()
        if own.strip():                     # "text ^id": this paragraph or list item
            if _LIST_ITEM_RE.match(own):
                return own.strip()
            first = last = i
            while last + 1 < len(lines) and lines[last + 1].strip():
                last += 1
        else:                               # "^id" alone: the block just above
            first = last = i - 1
            if last < 0 or not lines[last].strip():
                return ""
        while first > 0 and lines[first - 1].strip():
            first -= 1
        body = lines[first:last + 1]
        if first <= i <= last:
            body[i - first] = own
        return "\n".join(body).strip()
    return None


def _block_marker(masked: str, block: str) -> int:
    """Where the first `` ^block`` that ends a line of ``masked`` starts (any case; at a
    line's start or after a space or ``]`` or ``)``), or -1: searched from each ``^`` on,
    not tried at every character (a page of 1 MB: 27 ms an embed)."""
    marker = re.compile(r"\^" + re.escape(block) + r"[^\S\n]*$", re.IGNORECASE | re.MULTILINE)
    match = marker.search(masked)
    while match is not None:
        at = match.start()
        if at == 0 or masked[at - 1].isspace() or masked[at - 1] in "])":
            return at
        match = marker.search(masked, at + 1)
    return -1


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = text.rfind("\n", 0, max_chars)
    return text[:cut if cut > max_chars // 2 else max_chars].rstrip()
