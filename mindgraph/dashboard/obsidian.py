"""Obsidian's block syntax for the dashboard's renderer, as markdown-it core rules.

- A callout, ``> [!type] Title`` and its body, becomes a titled box with the class
  ``callout callout-<type>``; ``[!type]-`` (folded) and ``[!type]+`` (open) become a
  ``<details>`` whose ``<summary>`` is the title. No title: the type as written, capitalised.
  The type is one of Obsidian's (``CALLOUT_TYPES``), an alias drawn as the type it names
  (``[!faq]`` is a question); any other is drawn as Obsidian draws it, a note with its title
  (the type picked any ``callout-*`` class: ``[!title]`` drew the whole box bold as a title).
- A block id, a trailing `` ^id`` (or ``^id`` alone on the line after a block), is taken out
  of the text and becomes the block's ``id="^id"``: a ``#^id`` link lands on it. In an
  embedded text (``env["depth"] > 0``) it is taken out and becomes no id: the block's id
  belongs to its own page, and a second element of that id in the embedding page would be
  an invalid duplicate (or take the embedding page's own ``^id`` link away from its block).
- A paragraph holding only embeds is no paragraph: each embed is a block of its own
  (``meta["block"]``), so an embedded page's paragraphs are not nested in a ``<p>``.
"""

from __future__ import annotations

import re
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token

# Obsidian's callout types, and the aliases of each (help.obsidian.md, Callouts)
CALLOUT_TYPES: dict[str, str] = {
    "note": "note", "abstract": "abstract", "summary": "abstract", "tldr": "abstract",
    "info": "info", "todo": "todo", "tip": "tip", "hint": "tip", "important": "tip",
    "success": "success", "check": "success", "done": "success",
    "question": "question", "help": "question", "faq": "question",
    "warning": "warning", "caution": "warning", "attention": "warning",
    "failure": "failure", "fail": "failure", "missing": "failure",
    "danger": "danger", "error": "danger", "bug": "bug", "example": "example",
    "quote": "quote", "cite": "quote",
}
_CALLOUT_RE = re.compile(r"^\[!([A-Za-z0-9_-]+)\]([+-]?)[ \t]*(.*)$")
# a trailing id, or one on a line of its own that the paragraph took in (lazily: the line
# after a quote or a callout without ">"); right after an embed or a link (``![[x.png]]^id``,
# no space) it is an id too, as in Obsidian and page/anchors.py (which `check` reads)
_TRAILING_ID_RE = re.compile(r"(?:^|[ \t\n]|(?<=[\])]))\^([A-Za-z0-9-]+)[ \t]*$")
_ALONE_ID_RE = re.compile(r"^\^([A-Za-z0-9-]+)[ \t]*$")


def install(md: MarkdownIt) -> None:
    """Add callouts, block ids and block embeds to ``md``."""
    md.core.ruler.before("inline", "obsidian_callouts", _callouts)
    md.core.ruler.after("obsidian_callouts", "obsidian_block_ids", _block_ids)
    md.core.ruler.after("inline", "obsidian_block_embeds", _block_embeds)
    for name in ("callout_open", "callout_close", "callout_title_open", "callout_title_close"):
        md.add_render_rule(name, _render_callout)


def _callouts(state: Any) -> None:
    tokens: list[Token] = state.tokens
    i = 0
    while i < len(tokens):
        opening = tokens[i]
        if (opening.type == "blockquote_open" and i + 2 < len(tokens)
                and tokens[i + 1].type == "paragraph_open" and tokens[i + 2].type == "inline"):
            first, _, rest = tokens[i + 2].content.partition("\n")
            match = _CALLOUT_RE.match(first)
            if match is not None:
                _make_callout(tokens, i, match, rest)
        i += 1


def _make_callout(tokens: list[Token], i: int, match: re.Match, rest: str) -> None:
    opening = tokens[i]
    written, fold, title = match.group(1).lower(), match.group(2), match.group(3).strip()
    kind = CALLOUT_TYPES.get(written, "note")
    meta = {"kind": kind, "fold": fold}
    closing = _matching_close(tokens, i)
    opening.type, opening.meta = "callout_open", meta
    closing.type, closing.meta = "callout_close", meta
    if rest.strip():
        tokens[i + 2].content = rest
    else:
        del tokens[i + 1:i + 4]          # the paragraph held the title line only
    level = opening.level + 1
    title_tokens = [Token("callout_title_open", "", 1, meta=meta, level=level),
                    Token("inline", "", 0, content=title or written.capitalize(), children=[],
                          map=opening.map, level=level + 1),
                    Token("callout_title_close", "", -1, meta=meta, level=level)]
    tokens[i + 1:i + 1] = title_tokens


def _matching_close(tokens: list[Token], i: int) -> Token:
    # by index, not over a slice: a copy of the tokens after each callout made a page of
    # many callouts quadratic
    depth = 0
    for j in range(i, len(tokens)):
        token = tokens[j]
        depth += token.nesting if token.type.startswith("blockquote_") else 0
        if depth == 0:
            return token
    return tokens[-1]


def _render_callout(_self: Any, tokens: list, idx: int, _options: Any, _env: dict) -> str:
    token = tokens[idx]
    kind, fold = escapeHtml(token.meta["kind"]), token.meta["fold"]
    if token.type == "callout_open":
        block_id = token.attrGet("id")
        anchor = f' id="{escapeHtml(str(block_id))}"' if block_id else ""
        if fold:
            state = " open" if fold == "+" else ""
            return (f'<details class="callout callout-{kind}" data-callout="{kind}"'
                    f'{anchor}{state}>\n')
        return f'<div class="callout callout-{kind}" data-callout="{kind}"{anchor}>\n'
    if token.type == "callout_close":
        return "</details>\n" if fold else "</div>\n"
    tag = "summary" if fold else "div"
    return f'<{tag} class="callout-title">' if token.nesting == 1 else f"</{tag}>\n"


def without_block_ids(text: str) -> str:
    """``text`` without its block ids (a trailing `` ^id`` on a line, a ``^id`` line):
    what an embed shows inline."""
    lines = (_TRAILING_ID_RE.sub("", line) for line in text.split("\n")
             if not _ALONE_ID_RE.match(line.strip()))
    return "\n".join(lines)


def _block_ids(state: Any) -> None:
    tokens: list[Token] = state.tokens
    own_page = not state.env.get("depth")       # an embedded text's ids are its page's
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type != "inline" or i == 0:
            i += 1
            continue
        alone = _ALONE_ID_RE.match(token.content)
        previous = tokens[i - 2] if i >= 2 else None
        if (alone and tokens[i - 1].type == "paragraph_open" and previous is not None
                and previous.nesting == -1):
            if own_page:
                _opening_of(tokens, i - 2).attrSet("id", "^" + alone.group(1))
            del tokens[i - 1:i + 2]          # the id's own paragraph
            i -= 1
            continue
        trailing = _TRAILING_ID_RE.search(token.content)
        if trailing is not None:
            own_line = token.content[trailing.start():trailing.start() + 1] == "\n"
            token.content = token.content[:trailing.start()].rstrip()
            if own_page:
                owner = _quote_of(tokens, i) if own_line else None
                (owner or _owner(tokens, i)).attrSet("id", "^" + trailing.group(1))
        i += 1


def _quote_of(tokens: list[Token], inline_at: int) -> Token | None:
    """The quote or callout whose last paragraph is the inline's (an id on a line of its
    own after ``> ...`` lines names the whole quote, as in Obsidian), else None."""
    close = inline_at + 1
    if close + 1 < len(tokens) and tokens[close + 1].type in ("blockquote_close",
                                                               "callout_close"):
        return _opening_of(tokens, close + 1)
    return None


def _opening_of(tokens: list[Token], close_at: int) -> Token:
    level = tokens[close_at].level
    for j in range(close_at - 1, -1, -1):
        token = tokens[j]
        if token.nesting == 1 and token.level == level:
            return token
    return tokens[close_at]


def _owner(tokens: list[Token], inline_at: int) -> Token:
    """The element an inline's block id names: its paragraph, heading or cell, or the list
    item of a tight list (whose paragraphs are not drawn)."""
    opening = tokens[inline_at - 1]
    if opening.hidden and inline_at >= 2 and tokens[inline_at - 2].type == "list_item_open":
        return tokens[inline_at - 2]
    return opening


def _block_embeds(state: Any) -> None:
    tokens: list[Token] = state.tokens
    for i in range(1, len(tokens) - 1):
        if tokens[i].type != "inline" or tokens[i - 1].type != "paragraph_open":
            continue
        children = tokens[i].children or []
        embeds = [c for c in children if _is_embed(c)]
        # every other child blank: by type, never ``c not in embeds``, which compared tokens
        # field by field (a paragraph of 14,000 embeds, one a line: 200 s a page view)
        if embeds and all(_is_embed(c) or _blank(c) for c in children):
            tokens[i - 1].hidden = tokens[i + 1].hidden = True
            for embed in embeds:
                embed.meta["block"] = True
            block_id = tokens[i - 1].attrGet("id")
            if block_id:
                embeds[0].meta["id"] = str(block_id)


def _is_embed(token: Token) -> bool:
    return token.type == "wikilink" and bool(token.meta.get("embed"))


def _blank(token: Token) -> bool:
    return token.type in ("softbreak", "hardbreak") or (token.type == "text"
                                                        and not token.content.strip())


__all__ = ["CALLOUT_TYPES", "install", "without_block_ids"]
