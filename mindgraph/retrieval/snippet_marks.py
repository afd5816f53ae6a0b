"""Where a snippet's ``**`` marks go (the dashboard draws them as ``<mark>``, an agent reads
them as markdown bold): around the query's words, never inside a code span.

A snippet keeps a note's inline code as written, ``**`` and all (``present.readable``): a
mark put inside one (```**canvas**.json```) could not be told from the code's own ``**``, and
a reader pairing the marks took ```a ** b``` for the start of one. So a match in a code span
marks the whole span (``**`canvas.json`**``), a window does not start or end inside one, and
a reader takes what is between backticks as text, as markdown does (the dashboard's
``marked``: the same ``CODE_SPAN``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .analyzer import merge_spans

CODE_SPAN = re.compile(r"`[^`]*`")      # a code span as a snippet's reader finds it
_EDGE_SLACK = 120                       # a window edge moves this far at most to take a span


def outside_code(text: str, begin: int, end: int) -> tuple[int, int]:
    """The window ``text[begin:end]`` widened so that no code span of ``text`` is cut by an
    edge (an edge inside a longer span than ``_EDGE_SLACK`` stays)."""
    for code in CODE_SPAN.finditer(text):
        if code.start() >= end:
            break
        if code.start() < begin < code.end() and begin - code.start() <= _EDGE_SLACK:
            begin = code.start()
        if code.start() < end < code.end() and code.end() - end <= _EDGE_SLACK:
            end = code.end()
    return begin, end


def marked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span in ``**``, a span that touches a code span covering it whole."""
    codes = [code.span() for code in CODE_SPAN.finditer(text)]
    widened = []
    for start, end in spans:
        for code_start, code_end in codes:
            if code_start < end and start < code_end:
                start, end = min(start, code_start), max(end, code_end)
        widened.append((start, end))
    out, cursor = [], 0
    for start, end in merge_spans(widened):
        out += [text[cursor:start], "**", text[start:end], "**"]
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


__all__ = ["CODE_SPAN", "marked", "outside_code"]
