"""Obsidian's inline syntax for the dashboard's renderer, beyond links and blocks
(dashboard/obsidian.py): what the Help vault's pages showed as raw text.

- ``%%comment%%`` (inline or over several lines) is hidden, as in Obsidian's reading view;
  one inside code is code (``without_comments``, before parsing);
- ``==highlight==`` is ``<mark>``;
- ``#tag`` is a tag element (``<span class="tag" data-tag>``), read as page/links.py reads
  tags (the graph's tag facet): after a space or at the line's start, not digits only; a
  click on it filters the dashboard's list by that tag (dashboard.js), as Obsidian searches;
- ``- [ ]`` / ``- [x]`` are task items with a checkbox, as mdit-py-plugins' tasklists draws
  them (its rule looked for each item's list back over every item before it: a list of
  8,000 tasks took 8.3 s to draw, 2,000 0.7 s; ``_task_items`` keeps the open lists);
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
from markdown_it.token import Token
from mdit_py_plugins.dollarmath import dollarmath_plugin

from ..page.links import TAG_RE
from ..page.markdown import comment_spans, mask_code

_TAG_CHARS_RE = re.compile(r"[\w\-/]+")
_LINK_IN_ROW_RE = re.compile(r"\[\[[^\[\]\n]*\]\]")
_UNESCAPED_PIPE_RE = re.compile(r"(?<!\\)\|")
_TASK_RE = re.compile(r"\[([ xX])\][ \t\n\v\f\r]+")     # tasklists' pattern
_LISTS = ("bullet_list_open", "ordered_list_open")


def install(md: MarkdownIt) -> None:
    """Add highlights, tags, task items, math and link-aware table rows to ``md``."""
    md.inline.ruler.before("emphasis", "highlight", _highlight)
    md.inline.ruler.before("text", "tag", _tag)
    md.add_render_rule("tag", _render_tag)
    md.core.ruler.after("inline", "task_items", _task_items)
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


def _task_items(state: Any) -> None:
    """A list item whose text opens with ``[ ]`` or ``[x]``: a checkbox (disabled) first, the
    item and its list marked with tasklists' classes; in one pass, the open lists kept."""
    tokens: list[Token] = state.tokens
    lists: list[Token] = []             # the lists open at this token, innermost last
    for i, token in enumerate(tokens):
        if token.type in _LISTS:
            lists.append(token)
        elif token.type.endswith("_list_close") and lists:
            lists.pop()
        elif (token.type == "inline" and 2 <= i < len(tokens) - 1 and lists
              and tokens[i - 1].type == "paragraph_open"
              and tokens[i - 2].type == "list_item_open"
              and (match := _TASK_RE.match(token.content)) is not None and token.children):
            checked = ' checked="checked"' if match.group(1) in "xX" else ""
            box = Token("html_inline", "", 0)
            box.content = (f'<input class="task-list-item-checkbox"{checked} '
                           f'disabled="disabled" type="checkbox">')
            token.children.insert(0, box)
            token.children[1].content = token.children[1].content[3:]
            token.content = token.content[3:]
            tokens[i - 2].attrSet("class", "task-list-item")
            lists[-1].attrSet("class", "contains-task-list")


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
