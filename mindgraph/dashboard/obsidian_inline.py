"""Obsidian's inline syntax for the dashboard's renderer, beyond links and blocks
(dashboard/obsidian.py): what the Help vault's pages showed as raw text.

- ``%%comment%%`` (inline or over several lines) is hidden, as in Obsidian's reading view;
  one inside code is code (``without_comments``, before parsing);
- ``==highlight==`` is ``<mark>``;
- ``#tag`` is a tag element (``<span class="tag" data-tag>``), read as page/links.py reads
  tags (the graph's tag facet): after a space or at the line's start, not digits only; a
  click on it filters the dashboard's list by that tag (dashboard.js), as Obsidian searches;
- ``- [ ]`` / ``- [x]`` are task items with a checkbox (mdit-py-plugins' tasklists);
- ``$$...$$`` and ``$...$`` are math (mdit-py-plugins' dollarmath, Obsidian's rules: no
  space inside the dollars, no digit after the closing one, so "$25 or $50" stays text),
  drawn as its TeX in a ``math`` element: the markdown inside is not read (a ``\\\\`` or an
  ``_`` of TeX was eaten as an escape or emphasis); ``$$...$$`` inside a paragraph is a
  ``<span>`` (the plugin's ``<div>`` there is invalid in a ``<p>``: the browser closed the
  paragraph at it and the text after it fell out), ``$$`` on lines of its own a block;
- a ``|`` inside ``[[...|alias]]`` in a table row is the link's, not a cell border:
  Obsidian's help asks for ``\\|`` there, yet the translated vaults write ``|`` and the graph
  reads those links whole, so the dashboard draws them whole too.
"""

from __future__ import annotations

import re
import types
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block.table import escapedSplit, table
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from ..page.links import TAG_RE
from ..page.markdown import comment_spans, mask_code

_TAG_CHARS_RE = re.compile(r"[\w\-/]+")
_LINK_IN_ROW_RE = re.compile(r"\[\[[^\[\]\n]*\]\]")
_UNESCAPED_PIPE_RE = re.compile(r"(?<!\\)\|")


def install(md: MarkdownIt) -> None:
    """Add highlights, tags, task items, math and link-aware table rows to ``md``."""
    md.inline.ruler.before("emphasis", "highlight", _highlight)
    md.inline.ruler.before("text", "tag", _tag)
    md.add_render_rule("tag", _render_tag)
    md.use(tasklists_plugin)
    md.use(dollarmath_plugin, allow_labels=False, allow_space=False, allow_digits=False,
           double_inline=True)
    md.add_render_rule("math_inline_double", _render_inline_display_math)
    md.block.ruler.at("table", _link_aware_table(), {"alt": ["paragraph", "reference"]})


def without_comments(text: str) -> str:
    """``text`` with its ``%%comments%%`` and ``<!-- comments -->`` taken out (their line
    breaks kept, so the blocks around them stay apart); inside code they are code."""
    if "%%" not in text and "<!--" not in text:
        return text
    lines = text.split("\n")
    masked = "\n".join(shown if len(shown) == len(line) else " " * len(line)
                       for line, shown in zip(lines, mask_code(lines)))
    pieces, last = [], 0
    for start, end in comment_spans(masked):
        pieces += [text[last:start], "\n" * text.count("\n", start, end)]
        last = end
    return "".join(pieces) + text[last:]


def _highlight(state: Any, silent: bool) -> bool:
    start = state.pos
    if not state.src.startswith("==", start):
        return False
    end = state.src.find("==", start + 2, state.posMax)
    inner = state.src[start + 2:end] if end > 0 else ""
    if not inner or inner[0].isspace() or inner[-1].isspace() or inner.startswith("="):
        return False
    if not silent:
        state.push("mark_open", "mark", 1)
        old_max = state.posMax
        state.pos, state.posMax = start + 2, end
        state.md.inline.tokenize(state)
        state.posMax = old_max
        state.push("mark_close", "mark", -1)
    state.pos = end + 2
    return True


def _tag(state: Any, silent: bool) -> bool:
    start = state.pos
    if state.src[start] != "#" or (start > 0 and not state.src[start - 1].isspace()):
        return False
    match = TAG_RE.match(state.src, start)
    if match is None or not match.group(1).rstrip("/"):
        return False
    tag = match.group(1).rstrip("/")
    if not _TAG_CHARS_RE.fullmatch(tag) or tag.replace("/", "").isdigit():
        return False
    if not silent:
        token = state.push("tag", "", 0)
        token.content = tag
    state.pos = start + 1 + len(tag)
    return True


def _render_tag(_self: Any, tokens: list, idx: int, _options: Any, _env: dict) -> str:
    tag = escapeHtml(tokens[idx].content)
    return f'<span class="tag" data-tag="{tag}">#{tag}</span>'


def _render_inline_display_math(_self: Any, tokens: list, idx: int, _options: Any,
                                _env: dict) -> str:
    return f'<span class="math inline display">{escapeHtml(tokens[idx].content)}</span>'


def _split_keeping_links(row: str) -> list[str]:
    """A table row's cells, a ``|`` inside a wikilink escaped first (it is the alias's)."""
    if "[[" in row:
        row = _LINK_IN_ROW_RE.sub(lambda m: _UNESCAPED_PIPE_RE.sub(r"\\|", m.group(0)), row)
    return escapedSplit(row)


def _link_aware_table() -> Any:
    """markdown-it's table rule, splitting rows with ``_split_keeping_links`` (a copy of the
    function with its own globals: the library's module is left as it is)."""
    original = table
    scope = {**original.__globals__, "escapedSplit": _split_keeping_links}
    return types.FunctionType(original.__code__, scope, original.__name__,
                              original.__defaults__, original.__closure__)


__all__ = ["install", "without_comments"]
