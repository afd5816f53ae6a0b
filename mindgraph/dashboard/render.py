"""A page's markdown as HTML that is safe to put into the dashboard.

markdown-it-py (CommonMark) with raw HTML drawn through an allow-list (dashboard/raw_html.py:
``<u>``, ``<br>``, ``<kbd>``... are drawn, an ``<img>`` of a vault file as its attachment
embed; a ``<script>`` or an ``onerror=`` in a note comes out as text, never as markup), and link targets go through markdown-it's URL check
(no ``javascript:``) and an allow-list of schemes (http, https, mailto, obsidian: a link of
any other is drawn as text). On top of that:

- ``[[Target#Heading|label]]`` becomes a link inside the dashboard (``#page=<path>``) when it
  resolves, a marked broken link when it does not;
- ``![[Note]]`` shows the embedded page's lead text (one level deep): a block of its own when
  the embed stands alone in its paragraph, inline text otherwise; its links and attachments
  are found from the embedded page's folder, as Obsidian finds them (``Links.embedded``); one
  render shows at most ``EMBED_BUDGET_CHARS`` of embedded text, the embeds past it as their
  titles with a note
  (each embed rendered its page's lead again: a 38 kB note embedding a 96 kB one 2,000 times
  made one GET /dashboard/page take 31 s and answer 192 MB, the server at 650 MB, and a
  larger pair of notes any agent may create would take the server's memory);
- a page body over ``RENDER_MAX_CHARS`` is drawn as markdown up to a paragraph's end before
  it and shown as plain text after (markdown-it's cost per character of dense markup, e.g.
  a run of ``[``, is hundreds of times that of prose: 1 MB of them took 47 s of the slow
  lane);
- a body whose markup is dense is drawn as markdown only as far as ``RENDER_BUDGET_US`` of
  markdown-it's estimated cost goes (dashboard/render_cost.py), the rest shown as plain text
  with a note: 100,000 ``[`` (under RENDER_MAX_CHARS) held the slow lane 4.4 s; the budget is
  the whole view's, embeds included (an embed past it is shown as its title, as past
  EMBED_BUDGET_CHARS), and ``HIGHLIGHT_BUDGET_CHARS`` of code per view is highlighted (the
  rest is plain code: Pygments takes up to 5 µs a character);
- ``![[diagram.png|300]]`` becomes an ``<img>`` (``|300`` or ``|300x200``: its size) whose
  ``data-src`` names the dashboard's attachment route (the page's script loads it with the
  token); another attachment (pdf, audio, video) becomes a link to that route;
- ``[[Note#^id]]`` (and an embed's title) opens the note at its block: ``#page=<path>#^id``;
- comments, highlights, tags, task items, math, links in table rows:
  dashboard/obsidian_inline.py;
- callouts, block ids and block embeds: dashboard/obsidian.py (an embedded text's block ids
  are not ids of the embedding page: each id stays on the one block it names);
- footnotes ``[^1]`` / ``[^1]: text`` / ``^[inline]`` are numbered references with their
  notes at the end (mdit-py-plugins' footnote rule): without it a footnote whose text has no
  space (Japanese, Chinese, a URL) was read as a link definition, its text lost and its
  reference drawn as a broken link; an embedded text's footnotes get ids of their own
  (``docId``: the embed's place), never the embedding page's;
- fenced code is highlighted by Pygments (CSS classes, no inline style: the page's
  Content-Security-Policy allows no style attribute).

The dashboard's Content-Security-Policy is the second wall: even markup that got through
could run no script.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.utils import OptionsDict
from mdit_py_plugins.footnote import footnote_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from ..page.links import WIKILINK_RE, is_attachment_target, parse_wikilink_inner
from . import obsidian, obsidian_inline, raw_html
from .attachment_markup import (ATTACHMENT_ROUTE, attachment_href, attachment_html,
                                attachment_link)
from .obsidian_inline import without_comments
from .render_cost import (HIGHLIGHT_BUDGET_CHARS, RENDER_BUDGET_US, affordable,
                          as_markdown_it_reads, estimate)

_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
# The schemes a link may open; any other (``ms-msdt:``, ``search-ms:``... which start a
# program) is drawn as text. A link with no scheme is a page of the vault or an anchor.
LINK_SCHEMES = frozenset({"http", "https", "mailto", "obsidian"})
_FORMATTER = HtmlFormatter(nowrap=True, classprefix="hl-")
EMBED_DEPTH = 1
EMBED_BUDGET_CHARS = 262_144    # embedded text one page's render shows, all embeds together
# what an embed shown costs the budget at least: each is a parse and render of its own (a
# page of 8,000 embeds of a one-line note took 11 s a view: a budget of characters alone let
# any number of short leads through), so at most EMBED_BUDGET_CHARS / this are shown
EMBED_MIN_CHARS = 512
RENDER_MAX_CHARS = 100_000      # of a page's body drawn as markdown; the rest as plain text


@dataclass(frozen=True)
class Links:
    """How the renderer finds pages: ``resolve(target)`` gives a page path or None,
    ``lead(path)`` the markdown an embed of that page shows (``lead(path, heading, block)``
    of an embed naming a heading or a block); ``source`` is the page being rendered
    (attachment links are resolved from it)."""

    resolve: Callable[[str], str | None]
    lead: Callable[..., str]
    source: str = ""
    # whether an attachment embed written in ``source`` finds a file (None: not known, so
    # every one is fetched); a missing one is shown as missing, not asked for and refused
    has_attachment: Callable[[str], bool] | None = None
    # what a link to (path, heading, block) misses: "no heading 'X'", "no block ^x", or None
    # when the page has it (None: not known, every such link is drawn whole)
    missing_anchor: Callable[[str, str | None, str | None], str | None] | None = None
    # why a target ``resolve`` finds no page for names none: "no such page", or the pages an
    # ambiguous link could mean, as `mindgraph check` says (None: "no such page")
    unresolved: Callable[[str], str] | None = None
    # what an attachment's route URL adds to stand for the viewer's token, from (target,
    # source): serve/attachment_tickets.py (None: nothing, the server needs no token)
    ticket: Callable[[str, str], str] | None = None
    # the renderer's view from a page this one embeds: an embedded text's attachments and
    # links are found from its own page's folder, as Obsidian finds them (None: this view)
    embedded: Callable[[str], Links] | None = None

    def of_embedded(self, path: str) -> Links:
        """How the text of the page at ``path``, embedded here, finds pages and files."""
        return self.embedded(path) if self.embedded is not None else self

    def why_unresolved(self, target: str) -> str:
        """The title of a link to ``target`` that opens no page."""
        return self.unresolved(target) if self.unresolved is not None else "no such page"


def render_markdown(text: str, links: Links, depth: int = 0) -> str:
    """``text`` (a page body) as safe HTML: as markdown as far as RENDER_MAX_CHARS and
    RENDER_BUDGET_US go (cut at a paragraph's end), the rest as plain text, with a note."""
    shown, rest = _render_cut(as_markdown_it_reads(text))     # its lines, as estimated
    body = without_comments(shown)
    dense = ""
    drawn = affordable(body, RENDER_BUDGET_US)
    if drawn < len(body):
        dense, body = body[drawn:], body[:drawn]
    html = _parser().render(body, {"links": links, "depth": depth, "embeds": [0],
                                   "embed_budget": [EMBED_BUDGET_CHARS],
                                   "cost_budget": [RENDER_BUDGET_US - estimate(body)],
                                   "highlight_budget": [HIGHLIGHT_BUDGET_CHARS]})
    if dense:
        html += (f'<p class="render-cut">(the rest of the page, {len(dense):,} characters, is '
                 f'markup too dense to draw here: it is shown as plain text)</p>\n'
                 f'<pre class="unrendered">{escapeHtml(dense)}</pre>\n')
    if not rest:
        return html
    return (html + f'<p class="render-cut">(the page is over {RENDER_MAX_CHARS:,} characters: '
            f'the rest is shown as plain text)</p>\n<pre class="unrendered">'
            f'{escapeHtml(rest)}</pre>\n')


def _render_cut(text: str) -> tuple[str, str]:
    """(what is drawn as markdown, what is shown as text): markdown-it costs up to ~300
    times more per character of some markup than of prose (a note of 1 MB of '[' took 47 s,
    of prose 0.14 s), and a page view must not hold the slow lane for that."""
    if len(text) <= RENDER_MAX_CHARS:
        return text, ""
    cut = text.rfind("\n\n", RENDER_MAX_CHARS // 2, RENDER_MAX_CHARS)
    if cut < 0:
        cut = text.rfind("\n", RENDER_MAX_CHARS // 2, RENDER_MAX_CHARS)
    cut = RENDER_MAX_CHARS if cut < 0 else cut + 1
    return text[:cut], text[cut:]


def _embed_env(env: dict[str, Any], path: str) -> dict[str, Any]:
    """The render state of the text of ``path`` embedded in the one ``env`` renders: its
    links and attachments are found from ``path``; its footnotes' ids are prefixed by the
    embed's place in the page render, so no two elements share one."""
    embeds = env.setdefault("embeds", [0])
    embeds[0] += 1
    return {"links": env["links"].of_embedded(path), "depth": env["depth"] + 1,
            "embeds": embeds, "docId": f"e{embeds[0]}",
            "embed_budget": env["embed_budget"], "cost_budget": env["cost_budget"],
            "highlight_budget": env["highlight_budget"]}


def pygments_css() -> str:
    """The stylesheet of the highlighted code (classes prefixed ``hl-``)."""
    return _FORMATTER.get_style_defs(".page-body pre")


def _render_fence(self: Any, tokens: list, idx: int, options: Any, env: dict) -> str:
    """A fenced block, highlighted while the view's HIGHLIGHT_BUDGET_CHARS last, then as
    plain code."""
    left = env.setdefault("highlight_budget", [HIGHLIGHT_BUDGET_CHARS])
    size = len(tokens[idx].content)
    if size > left[0]:
        left[0] = 0
        return self.fence(tokens, idx, OptionsDict({**options, "highlight": None}), env)
    left[0] -= size
    return self.fence(tokens, idx, options, env)


def _highlight(code: str, lang: str, _attrs: str) -> str:
    if not lang:
        return ""                       # markdown-it escapes it
    try:
        lexer = get_lexer_by_name(lang.split()[0])
    except ClassNotFound:
        return ""
    return highlight(code, lexer, _FORMATTER)


_PARSER: MarkdownIt | None = None


def _parser() -> MarkdownIt:
    global _PARSER
    if _PARSER is None:
        md = MarkdownIt("commonmark", {"html": False, "highlight": _highlight})
        md.enable(["table", "strikethrough"])
        md.use(footnote_plugin)
        md.inline.ruler.before("link", "wikilink", _wikilink_rule)
        md.add_render_rule("wikilink", _render_wikilink)
        md.add_render_rule("link_open", _render_link_open)
        md.add_render_rule("image", _render_image)
        md.add_render_rule("fence", _render_fence)
        obsidian.install(md)
        obsidian_inline.install(md)
        raw_html.install(md)
        _PARSER = md
    return _PARSER


def _wikilink_rule(state: Any, silent: bool) -> bool:
    if state.src[state.pos] not in "![":
        return False
    match = WIKILINK_RE.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {"inner": match.group(2), "embed": bool(match.group(1))}
    state.pos = match.end()
    return True


def _page_link(path: str, label: str, block: str | None = None,
               missing: str | None = None, heading: str | None = None) -> str:
    """A link that opens ``path`` in the dashboard; with ``block``, scrolled to the block
    whose ``^id`` it is (``#page=<path>#^<id>``: the page's own element of that id), with
    ``heading`` to that heading (``#page=<path>#<heading>``, the last of ``A#B``; the page's
    script matches it loosely, as links match headings). ``missing`` (the heading or block
    the page lacks) draws it unresolved, as Obsidian does and as `mindgraph check` reports
    it (missing-heading, missing-block): it still opens the page, at its top."""
    if missing:
        return (f'<a class="wikilink broken" href="#page={escapeHtml(quote(path, safe="/"))}"'
                f' data-page="{escapeHtml(path)}" title="{escapeHtml(missing)}">'
                f'{escapeHtml(label)}</a>')
    anchor = (f"#^{quote(block, safe='')}" if block else
              f"#{quote(heading.split('#')[-1].strip(), safe='')}" if heading else "")
    return (f'<a class="wikilink" href="#page={escapeHtml(quote(path, safe="/"))}'
            f'{escapeHtml(anchor)}" data-page="{escapeHtml(path)}">{escapeHtml(label)}</a>')


def _render_wikilink(_self: Any, tokens: list, idx: int, _options: Any, env: dict) -> str:
    meta = tokens[idx].meta
    target, heading, block, alias = parse_wikilink_inner(meta["inner"])
    label = alias or (f"{target} › {heading}" if target and heading else target or heading
                      or meta["inner"])
    links: Links = env["links"]
    if is_attachment_target(target):
        if meta["embed"]:
            return attachment_html(target, alias, links.source, links.has_attachment,
                                   meta.get("id"), links.ticket)
        return attachment_link(target, alias or target, links.source, links.has_attachment,
                               links.ticket)
    # ``[[#^id]]`` / ``[[#Heading]]``: a place in the page itself
    path = links.resolve(target) if target else (links.source or None)
    if path is None:
        title = links.why_unresolved(target) if target else "no such page"
        return (f'<span class="wikilink broken" title="{escapeHtml(title)}">'
                f'{escapeHtml(label)}</span>')
    missing = (links.missing_anchor(path, heading, block)
               if links.missing_anchor is not None and (heading or block) else None)
    if not meta["embed"]:
        return _page_link(path, label, block, missing, heading)
    return _embed_html(path, label, env, meta, heading, block, missing)


def _embed_html(path: str, label: str, env: dict[str, Any], meta: dict,
                heading: str | None = None, block_id: str | None = None,
                missing: str | None = None) -> str:
    """A page embed: a ``<div>`` when it stands alone, else a ``<span>`` with inline text;
    of a heading's section or a block (``^id``) when the embed names one (``missing``:
    the page lacks it, and the embed is drawn unresolved)."""
    block = bool(meta.get("block"))
    links: Links = env["links"]
    inner = ""
    tag = "div" if block else "span"
    if env["depth"] < EMBED_DEPTH:
        lead = _budgeted_lead(env, links, path, heading, block_id)
        if lead is None:
            inner = (f'<{tag} class="embed-elided">(not shown: past the '
                     f'{EMBED_BUDGET_CHARS:,} characters of embedded text a page shows; open '
                     f'it)</{tag}>')
        elif not _affordable_lead(env, lead := as_markdown_it_reads(lead)):
            inner = (f'<{tag} class="embed-elided">(not shown: its markup is too dense to draw '
                     f'within what one page view draws; open it)</{tag}>')
        else:
            inner_env = _embed_env(env, path)
            lead = without_comments(lead)
            # the embedded text's block ids stay its page's: no element here takes them
            # (obsidian.py drops them below depth 0), and inline no "^id" is left as text
            inner = (_parser().render(lead, inner_env) if block
                     else _parser().renderInline(" ".join(obsidian.without_block_ids(lead)
                                                          .split()), inner_env))
    id_attr = f' id="{escapeHtml(meta["id"])}"' if meta.get("id") else ""
    kind = "embed broken" if missing else "embed"
    return (f'<{tag} class="{kind}"{id_attr}><{tag} class="embed-title">'
            f'{_page_link(path, label, block_id, missing, heading)}</{tag}>{inner}</{tag}>')


def _affordable_lead(env: dict[str, Any], lead: str) -> bool:
    """Whether the render's RENDER_BUDGET_US has the estimated cost of drawing ``lead``
    left (then spent on it)."""
    left = env.setdefault("cost_budget", [RENDER_BUDGET_US])
    cost = estimate(lead)
    if cost > left[0]:
        return False
    left[0] -= cost
    return True


def _budgeted_lead(env: dict[str, Any], links: Links, path: str, heading: str | None,
                   block_id: str | None) -> str | None:
    """The lead an embed shows, or None once the render's embeds have shown
    EMBED_BUDGET_CHARS, each counted as EMBED_MIN_CHARS or more: past it no lead is even
    looked up."""
    left = env.setdefault("embed_budget", [EMBED_BUDGET_CHARS])
    if left[0] < EMBED_MIN_CHARS:
        return None
    lead = links.lead(path, heading, block_id) if heading or block_id else links.lead(path)
    cost = max(len(lead), EMBED_MIN_CHARS)
    if cost > left[0]:
        left[0] = 0
        return None
    left[0] -= cost
    return lead


def _render_link_open(self: Any, tokens: list, idx: int, options: Any, env: dict) -> str:
    token = tokens[idx]
    href = token.attrGet("href") or ""
    scheme = _SCHEME_RE.match(href)
    if scheme and scheme.group(0)[:-1].lower() not in LINK_SCHEMES:
        _as_text(tokens, idx, href)
    elif scheme:
        token.attrSet("rel", "noopener noreferrer")
        token.attrSet("target", "_blank")
    elif href and not href.startswith("#") and is_attachment_target(
            unquote(href.split("#", 1)[0])):
        _as_attachment_link(tokens, idx, unquote(href.split("#", 1)[0]), env["links"])
    elif href and not href.startswith("#"):
        path = env["links"].resolve(href.split("#", 1)[0])
        token.attrSet("href", "#page=" + quote(path, safe="/") if path else "#")
        token.attrSet("class", "wikilink" if path else "wikilink broken")
        if path:
            token.attrSet("data-page", path)
        else:
            token.attrSet("title", env["links"].why_unresolved(href.split("#", 1)[0]))
    return self.renderToken(tokens, idx, options, env)


def _as_attachment_link(tokens: list, idx: int, target: str, links: Links) -> None:
    """``[plan](files/plan.pdf)``: the link opens the file through the attachment route, as
    ``[[files/plan.pdf]]`` does (attachment_markup.py), not a page of that name that no note
    is; a file not in raw/ is its text marked missing."""
    token = tokens[idx]
    if links.has_attachment is not None and not links.has_attachment(target):
        token.tag, token.attrs = "span", {"class": "attachment missing",
                                          "title": "not found in raw/"}
        _close_as(tokens, idx, "span")
        return
    token.attrs = {"class": "attachment",
                   "href": attachment_href(target, links.source, links.ticket), "data-attachment": "1",
                   "target": "_blank", "rel": "noopener noreferrer"}


def _close_as(tokens: list, idx: int, tag: str) -> None:
    """Give the ``link_close`` that ends the link opened at ``idx`` the tag ``tag``."""
    depth = 0
    for later in tokens[idx + 1:]:
        depth += later.nesting
        if later.type == "link_close" and depth < 0:
            later.tag = tag
            return


def _as_text(tokens: list, idx: int, href: str) -> None:
    """Draw the link opened at ``idx`` as its text (a span naming the address): a scheme
    outside LINK_SCHEMES can start a program (``ms-msdt:``, ``search-ms:``)."""
    token = tokens[idx]
    token.tag, token.attrs = "span", {"class": "link-refused", "title": href}
    _close_as(tokens, idx, "span")


def _render_image(_self: Any, tokens: list, idx: int, _options: Any, env: dict) -> str:
    token = tokens[idx]
    name = str(token.attrGet("src") or "")
    alt = "".join(child.content for child in token.children or ())
    if name and not _SCHEME_RE.match(name) and is_attachment_target(unquote(name)):
        links = env["links"]
        return attachment_html(unquote(name), alt or None, links.source,
                               links.has_attachment, ticket=links.ticket)
    return (f'<span class="attachment" title="{escapeHtml(name)}">'
            f'{escapeHtml(alt or name)}</span>')


__all__ = ["ATTACHMENT_ROUTE", "Links", "attachment_html", "attachment_link", "pygments_css",
           "render_markdown"]
