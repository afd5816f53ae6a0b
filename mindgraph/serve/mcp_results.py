"""Compact JSON results for the MCP tools: what an agent needs, citing paths and section ids.

Agents pay for every token they read, so results leave out empty and default fields and cut
long text at a caller-chosen length, saying so (``truncated``) and how to read the rest.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import TYPE_CHECKING, Any

from .section_paging import sections_page

if TYPE_CHECKING:
    from ..core import Mindgraph
    from ..page.model import Page, Section
    from ..timeline.build import Timeline


# said with an empty answer from a wiki with no page at all: an agent read "no results" as
# "the notes do not say", when they were only never compiled
NO_PAGES = ("the wiki has no pages yet: its notes have not been compiled (`mindgraph "
            "ingest` compiles them)")
# ... or when its raw folder holds no notes at all (named as configured: paths.raw)
NO_NOTES = ("the wiki has no pages yet: its raw folder ({raw}) holds no notes; put Markdown "
            "files there (.md, .markdown or .txt), then run `mindgraph ingest`")
COMPILED_NONE = "the wiki has no pages: the last ingest compiled none (`mindgraph ingest` says why)"


def why_no_pages_note(mg: Mindgraph) -> str:
    """Why the wiki has no page, for an agent: NO_PAGES, NO_NOTES or COMPILED_NONE."""
    from ..ingest import no_pages

    cause = no_pages.no_pages_cause(mg.settings)
    if cause == no_pages.NEVER_COMPILED:
        return NO_PAGES
    if cause == no_pages.NO_NOTES:
        return NO_NOTES.format(raw=mg.settings.paths.raw)
    return COMPILED_NONE


def no_pages_notes(mg: Mindgraph, results: list[Any]) -> list[str]:
    """``[why_no_pages_note]`` for an empty keyword answer of a workspace whose wiki has no
    page; [] otherwise, and for an identity's view (its empty view says nothing of the
    wiki)."""
    from ..core.workspace import ScopedMindgraph

    if results or isinstance(mg, ScopedMindgraph) or len(mg.keyword_index()):
        return []
    return [why_no_pages_note(mg)]


def hybrid_no_pages(mg: Mindgraph, answer: dict[str, Any]) -> dict[str, Any]:
    """A hybrid answer (``hybrid_answer``'s dict) with ``NO_PAGES`` added to its
    ``degradation`` as ``no_pages_notes`` says: alone, "the wiki has no pages to embed yet"
    told an agent why vectors were missing, not that the notes were never compiled."""
    notes = no_pages_notes(mg, answer.get("results", []))
    return {**answer, "degradation": [*answer.get("degradation", []), *notes]} if notes else answer


def page_result(mg: Mindgraph, name: str, max_chars: int, sections_offset: int,
                sections_limit: int) -> dict[str, Any]:
    """A page: identity, address, outline (a page of it: ``sections_page``), link
    neighbourhood and (cut) text."""
    page = mg.page(name)
    listed, total = sections_page(page.sections, sections_offset, sections_limit)
    links = mg.links(page.path)
    linked = _unique(o["page"] for o in links["outgoing"] if o["status"] == "resolved")
    broken = [o["target"] for o in links["outgoing"] if o["status"] in ("missing", "ambiguous")]
    result: dict[str, Any] = {
        "path": page.path, "title": page.title, "url": mg.url(page.path),
        "aliases": list(page.aliases), "tags": list(page.tags),
        "sections": [_outline(s) for s in listed], **total,
        "links_to": linked, "linked_from": _unique(b["page"] for b in links["backlinks"]),
        "broken_links": broken, "trust": mg.trust_of([page.path]).get(page.path),
        # links to a page's old name (it moved): they resolve, and say how to write them
        "stale_links": [{"link": o["target"], "page": o["page"], "fix": o["fix"]}
                        for o in links["outgoing"] if o.get("stale")],
        # description, permalink, dates, ...: what the outline does not already say
        "frontmatter": {k: v for k, v in page.frontmatter.items()
                        if k not in ("title", "aliases", "alias", "tags", "tag")} or None,
    }
    cut_in = _section_at(page, page.body[:max_chars].count("\n") + page.body_line)
    result.update(_cut(page.body, max_chars,
                       f"get_section(page={page.path!r}, section_id={cut_in!r}) to read on "
                       f"from the section the cut fell in, then the sections after it"))
    return _compact(result)


def brief_keyword(data: dict[str, Any], verbose: bool) -> dict[str, Any]:
    """Keyword hits as an agent reads them: page, section, snippet, score (``verbose`` keeps
    the BM25 breakdown, matched terms and the field-by-field why: 38% of the output)."""
    if not verbose:
        for hit in data.get("results", []):
            for key in ("scores", "matched_terms", "why", "rank"):
                hit.pop(key, None)
    return data


def brief_hybrid(data: dict[str, Any], verbose: bool) -> dict[str, Any]:
    """A hybrid answer without its debugging detail unless ``verbose``: each hit keeps which
    retrievers found it, not their ranks and scores; no timings or router rules."""
    if not verbose:
        data.pop("timings_ms", None)
        data.pop("cached", None)
        if isinstance(data.get("intent"), dict):
            data["intent"] = {k: v for k, v in data["intent"].items()
                              if k in ("name", "confidence")}
        for hit in data.get("results", []):
            for key in ("rank", "sources", "boosts", "found_by"):
                hit.pop(key, None)
    return _compact(data)


def communities_result(found: list[Any], limit: int, members: int) -> dict[str, Any]:
    """The ``limit`` largest communities, each with its ``members`` most central pages."""
    ranked = sorted(found, key=lambda c: (-c.size, c.id))
    return {"count": len(found), "communities": [
        _compact({"id": c.id, "name": c.name, "center": c.center, "size": c.size,
                  "members": list(c.members[:members]),
                  "more_members": max(0, c.size - members) or None})
        for c in ranked[:limit]]}


def _section_at(page: Page, line: int) -> str:
    """The id of the section holding ``line`` (the lead when none does)."""
    for section in page.sections:
        if section.start_line <= line <= section.end_line:
            return section.id
    return page.sections[0].id if page.sections else "lead"


def sections_result(page: Page, offset: int, limit: int) -> dict[str, Any]:
    """A page's outline with line ranges and sizes (a page of it: ``sections_page``)."""
    listed, total = sections_page(page.sections, offset, limit)
    return {"page": page.path, "title": page.title,
            "sections": [_compact({**_outline(s), "path": list(s.path),
                                   "lines": [s.start_line, s.end_line], "chars": len(s.text)})
                         for s in listed], **total}


def section_result(page: Page, section: Section, max_chars: int) -> dict[str, Any]:
    """One section's text, with its place in the page and the ids of its subsections."""
    depth = len(section.path)
    children = [s.id for s in page.sections
                if len(s.path) == depth + 1 and s.path[:depth] == section.path and s.level > 0]
    result: dict[str, Any] = {"page": page.path, "id": section.id, "heading": section.heading,
                              "path": list(section.path),
                              "lines": [section.start_line, section.end_line],
                              "children": children}
    result.update(_cut(section.text, max_chars, "a larger max_chars"))
    return _compact(result)


def links_result(links: dict[str, Any], limit: int) -> dict[str, Any]:
    """Backlinks and outgoing links, each list cut at ``limit``."""
    back = links["backlinks"]
    out = [_compact({"target": o["target"], "status": o["status"], "page": o["page"],
                     "heading": o["heading"], "line": o["line"],
                     "relation": None if o["relation"] == "wikilink" else o["relation"],
                     "candidates": o["candidates"], "stale": o.get("stale"),
                     "fix": o.get("fix")})
           for o in links["outgoing"]]
    return {"page": links["page"],
            "backlinks": [_compact({**b, "relation": None if b["relation"] == "wikilink"
                                    else b["relation"]}) for b in back[:limit]],
            "backlinks_total": len(back),
            "outgoing": out[:limit], "outgoing_total": len(out)}


def timeline_result(timeline: Timeline) -> dict[str, Any]:
    """A timeline with compact entries."""
    return {"concept": timeline.concept, "terms": list(timeline.terms),
            "count": len(timeline.entries), "total": timeline.total,
            "undated": timeline.undated,
            "entries": [_compact(dataclasses.asdict(e)) for e in timeline.entries]}


def jsonable(value: Any, digits: int | None = None) -> Any:
    """Plain JSON data from a core result (``to_dict``, dataclasses, tuples, dates); floats
    rounded to ``digits`` when given (scores need no more, and every digit costs a token)."""
    if hasattr(value, "to_dict"):
        return jsonable(value.to_dict(), digits)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value), digits)
    if isinstance(value, dict):
        return {str(k): jsonable(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, digits) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, float) and digits is not None:
        return round(value, digits)
    return value


# Tools that look text up (a query that finds nothing is a gap in the wiki) and the key of
# the list they answer with; every other tool reads or reports on something named.
QUERY_TOOLS = {"search": "results", "smart_search": "results", "context": "sources",
               "timeline": "entries", "search_documents": "results"}
# What the other tools found, counted: the items of their answer's list, else one answer.
_LOOKUP_LISTS = {"related": "related", "path": "path", "communities": "communities",
                 "backlinks": "backlinks", "list_sections": "sections", "coverage": "units"}


def usage_kind(tool: str) -> str:
    """"query" for the search-like tools, "lookup" for the others (usage log ``kind``)."""
    return "query" if tool in QUERY_TOOLS else "lookup"


def result_count(tool: str, data: dict[str, Any]) -> int:
    """How many results a tool's answer holds (for the usage log)."""
    if tool == "coverage":
        return int(data.get("total") or 0)
    if tool == "backlinks":
        return int(data.get("backlinks_total") or 0) + int(data.get("outgoing_total") or 0)
    key = QUERY_TOOLS.get(tool) or _LOOKUP_LISTS.get(tool)
    found = data.get(key) if key else None
    return len(found) if isinstance(found, list) else 1


def cited_paths(data: Any, limit: int = 5) -> list[str]:
    """The first page paths a result cites (for the usage log's "top results")."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if len(found) >= limit:
            return
        if isinstance(value, dict):
            for key in ("path", "page", "sources"):
                items = value.get(key)
                for item in items if isinstance(items, list) else [items]:
                    # a page path, or a page address ("Page.md#section") from context
                    item = item.split("#", 1)[0] if isinstance(item, str) else None
                    if item and item.endswith(".md") and item not in found:
                        found.append(item)
            for item in value.values():
                if isinstance(item, (dict, list)):
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(data)
    return found[:limit]


def _outline(section: Section) -> dict[str, Any]:
    return {"id": section.id, "heading": section.heading, "level": section.level}


def _cut(text: str, max_chars: int, rest: str) -> dict[str, Any]:
    if len(text) <= max_chars:
        return {"text": text}
    return {"text": text[:max_chars], "truncated": True, "chars": len(text),
            "more": f"text cut at {max_chars} of {len(text)} characters; use {rest}"}


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    """Drop None, empty lists and empty strings (but keep zeros and False)."""
    return {k: v for k, v in data.items() if v is not None and v != [] and v != ""}


def _unique(items: Any) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))
