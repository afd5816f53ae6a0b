"""MCP tools of the documents API: the search an agent reaches for first, and the two writes
an agent needs (a new note, a typed link).

Each tool takes the caller's view from ``Callers`` (serve/callers.py): over HTTP from the
request's bearer token, over stdio the configured local identity; what it returns and what it
may write is that view's.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, Any, Callable, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from ..core import Mindgraph
from ..documents.service import DocumentService
from .callers import Callers

JsonResult = Annotated[CallToolResult, dict[str, Any]]
SEARCH = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                         open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                        open_world_hint=False)
Ref = Annotated[str, Field(min_length=1, max_length=1000,
                           description="A document id (from search_documents) or a page path, "
                                       "title or alias")]
Kind = Literal["wikilink", "reference", "depends_on", "extends", "related", "supersedes",
               "contradicts"]


def _caller_view(callers: Callers, ctx: Context | None) -> Any:
    """The view of the client of this tool call (its HTTP request's token; none: local;
    Unauthenticated, a tool error, for a request without a known token)."""
    request = None
    if ctx is not None:
        try:
            request = ctx.request_context.request
        except ValueError:           # called outside a request (in-process, tests)
            request = None
    return callers.view(request if hasattr(request, "headers") else None)


def add_document_tools(server: MCPServer, mg: Mindgraph,
                       call: Callable[..., Awaitable[CallToolResult]],
                       callers: Callers) -> DocumentService:
    """Register search_documents, create_document and link_documents on ``server``."""
    service = DocumentService(mg)

    @server.tool(annotations=SEARCH)
    async def search_documents(
            query: Annotated[str, Field(min_length=1, max_length=1000,
                                        description="What you are looking for, in words")],
            scope: Annotated[Literal["all", "personal", "team", "shared"], Field(
                description="Only your personal notes, your teams' or your tenant's shared "
                            "ones (default: all you can see)")] = "all",
            types: Annotated[list[Annotated[str, Field(min_length=1, max_length=100)]], Field(
                max_length=20, description="Only documents of these types (frontmatter "
                                           "'type', e.g. note, concept, guide)")] = [],
            max_results: Annotated[int, Field(ge=1, le=50)] = 10,
            ctx: Context | None = None) -> JsonResult:
        """Search every document you can see — start here. Keywords, meaning and links
        fused (keywords alone when nothing is embedded yet), best first; each hit gives the
        document id, page path, section id and a snippet (read more with get_page or
        get_section)."""
        return await call(ctx, "search_documents", query, lambda _core: service.search(
            _caller_view(callers, ctx), query, scope=None if scope == "all" else scope,
            types=types, max_results=max_results))

    @server.tool(annotations=WRITE)
    async def create_document(
            title: Annotated[str, Field(min_length=1, max_length=300)],
            text: Annotated[str, Field(max_length=900_000, description="Markdown body")] = "",
            tags: Annotated[list[Annotated[str, Field(min_length=1, max_length=100,
                                                      pattern=r"^[^ \t\r\n,]+$")]],
                            Field(max_length=50)] = [],
            type: Annotated[str | None, Field(max_length=100)] = None,
            scope: Literal["personal", "team", "shared"] = "personal",
            team: Annotated[str | None, Field(max_length=100,
                                              description="With scope team")] = None,
            ctx: Context | None = None) -> JsonResult:
        """Write a new note into your personal folder (or a team's, or your tenant's shared
        one); it is compiled at once and searchable when this returns (see 'searchable')."""
        return await call(ctx, "create_document", title, lambda _core: service.create(
            _caller_view(callers, ctx), title=title, text=text, tags=tags, type=type,
            scope=scope, team=team), slow=True)

    @server.tool(annotations=WRITE)
    async def link_documents(source: Ref, target: Ref, kind: Kind,
                             context: Annotated[str, Field(max_length=1000, description=(
                                 "The sentence that says why they are linked"))] = "",
                             ctx: Context | None = None) -> JsonResult:
        """Record a typed link from one document to another (kept across recompiles, shown
        as a manual link in backlinks and the graph)."""
        return await call(ctx, "link_documents", f"{source} -> {target}", lambda _core: service.add_link(
            _caller_view(callers, ctx), source, target, kind, context), slow=True)

    return service


__all__ = ["add_document_tools"]
