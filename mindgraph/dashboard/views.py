"""What the dashboard shows, as plain JSON-ready data: the graph with every page's facets, and
one page rendered with its community, trust record and compile information.

Both read the pages, graph and communities they are handed: the server decides what the
caller may see, these functions only shape it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Callable
from urllib.parse import unquote

from ..fsutil import sha256_text
from ..graph.build import EXTRACTED, KnowledgeGraph
from ..graph.communities import Community
from ..page.anchors import PageAnchors
from ..page.check import ambiguous_link
from ..page.language import page_language
from ..page.links import replace_links
from ..page.model import Link, Page
from ..page.transclude import embedded_text
from ..page.vault import Vault
from ..trust.record import read_record
from .render import Links, render_markdown

SUMMARY_CHARS = 200
_SPACE_RE = re.compile(r"\s+")
_LINE_MARK_RE = re.compile(r"^[ \t]*(?:[#>*\-]+[ \t]*)+|\[![A-Za-z]+\][+-]?", re.M)
_INLINE_MARK_RE = re.compile(r"\*{1,3}|`+|(?<!\w)_{1,2}|_{1,2}(?!\w)")
_DATE_KEYS = ("updated", "date", "created")


def summary_of(page: Page) -> str:
    """A line or two for a hover card: the frontmatter summary, else the first text."""
    given = page.frontmatter.get("summary") or page.frontmatter.get("description")
    if isinstance(given, str) and given.strip():
        text = given
    else:
        text = next((s.text for s in page.sections if s.text.strip()), "")
        text = replace_links(text, lambda target, heading, _b, alias: alias or heading
                             or target)
        text = _INLINE_MARK_RE.sub("", _LINE_MARK_RE.sub(" ", text))
    text = _SPACE_RE.sub(" ", text).strip()
    return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS - 1].rstrip() + "…"


def date_of(page: Page) -> str | None:
    """The page's own date (updated, date or created in its frontmatter) as YYYY-MM-DD."""
    for key in _DATE_KEYS:
        value = page.frontmatter.get(key)
        if value:
            return str(value)[:10]
    return None


def graph_view(vault: Vault, kg: KnowledgeGraph, communities: Iterable[Community],
               trust: Mapping[str, Mapping[str, Any]],
               scope_of: Callable[[Page], str | None] | None = None) -> dict[str, Any]:
    """Nodes with their facets (type, tags, scope, community, trust level, date, link counts,
    summary), edges with their kind and relation (one per pair and relation), communities.
    ``scope_of`` names a page's scope (personal, team, shared) from the folder mapping; without
    it, the frontmatter's ``scope``."""
    scope_of = scope_of or (lambda page: _text(page.frontmatter.get("scope")))
    communities = list(communities)
    member_of = {m: c.id for c in communities for m in c.members}
    backlinks = Counter(v for u, v, _, data in kg.link_edges() if data["kind"] == EXTRACTED
                        and u != v)
    nodes = []
    for path in sorted(vault.pages):
        page = vault.pages[path]
        nodes.append({
            "id": path, "doc": document_id(path), "title": page.title, "type": _text(page.frontmatter.get("type")),
            "tags": list(page.tags), "scope": scope_of(page),
            "community": member_of.get(path),
            "trust": int(trust.get(path, {}).get("level", 0)),
            "date": date_of(page),
            "links": kg.degree(path),
            "backlinks": backlinks.get(path, 0), "summary": summary_of(page)})
    edges = [{"source": u, "target": v, "kind": data.get("kind"), "relation": key,
              "label": data.get("label") or ""}
             for u, v, key, data in sorted(kg.edges(), key=lambda e: (e[0], e[1], e[2]))
             if u != v and u in vault.pages and v in vault.pages]
    return {"nodes": nodes, "edges": edges,
            "communities": [{"id": c.id, "name": c.name, "size": c.size} for c in communities]}


def page_view(vault: Vault, page: Page, communities: Iterable[Community],
              trust: Mapping[str, Any],
              has_attachment: Callable[[str, str], bool] | None = None,
              ticket: Callable[[str, str], str] | None = None) -> dict[str, Any]:
    """The page rendered as safe HTML, with its community, trust record and compile info;
    ``has_attachment(target, page path)``: whether an attachment embed finds its file,
    ``ticket(target, page path)``: what its route URL adds for the viewer's token."""
    community = next(({"id": c.id, "name": c.name, "size": c.size} for c in communities
                      if page.path in c.members), None)
    record = read_record(page.frontmatter)
    fm = page.frontmatter
    return {
        "path": page.path, "title": page.title, "lang": page_language(page),
        "html": render_markdown(page.indexed_body,
                                page_links(vault, page.path, has_attachment, ticket)),
        "community": community,
        "trust": {**trust, "origin": record.provenance.origin,
                  "generator": record.provenance.generator,
                  "validator": record.verification.validator,
                  "last_validated": record.verification.last_validated,
                  "revalidate_after": record.verification.revalidate_after,
                  "evidence": record.evidence.status, "problem": record.problem},
        # the compiler a page records: provenance.generator (the top-level ``compiler`` of
        # pages written before that record); none for a page written by hand
        "compile": {"compiler": _text(record.provenance.generator),
                    "sources": [s.path for s in record.provenance.sources],
                    "created": _text(fm.get("created")), "updated": _text(fm.get("updated")),
                    "date_source": _text(fm.get("date_source"))},
        "type": _text(fm.get("type")), "scope": _text(fm.get("scope")),
    }


def page_links(vault: Vault, source: str,
               has_attachment: Callable[[str, str], bool] | None = None,
               ticket: Callable[[str, str], str] | None = None) -> Links:
    """The renderer's view of the vault from the page at ``source``."""

    def resolve(target: str) -> str | None:
        found = vault.resolver.resolve_target(unquote(target), source)
        return found.target if found.status == "resolved" else None

    def unresolved(target: str) -> str:
        found = vault.resolver.resolve_target(unquote(target), source)
        return (ambiguous_link(found.candidates) if found.status == "ambiguous"
                else "no such page")

    def lead(path: str, heading: str | None = None, block: str | None = None) -> str:
        page = vault.pages[path]
        if heading or block:        # as Obsidian shows ![[Note#Heading]] and ![[Note#^id]]
            shown = embedded_text(page, Link(target=path, syntax="embed", heading=heading,
                                             block=block))
            return shown if shown is not None else \
                f"*{'^' + block if block else heading} is not in this page.*"
        return next((s.text for s in page.sections if s.text.strip()), "")

    anchors = PageAnchors()

    def missing_anchor(path: str, heading: str | None, block: str | None) -> str | None:
        # what `mindgraph check` reports as missing-heading / missing-block (page/check.py)
        page = vault.pages.get(path)
        if page is None:
            return None
        if heading and (part := anchors.missing_heading(page, heading)):
            return f"no heading '{part}' in {page.title}"
        if block and not anchors.has_block(page, block):
            return f"no block ^{block} in {page.title}"
        return None

    found = None if has_attachment is None else (lambda target: has_attachment(target, source))
    # an embedded page's text is drawn as in its own page (render.Links.embedded)
    return Links(resolve, lead, source, found, missing_anchor, unresolved, ticket,
                 lambda path: page_links(vault, path, has_attachment, ticket))


def document_id(page_path: str) -> str:
    """The page's id in the documents API (POST /links takes ids): the same 16 hex digits as
    mindgraph/documents' ``document_id``."""
    return sha256_text("page\n" + page_path)[:16]


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


__all__ = ["date_of", "graph_view", "page_links", "page_view", "summary_of"]
