"""A note's raw HTML as the words a reader sees, for the text a person or an agent reads of
a page (search snippets, timeline mentions): ``<img src="cat.png" alt="the cat">`` is "the
cat", ``<small>Released May 5</small>`` is "Released May 5"; HTML in `code` is text."""

from __future__ import annotations

import re

_CODE_SPAN = re.compile(r"(`[^`\n]*`)")
# a note's raw HTML tag (``<img src="x.png" alt="A map">``, ``<kbd>``, ``</b>``), not an
# autolink (``<https://…>``) nor a comparison (``a < b``): a tag name, then space or the end
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_HTML_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)")
# tags inside a line of text: they go without a space (``<b>同期</b>の設定`` is 同期の設定)
_INLINE_TAGS = frozenset({"a", "abbr", "b", "bdi", "bdo", "cite", "code", "del", "dfn", "em",
                          "font", "i", "ins", "kbd", "mark", "q", "rp", "rt", "ruby", "s",
                          "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var"})
_ALT = re.compile(r"""\balt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.IGNORECASE)


def html_words(text: str) -> str:
    """``text`` with its raw HTML tags gone: an image leaves its ``alt``, an inline tag
    nothing, another a space; in `code` the HTML stays."""
    def words(tag: re.Match) -> str:
        name = _HTML_TAG_NAME.match(tag.group(0)).group(1).lower()
        alt = _ALT.search(tag.group(0)) if name == "img" else None
        if alt:
            return f" {next(g for g in alt.groups() if g is not None)} "
        return "" if name in _INLINE_TAGS else " "
    if "<" not in text:
        return text
    return "".join(piece if piece.startswith("`") else _HTML_TAG.sub(words, piece)
                   for piece in _CODE_SPAN.split(text))
