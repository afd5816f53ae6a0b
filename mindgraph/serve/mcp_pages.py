"""MCP tools that read one page: the page with its outline, its sections one by one, its
links both ways and its agent-data block. Each is a thin wrapper over one ``Mindgraph``
method run by mcp.py's ``call`` (the caller's view, a lane, the usage log)."""

from collections.abc import Awaitable
from typing import Annotated, Any, Callable, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult
from pydantic import Field

from ..core import Mindgraph
from .mcp_results import jsonable, links_result, page_result, section_result, sections_result
from .mcp_types import READ_ONLY, JsonResult, MaxChars, PageName, SectionId
from .section_paging import SECTIONS_LIMIT, SectionsLimit, SectionsOffset


def add_page_tools(server: MCPServer,
                   call: Callable[..., Awaitable[CallToolResult]]) -> None:
    """Register get_page, list_sections, get_section, backlinks and extract on ``server``."""
    @server.tool(annotations=READ_ONLY)
    async def get_page(ctx: Context, page: PageName, max_chars: MaxChars = 20_000,
                       sections_offset: SectionsOffset = 0,
                       sections_limit: SectionsLimit = SECTIONS_LIMIT) -> JsonResult:
        """Read a wiki page: title, tags, address, outline of sections (ids), the pages it
        links to, the pages linking to it, and its text (cut at max_chars; read the rest
        with get_section). The outline lists at most sections_limit sections (1,000) from
        sections_offset; 'sections_total' is said only when it does not list them all."""
        return await call(ctx, "get_page", page, lambda m: page_result(
            m, page, max_chars, sections_offset, sections_limit))

    @server.tool(annotations=READ_ONLY)
    async def list_sections(ctx: Context, page: PageName, sections_offset: SectionsOffset = 0,
                            sections_limit: SectionsLimit = SECTIONS_LIMIT) -> JsonResult:
        """The outline of a page: each section's id, heading, level, heading path, line
        range and size, so you can fetch only the sections you need with get_section. At
        most sections_limit sections (1,000) from sections_offset; 'sections_total' is said
        only when they are not all listed (then list the rest with sections_offset)."""
        return await call(ctx, "list_sections", page, lambda m: sections_result(
            m.page(page), sections_offset, sections_limit))

    @server.tool(annotations=READ_ONLY)
    async def get_section(ctx: Context, page: PageName, section_id: SectionId,
                    max_chars: MaxChars = 20_000) -> JsonResult:
        """Read one section of a page (its own text; subsections are listed by id in
        'children')."""
        return await call(ctx, "get_section", f"{page}#{section_id}",
                          lambda m: section_result(*m.section(page, section_id), max_chars))

    @server.tool(annotations=READ_ONLY)
    async def backlinks(ctx: Context, page: PageName,
                  limit: Annotated[int, Field(ge=1, le=500, description="At most this many "
                                              "backlinks and outgoing links")] = 50
                  ) -> JsonResult:
        """Pages that link to this page (with the section and line of each link), and the
        links this page makes (where each one resolves, or why it does not)."""
        return await call(ctx, "backlinks", page, lambda m: links_result(m.links(page), limit))

    @server.tool(annotations=READ_ONLY)
    async def extract(ctx: Context, page: PageName,
                block: Annotated[int, Field(ge=1, le=100, description="1 = the first data "
                                            "block of the page")] = 1,
                language: Literal["json", "yaml"] | None = None) -> JsonResult:
        """The agent-data block of a page: its fenced ```json or ```yaml block, parsed."""
        def run(m: Mindgraph) -> dict[str, Any]:
            found = m.page(page)
            return {"page": found.path, "block": block,
                    "data": jsonable(m.extract(found.path, block, language))}
        return await call(ctx, "extract", page, run)
