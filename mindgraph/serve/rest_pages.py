"""REST routes that read one page: GET /page (its sections, links and backlinks), GET
/section (one section's text) and GET /extract (a fenced json/yaml data block). Unknown
pages, sections and blocks are 404, a name several pages have 409 (with ``candidates``); a
data block that does not parse is 409."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Query

from ..core import Mindgraph
from . import schemas as s
from .rest_params import page_name
from .rest_routing import Caller


def add_page_routes(route: Callable[..., Callable], mg: Mindgraph, fresh: Callable[[], None],
                    record: Callable[..., None]) -> None:
    """Register the routes with rest.py's ``route`` helper; ``record`` logs a lookup."""

    @route("get", "/page", s.PageOut, "A page with its sections, links and backlinks", 404)
    def page(who: Caller, page: str = page_name()) -> dict[str, Any]:   # ?name= still works
        fresh()
        core = mg.as_identity(who)
        found = core.page(page)
        record(who, page, intent="page", kind="lookup", results=[found.path], result_count=1)
        links = core.links(found.path)
        return {"path": found.path, "title": found.title, "aliases": list(found.aliases),
                "tags": list(found.tags), "url": core.url(found.path),
                "frontmatter": dict(found.frontmatter),
                "sections": [{"id": x.id, "heading": x.heading, "level": x.level,
                              "path": list(x.path), "lines": [x.start_line, x.end_line]}
                             for x in found.sections],
                "outgoing": links["outgoing"], "backlinks": links["backlinks"],
                "trust": mg.trust_of([found.path])[found.path]}

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
