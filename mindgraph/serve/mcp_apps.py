"""MCP tools of the note apps: an agent writes to the person's app (a task or note), never into
raw/, and can list the app's projects. The next `mindgraph pull` files what it wrote.

Each tool takes the caller's identity from ``Callers`` (serve/callers.py): over stdio the
local identity, which may write; over HTTP the token's, which may write only when the
adapter's entry lists it under ``writers``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, Any, Callable

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from ..adapters.apps import NoteApps
from ..core import Mindgraph
from ..triage.service import with_relevance
from .callers import Callers
from .mcp_documents import _caller_view

JsonResult = Annotated[CallToolResult, dict[str, Any]]
# writes to an outside service: they add or change an item, never delete one
APP_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                            open_world_hint=True)
APP_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                           open_world_hint=True)
AppName = Annotated[str | None, Field(max_length=100, description=(
    "The note app (an adapters: entry of mindgraph.yml) when several are configured"))]


def add_app_tools(server: MCPServer, mg: Mindgraph,
                  call: Callable[..., Awaitable[CallToolResult]], callers: Callers) -> None:
    """Register create_item, update_item and list_app_projects on ``server``."""
    apps = NoteApps(mg.settings)

    def as_writer(ctx: Context | None, app: str | None, run: Callable[[], Any]) -> Any:
        identity = _caller_view(callers, ctx).identity
        apps.check_writer(app, identity.name, identity.is_local)
        return run()

    @server.tool(annotations=APP_WRITE)
    async def create_item(
            title: Annotated[str, Field(min_length=1, max_length=500)],
            content: Annotated[str, Field(max_length=100_000)] = "",
            project: Annotated[str | None, Field(max_length=200, description=(
                "A project (list) by name or id; default: the app's inbox"))] = None,
            app: AppName = None, ctx: Context | None = None) -> JsonResult:
        """Create a task or note in the person's note app (e.g. TickTick). Returns the item,
        its deep link (url), the raw note the next pull files it as and, when the person
        keeps a Trunk Catalog, ``relevance``: what to do next (pick a trunk, append
        'why: <trunk> — <reason>' with update_item)."""
        return await call(ctx, "create_item", title, lambda core: with_relevance(
            core, as_writer(ctx, app, lambda: apps.create(title, content, project, app)),
            quiet_when_missing=True), slow=True)

    @server.tool(annotations=APP_WRITE)
    async def update_item(
            item: Annotated[str, Field(min_length=1, max_length=500, description=(
                "The item's id (item_id in its page's frontmatter), its raw note's path or "
                "its exact title"))],
            title: Annotated[str | None, Field(max_length=500)] = None,
            content: Annotated[str | None, Field(max_length=100_000,
                                                 description="Replaces the text")] = None,
            append: Annotated[str | None, Field(max_length=2_000, description=(
                "A line added at the end of the text, e.g. 'why: <trunk> — <reason>'"))] = None,
            app: AppName = None, ctx: Context | None = None) -> JsonResult:
        """Change an item of the person's note app: its title, its text, or one line
        appended to its text."""
        return await call(ctx, "update_item", item, lambda _core: as_writer(
            ctx, app, lambda: apps.update(item, title=title, content=content, append=append,
                                          app=app)), slow=True)

    @server.tool(annotations=APP_READ)
    async def list_app_projects(app: AppName = None, ctx: Context | None = None) -> JsonResult:
        """The projects (lists) of the person's note app: id, name and kind (tasks or
        notes), for create_item's project."""
        return await call(ctx, "list_app_projects", app or "", lambda _core: as_writer(
            ctx, app, lambda: apps.projects(app)), slow=True)


__all__ = ["add_app_tools"]
