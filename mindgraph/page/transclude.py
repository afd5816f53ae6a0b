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

import re

from .anchors import heading_key
from .markdown import find_headings, mask_code, mask_comments
from .model import Link, Page

EMBED_MAX_CHARS = 2000
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")


def page_embeds(page: Page) -> tuple[Link, ...]:
    """The embeds of other notes in ``page`` (not pictures, media or files, not its own
    headings)."""
    return tuple(link for link in page.links
                 if link.syntax == "embed" and not link.is_attachment and not link.is_self
                 and link.line > 0)


def embedded_text(target: Page, link: Link, max_chars: int = EMBED_MAX_CHARS) -> str | None:
    """The text ``link`` (an embed) shows of ``target``; None when its heading or block is
    not there."""
    lines = target.body.split("\n")
    if link.block:
        text = _block_text(lines, link.block)
    elif link.heading:
        text = _heading_text(lines, link.heading)
    else:
        text = target.indexed_body.strip()
    if text is None:
        return None
    return _cut(text, max_chars)


def _heading_text(lines: list[str], heading: str) -> str | None:
    masked = mask_code(mask_comments("\n".join(lines)).split("\n"))
    headings = find_headings(lines, masked)
    wanted = heading_key(heading.split("#")[-1])
    for i, found in enumerate(headings):
        if heading_key(found.text) != wanted:
            continue
        end = next((h.line for h in headings[i + 1:] if h.level <= found.level),
                   len(lines) + 1)
        return "\n".join(lines[found.line - 1:end - 1]).strip()
    return None


def _block_text(lines: list[str], block: str) -> str | None:
    masked = mask_code(mask_comments("\n".join(lines)).split("\n"))
    marker = re.compile(r"(?:^|(?<=[\s\])]))\^" + re.escape(block) + r"\s*$", re.IGNORECASE)
    for i, line in enumerate(masked):
        match = marker.search(line)
        if match is None:
            continue
        own = lines[i][:match.start()].rstrip()
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


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = text.rfind("\n", 0, max_chars)
    return text[:cut if cut > max_chars // 2 else max_chars].rstrip()
