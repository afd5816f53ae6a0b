"""REST routes that read one page: GET /page (its sections, links and backlinks), GET
/section (one section's text) and GET /extract (a fenced json/yaml data block). Unknown
pages, sections and blocks are 404, a name several pages have 409 (with ``candidates``); a
data block that does not parse is 409. GET /page lists sections a page at a time past
``sections_limit`` (1,000 by default; ``sections_offset`` for the next), saying
``sections_total`` only then."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Query

from ..core import Mindgraph
from . import schemas as s
from .rest_params import page_name
from .rest_routing import Caller
from .section_paging import (LIMIT_HELP, MAX_SECTIONS_LIMIT, MAX_SECTIONS_OFFSET, OFFSET_HELP,
                             SECTIONS_LIMIT, sections_page)


def add_page_routes(route: Callable[..., Callable], mg: Mindgraph, fresh: Callable[[], None],
                    record: Callable[..., None]) -> None:
    """Register the routes with rest.py's ``route`` helper; ``record`` logs a lookup."""

    @route("get", "/page", s.PageOut, "A page with its sections, links and backlinks", 404)
    def page(who: Caller, page: str = page_name(),
             sections_offset: int = Query(0, ge=0, le=MAX_SECTIONS_OFFSET,
                                          description=OFFSET_HELP),
             sections_limit: int = Query(SECTIONS_LIMIT, ge=1, le=MAX_SECTIONS_LIMIT,
                                         description=LIMIT_HELP)) -> dict[str, Any]:
        fresh()
        core = mg.as_identity(who)
        found = core.page(page)
        record(who, page, intent="page", kind="lookup", results=[found.path], result_count=1)
        links = core.links(found.path)
        listed, total = sections_page(found.sections, sections_offset, sections_limit)
        return {"path": found.path, "title": found.title, "aliases": list(found.aliases),
                "tags": list(found.tags), "url": core.url(found.path),
                "frontmatter": dict(found.frontmatter),
                "sections": [{"id": x.id, "heading": x.heading, "level": x.level,
                              "path": list(x.path), "lines": [x.start_line, x.end_line]}
                             for x in listed],
                "outgoing": links["outgoing"], "backlinks": links["backlinks"],
                "trust": mg.trust_of([found.path])[found.path],
                **total}

    @route("get", "/section", s.SectionOut, "One section of a page, with its text", 404)
    def section(who: Caller, page: str = page_name(),
                section_id: str = Query(..., min_length=1, max_length=1000,
                                        description="Section id, as listed by /page (?id= "
                                                    "still works)")) -> dict[str, Any]:
        fresh()
        found, sec = mg.as_identity(who).section(page, section_id)
        record(who, f"{page}#{section_id}", intent="section", kind="lookup",
               results=[found.path], result_count=1)
        return {"page": found.path, "id": sec.id, "heading": sec.heading,
                "path": list(sec.path), "text": sec.text,
                "lines": [sec.start_line, sec.end_line]}

    @route("get", "/extract", s.ExtractOut, "A page's fenced json/yaml data block", 404, 409)
    def extract(who: Caller, page: str = page_name(),
                block: int = Query(1, ge=1, le=1000)) -> dict[str, Any]:
        fresh()
        core = mg.as_identity(who)
        return {"page": core.page(page).path, "block": block, "data": core.extract(page, block)}


__all__ = ["add_page_routes"]
