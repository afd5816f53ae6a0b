"""Normalise a note body: consistent heading levels, clean whitespace, code left untouched.

The H1 the title comes from (the first heading, when it is an H1 equal to the title) leaves
the body; other H1s become H2, a note that starts at H3 moves up, and no level is skipped.
Outside fenced code, trailing whitespace is removed, runs of blank lines collapse to one, and
headings get a blank line around them. Fenced code is copied byte for byte.
"""

from __future__ import annotations

import re

from ..page.markdown import FENCE_RE, HEADING_RE

# the closing hashes of an ATX heading ("## Title ##"): compiled once, not looked up in
# re's cache for each of a vault's ~200,000 lines
_CLOSING_HASHES = re.compile(r"[ \t]+#+$")
# how a line HEADING_RE can match starts: "#" after at most three spaces
HEADING_STARTS = ("#", " #", "  #", "   #")


def code_mask(lines: list[str]) -> list[bool]:
    """True for each line that belongs to a fenced code block (fence lines included)."""
    joined = "\n".join(lines)
    if "```" not in joined and "~~~" not in joined:     # no fence (most notes): no code
        return [False] * len(lines)
    mask: list[bool] = []
    fence: tuple[str, int] | None = None
    for line in lines:
        match = FENCE_RE.match(line)
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= fence[1] \
                    and not match.group(2).strip():
                fence = None
            mask.append(True)
            continue
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = (match.group(1)[0], len(match.group(1)))
            mask.append(True)
            continue
        mask.append(False)
    return mask


def heading_of(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line, or None."""
    if not line.startswith(HEADING_STARTS):     # most lines: no regex to run
        return None
    match = HEADING_RE.match(line)
    if not match or not (match.group(2) or "").strip():
        return None
    text = _CLOSING_HASHES.sub("", match.group(2).strip()).strip()
    return (len(match.group(1)), text) if text else None


def normalise_body(body: str, title: str) -> str:
    """The body with its title H1 removed, headings levelled and whitespace cleaned."""
    lines = body.split("\n")
    in_code = code_mask(lines)
    drop = _title_h1(lines, in_code, title)
    # "#" in a line's first four characters: all a heading can start with (most lines fail)
    headings = {i: h for i, line in enumerate(lines)
                if "#" in line[:4] and not in_code[i] and i != drop
                and (h := heading_of(line)) is not None}
    order = sorted(headings)
    new_level = dict(zip(order, _levelled([headings[i][0] for i in order])))
    out: list[str] = []
    # True while the last line written is a blank one outside code (or none is written yet):
    # where a heading needs no blank line before it and a blank line is not repeated
    blank = True
    for i, line in enumerate(lines):
        if i == drop:
            continue
        if in_code[i]:
            out.append(line)
            blank = False
        elif i in headings:
            if not blank:
                out.append("")
            out.append("#" * new_level[i] + " " + headings[i][1])
            out.append("")
            blank = True
        elif stripped := line.rstrip():
            out.append(stripped)
            blank = False
        elif not blank:
            out.append("")
            blank = True
    if blank and out:       # a blank line outside code ends the body: it goes
        out.pop()
    return "\n".join(out)


def _title_h1(lines: list[str], in_code: list[bool], title: str) -> int | None:
    """Index of the H1 the title comes from: the first heading, an H1 equal to the title."""
    wanted = " ".join(title.split()).lower()
    for i, line in enumerate(lines):
        heading = None if in_code[i] else heading_of(line)
        if heading is not None:
            level, text = heading
            return i if level == 1 and " ".join(text.split()).lower() == wanted else None
    return None


def _levelled(levels: list[int]) -> list[int]:
    """Levels with H2 at the top (stray H1s become H2; a note that starts at H3 moves up)
    and no heading more than one level deeper than the one before it."""
    if not levels:
        return []
    lift = max(0, min(levels) - 2)
    out: list[int] = []
    previous = 1
    for level in levels:
        new = min(max(level - lift, 2), previous + 1, 6)
        out.append(new)
        previous = new
    return out
