"""The raw HTML of a note, as the dashboard shows it: an allow-list, everything else text.

Obsidian renders the HTML a note holds (``<u>``, ``<br>``, ``<kbd>``, ``<details>``, headings
kept out of the outline...); the dashboard showed every tag as text, so the Help vault's pages
read ``line three<br> line four``. Now markdown-it hands each tag over (``html_inline``) or
each HTML block (``html_block``), and this module rebuilds it from an allow-list:

- a formatting or structure tag whose attributes are all harmless is drawn, with only
  ``title``, ``colspan``, ``rowspan`` and ``open`` kept (``class``, ``id`` and ``style`` are
  dropped: they would restyle the dashboard, take a block id, or break its
  Content-Security-Policy, which allows no style attribute);
- a tag with an event handler, a ``src``, an unsafe ``href`` or any other attribute, and
  every tag not on the list (``script``, ``svg``, ``<folder>``...) is text, as before:
  what the note says stays readable and never becomes markup;
- an ``<iframe>``, ``<img>``, ``<video>``/``<audio>`` ``<source>`` or ``<embed>`` whose
  ``src`` is an https address (a player, a picture on another server: the dashboard's
  policy loads neither) is a link to it, named by its ``alt``; an ``<img>`` whose ``src`` is
  a file of the vault (``<img src="pic.png" alt="..." width="300">``, no scheme) is that
  attachment's embed, as ``![[pic.png]]`` draws it (dashboard/attachment_markup.py: the same
  route and rules, found in raw/ or marked missing); with another ``src``, or any other
  attribute, it is text; an HTML comment is hidden, as in Obsidian; a checkbox (a task item's,
  which mdit-py-plugins' tasklists writes as raw HTML) is drawn disabled;
- the tags drawn are balanced: a closing tag nothing opened is dropped, and what a note
  leaves open is closed at the end of its paragraph (inline) or of the page's text (blocks:
  before its footnotes), so a note's HTML cannot close or swallow the dashboard's own
  elements. Inline (inside a
  paragraph) only phrasing tags are drawn; a ``<p>`` there (``<p/>`` in a table cell) is a
  line break, as a browser shows it.

Text between the tags of an HTML block is escaped: markdown is not read inside it, as in
CommonMark and Obsidian.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.rules_block.html_block import html_block
from markdown_it.token import Token

from ..page.html_images import LOCAL_IMAGE_ATTRIBUTES
from ..page.links import is_attachment_target
from .attachment_markup import attachment_html

PHRASING = frozenset({"a", "abbr", "b", "bdi", "bdo", "br", "cite", "code", "del", "dfn", "em",
                      "i", "ins", "kbd", "mark", "q", "s", "samp", "small", "span", "strong",
                      "sub", "sup", "time", "u", "var", "wbr"})
BLOCKS = frozenset({"blockquote", "caption", "dd", "details", "div", "dl", "dt", "figcaption",
                    "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "ol", "p", "pre",
                    "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"})
VOID = frozenset({"br", "hr", "wbr"})
MEDIA = frozenset({"iframe", "img", "video", "audio", "source", "embed"})
KEPT_ATTRIBUTES = frozenset({"title", "colspan", "rowspan", "open"})
DROPPED_ATTRIBUTES = frozenset({"class", "id", "style", "align", "dir", "lang", "width",
                                "height", "border", "cellpadding", "cellspacing", "valign"})
_SAFE_HREF_RE = re.compile(r"^(?:https?:|mailto:)", re.I)
_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
_SIZE_VALUE_RE = re.compile(r"^\d{1,5}$")
# a local <img>'s markup, from (target, alt, size "300" or "300x200"; each or None); None:
# no vault to find it in
LocalImage = Callable[[str, "str | None", "str | None"], str]
_FIRST_TAG_RE = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)")
# attribute names as markdown-it reads them (no "<" in a name: a tag that never closes ends
# at the next "<", so the scan stays linear; an attempt that fails is text); a comment's end
# is looked for once (``rebuild``), not by a lazy ``<!--.*?-->`` retried at every "<!--":
# both made a 30 kB note of "<div <a <a …" or "<!-- <!-- …" cost tens of seconds per view
_ATTR_NAME = r"[A-Za-z_:][A-Za-z0-9:._-]*"
_ATTR_VALUE = r"""(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+)"""
_ATTR_RE = re.compile(rf"({_ATTR_NAME})(?:\s*=\s*({_ATTR_VALUE}))?")
_TAG_RE = re.compile(rf"<!--|<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s+{_ATTR_NAME}"
                     rf"(?:\s*=\s*{_ATTR_VALUE})?)*)\s*(/?)>")


def install(md: MarkdownIt) -> None:
    """Read raw HTML in ``md`` (its ``html`` option on) and draw it through the allow-list."""
    md.options["html"] = True
    md.block.ruler.at("html_block", _allowed_html_block,
                      {"alt": ["paragraph", "reference", "blockquote"]})
    md.core.ruler.push("raw_html_allow_list", _sanitize)
    md.add_render_rule("html_block", _render)
    md.add_render_rule("html_inline", _render)


def _allowed_html_block(state: Any, start: int, end: int, silent: bool) -> bool:
    """An HTML block only when its first tag is one the allow-list draws (or a comment): a
    line that opens with ``<script>``, ``<folder>`` or ``<svg>`` is a paragraph, its tags
    text and its markdown read (``<script>…</script> [[Note]]`` keeps its link)."""
    line = state.src[state.bMarks[start] + state.tShift[start]:state.eMarks[start]]
    first = _FIRST_TAG_RE.match(line)
    if first is not None and first.group(1).lower() not in PHRASING | BLOCKS | MEDIA:
        return False
    return html_block(state, start, end, silent)


def _render(_self: Any, tokens: list, idx: int, _options: Any, _env: dict) -> str:
    # only what _sanitize rebuilt is markup; a token it never saw is text
    token = tokens[idx]
    return token.meta["safe"] if "safe" in (token.meta or {}) else escapeHtml(token.content)


def _local_image(env: dict[str, Any]) -> LocalImage | None:
    """How a note's ``<img src="pic.png">`` is drawn: the attachment embed of the page being
    rendered (``env["links"]``, a render.Links), or None outside a page render."""
    links = env.get("links") if isinstance(env, dict) else None
    if links is None:
        return None
    return lambda target, alt, size: attachment_html(target, alt, links.source,
                                                     links.has_attachment, ticket=links.ticket,
                                                     size=size)


def _sanitize(state: Any) -> None:
    tokens: list[Token] = state.tokens
    local = _local_image(state.env)
    page_open: list[str] = []            # block tags opened by top-level HTML blocks
    for token in tokens:
        if token.type == "html_block":
            opened = page_open if token.level == 0 else []
            token.meta = {**(token.meta or {}),
                          "safe": rebuild(token.content, opened, False, local)}
            if token.level != 0:
                token.meta["safe"] += _closers(opened)
        elif token.type == "inline" and token.children:
            opened = []
            for child in token.children:
                if child.type == "html_inline":
                    child.meta = {**(child.meta or {}),
                                  "safe": rebuild(child.content, opened, True, local)}
            if opened:
                closing = Token("html_inline", "", 0, content="")
                closing.meta = {"safe": _closers(opened)}
                token.children.append(closing)
    if page_open:
        # closed before the footnotes the renderer adds at the end: they are not the note's
        closing = Token("html_block", "", 0, content="")
        closing.meta = {"safe": _closers(page_open) + "\n"}
        tokens.insert(next((i for i, t in enumerate(tokens)
                            if t.type == "footnote_block_open"), len(tokens)), closing)


def rebuild(raw: str, opened: list[str], inline: bool,
            local_image: LocalImage | None = None) -> str:
    """``raw`` HTML drawn through the allow-list; ``opened`` is the stack of tags drawn and
    not yet closed (updated), ``inline``: inside a paragraph (phrasing tags only),
    ``local_image``: how an ``<img>`` of a vault file is drawn (None: as text)."""
    out: list[str] = []
    at = 0
    comments_close = True                   # False once no "-->" is left after a "<!--"
    match = _TAG_RE.search(raw)
    while match is not None:
        out.append(_text(raw[at:match.start()]))
        at = match.end()
        if match.group(0) == "<!--":
            end = raw.find("-->", at) if comments_close else -1
            if end >= 0:                    # a comment: hidden, as in Obsidian
                at = end + 3
            else:                           # never closed: text
                comments_close = False
                out.append(escapeHtml(match.group(0)))
        else:
            out.append(_tag(match, opened, inline, local_image))
        match = _TAG_RE.search(raw, at)
    out.append(_text(raw[at:]))
    return "".join(out)


def _text(raw: str) -> str:
    return escapeHtml(html.unescape(raw)) if raw else ""


def _tag(match: re.Match, opened: list[str], inline: bool,
         local_image: LocalImage | None = None) -> str:
    whole = match.group(0)
    closing, name, attributes = match.group(1), match.group(2).lower(), match.group(3)
    if name in MEDIA:
        if closing or (name in ("video", "audio") and not _source(attributes)):
            return ""                               # a player's frame: its sources are links
        local = (_local_image_markup(attributes, local_image)
                 if name == "img" and local_image is not None else None)
        return local or _media_link(attributes) or escapeHtml(whole)
    if name == "input" and not closing:
        return _checkbox(attributes) or escapeHtml(whole)
    if inline and name == "p":
        return "" if closing else "<br>"            # a paragraph break inside a paragraph
    if closing and name in PHRASING | BLOCKS and name not in opened:
        return ""                                   # nothing of ours to close
    if name not in (PHRASING if inline else PHRASING | BLOCKS):
        return escapeHtml(whole)
    if closing:
        shut = []
        while opened:
            last = opened.pop()
            shut.append(f"</{last}>")
            if last == name:
                break
        return "".join(shut)
    kept = _attributes(name, attributes)
    if kept is None:
        return escapeHtml(whole)                    # an attribute that could act: text
    if name in VOID:
        return f"<{name}{kept}>"
    if match.group(4):                              # <span/>: opened and closed
        return f"<{name}{kept}></{name}>"
    opened.append(name)
    return f"<{name}{kept}>"


def _attributes(name: str, raw: str) -> str | None:
    """The attributes kept, as markup, or None when one of them is not harmless."""
    kept: list[str] = []
    for match in _ATTR_RE.finditer(raw):
        key = match.group(1).lower()
        value = html.unescape((match.group(2) or "").strip("\"'"))
        if key in DROPPED_ATTRIBUTES:
            continue
        if key == "href" and name == "a" and _SAFE_HREF_RE.match(value.strip()):
            kept.append(f' href="{escapeHtml(value.strip())}" rel="noopener noreferrer" '
                        f'target="_blank"')
        elif key in KEPT_ATTRIBUTES:
            kept.append(f' {key}="{escapeHtml(value)}"' if match.group(2) else f" {key}")
        else:
            return None
    return "".join(kept)


def _checkbox(raw: str) -> str | None:
    """A task item's checkbox (tasklists writes it as raw HTML; a note may too), drawn
    disabled: an ``<input>`` with any other attribute or type is text."""
    found = {m.group(1).lower(): html.unescape((m.group(2) or "").strip("\"'"))
             for m in _ATTR_RE.finditer(raw)}
    if found.get("type", "").lower() != "checkbox" or \
            set(found) - {"type", "class", "checked", "disabled"}:
        return None
    checked = " checked" if "checked" in found else ""
    return f'<input class="task-list-item-checkbox" type="checkbox" disabled{checked}>'


def _source(raw: str) -> dict[str, str]:
    """The attributes of a tag, and whether it has an https ``src``: {} when it has none."""
    found = {m.group(1).lower(): html.unescape((m.group(2) or "").strip("\"'")).strip()
             for m in _ATTR_RE.finditer(raw)}
    return found if found.get("src", "").lower().startswith("https://") else {}


def _local_image_markup(raw: str, local_image: LocalImage) -> str | None:
    """An ``<img>`` of a vault file as its attachment embed, or None: a ``src`` with a scheme
    or from the root (``https:``, ``data:``, ``//host``, ``/etc``), a name that is no
    attachment type, or an attribute beyond ``LOCAL_IMAGE_ATTRIBUTES``."""
    found = {m.group(1).lower(): html.unescape((m.group(2) or "").strip("\"'")).strip()
             for m in _ATTR_RE.finditer(raw)}
    src = unquote(found.get("src", ""))
    if (set(found) - LOCAL_IMAGE_ATTRIBUTES or not src or _SCHEME_RE.match(src)
            or src.startswith(("/", "\\")) or not is_attachment_target(src)):
        return None
    width, height = found.get("width", ""), found.get("height", "")
    size = (width + (f"x{height}" if _SIZE_VALUE_RE.match(height) else "")
            if _SIZE_VALUE_RE.match(width) else None)
    return local_image(src, found.get("alt") or None, size)


def _media_link(raw: str) -> str | None:
    """A frame, image, video or audio source at an https address as a link to it: the
    dashboard's Content-Security-Policy loads no frame and nothing from another server."""
    found = _source(raw)
    if not found:
        return None
    label = found.get("alt") or found.get("title") or found["src"]
    return (f'<a class="frame-link" href="{escapeHtml(found["src"])}" '
            f'rel="noopener noreferrer" target="_blank">{escapeHtml(label)}</a>')


def _closers(opened: list[str]) -> str:
    shut = "".join(f"</{name}>" for name in reversed(opened))
    opened.clear()
    return shut


__all__ = ["install", "rebuild"]
