"""A page's leading summary callout, when it only repeats the page's own sentences.

The offline compiler opens each page with ``> [!summary]`` holding sentences taken from the
body. Indexed and quoted as well, every such sentence would count twice and show twice in a
snippet, so such a callout is left out of the section text (the page file keeps it). A summary
that says something the body does not (a model's or a person's) is ordinary text and stays.
"""

from __future__ import annotations

import re

from .links import replace_links

_SUMMARY_RE = re.compile(r"^[ \t]*>[ \t]*\[!(?:summary|abstract|tldr)\][+-]?[ \t]*(.*)$", re.I)
_QUOTED_RE = re.compile(r"^[ \t]*>[ \t]?(.*)$")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_NOT_WORD_RE = re.compile(r"[\W_]+")


def copied_summary(lines: list[str], masked: list[str]) -> tuple[int, int]:
    """``(start, end)``: the body lines of a leading summary callout whose every sentence is
    also in the rest of the body (``(0, 0)`` when there is none)."""
    start = 0
    while start < len(lines) and (not masked[start].strip()
                                  or masked[start].startswith("# ")):
        start += 1
    if start == len(lines) or not (first := _SUMMARY_RE.match(masked[start])):
        return 0, 0
    end = start + 1
    quoted = [first.group(1)]
    while end < len(lines) and (more := _QUOTED_RE.match(masked[end])):
        quoted.append(more.group(1))
        end += 1
    sentences = [_letters(s.rstrip("…")) for s in _SENTENCE_RE.split(" ".join(quoted))]
    sentences = [s for s in sentences if s]
    rest = _letters("\n".join(lines[:start] + lines[end:]))
    if sentences and all(s in rest for s in sentences):
        return start, end
    return 0, 0


def _letters(text: str) -> str:
    """Only the letters and digits of ``text``, links by their words, lower case: markup
    and spacing do not hide a copied sentence."""
    text = replace_links(text, lambda target, heading, _block, alias:
                         alias or target.rsplit("/", 1)[-1] or heading or "", embed="")
    return _NOT_WORD_RE.sub("", text).casefold()
