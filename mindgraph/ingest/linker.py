"""Add wikilinks where a note mentions another page's title, file name or alias.

Only the first mention of each page is linked, and never inside code, an existing link, a
heading, a callout title, a URL, an HTML tag, a tag or a comment; pages the note already
links to are left alone. Matching ignores case but the text keeps its case:
``[[Target|text as written]]`` (with an escaped pipe inside tables).
"""

from __future__ import annotations

import re
from typing import Iterable

from ..page.links import MDLINK_RE, WIKILINK_RE
from ..page.markdown import mask_code, mask_comments
from .index import TitleIndex
from .normalise import heading_of

_PROTECT_RES = (
    WIKILINK_RE,
    MDLINK_RE,
    # a link MDLINK_RE bounds out (long text, an odd URL); one level of [brackets] inside
    re.compile(r"\[(?:[^\[\]\n]|\[[^\[\]\n]*\]){0,2000}\]\([^)\n]*\)"),
    re.compile(r"<(?:https?|mailto|ftp)[^>\s]*>"),       # autolinks
    re.compile(r"(?:https?|ftp|file|obsidian)://\S+|www\.\S+|\b[\w.+-]+@[\w-]+\.[\w.]+"),
    re.compile(r"</?[A-Za-z][^<>\n]*>"),                  # HTML tags
    re.compile(r"(?:(?<=\s)|^)#[\w\-/]+"),               # #tags
    re.compile(r"\[\^[^\]\n]*\]"),                        # footnote references
    re.compile(r"\s\^[\w-]+\s*$"),                        # block ids
    re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$"),              # inline math
)
# A file name with one of these cannot be the target of a [[wikilink]]: # starts a heading,
# | an alias, ^ a block, and brackets end the link.
UNLINKABLE = "#|^[]"
_CALLOUT_RE = re.compile(r"^\s*(?:>\s*)+\[!")
_TABLE_RE = re.compile(r"^\s*(?:>\s*)*\|")
_BLANK = "\x00"


def add_links(body: str, source_path: str, index: TitleIndex,
              already_linked: Iterable[str] = ()) -> tuple[str, list[str]]:
    """The body with links added, and the pages linked (in order of first mention)."""
    if index.pattern is None or not body:
        return body, []
    lines = body.split("\n")
    masked = mask_code(mask_comments(body).split("\n"))
    linked = set(already_linked) | {source_path}
    added: list[str] = []
    edits: dict[int, list[tuple[int, int, str]]] = {}
    for number, line in enumerate(masked):
        if not line.strip() or heading_of(lines[number]) is not None \
                or _CALLOUT_RE.match(line):
            continue
        searchable = _protect(line)
        for match in index.pattern.finditer(searchable):
            term = match.group(0)
            target = index.target(term, source_path)
            if target is None or target in linked:
                continue
            name = index.link_target(target, source_path)
            if any(ch in name for ch in UNLINKABLE):   # Obsidian cannot link to this name
                continue
            linked.add(target)
            added.append(target)
            written = lines[number][match.start():match.end()]
            edits.setdefault(number, []).append(
                (match.start(), match.end(), _link(name, written,
                                                   bool(_TABLE_RE.match(line)))))
    for number, changes in edits.items():
        text = lines[number]
        for start, end, replacement in sorted(changes, reverse=True):
            text = text[:start] + replacement + text[end:]
        lines[number] = text
    return "\n".join(lines), added


def _protect(line: str) -> str:
    """The line with every span that must not be linked blanked out (positions kept)."""
    for pattern in _PROTECT_RES:
        if pattern.search(line):
            line = pattern.sub(lambda m: _BLANK * len(m.group(0)), line)
    return line


def _link(target: str, written: str, in_table: bool) -> str:
    if written == target:
        return f"[[{target}]]"
    pipe = "\\|" if in_table else "|"  # a bare pipe would split the table cell
    return f"[[{target}{pipe}{written}]]"
