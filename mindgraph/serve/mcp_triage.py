"""MCP tools of triage (mindgraph/triage/): ``triage`` (what was completed since a day,
scored against the Trunk Catalog) and ``item_relevance`` (the instruction block for an item
the agent just created: pick a trunk, then append one ``why:`` line through update)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable
from typing import Annotated, Any, Callable, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from ..core import Mindgraph
from ..errors import InputError
from ..triage.service import relevance_for, triage, yesterday

JsonResult = Annotated[CallToolResult, dict[str, Any]]
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)


def add_triage_tools(server: MCPServer, call: Callable[..., Awaitable[CallToolResult]]) -> None:
    """Register triage and item_relevance on ``server`` (``call``: mcp.py's runner)."""

    @server.tool(annotations=READ_ONLY)
    async def triage_completed(
            ctx: Context,
            since: Annotated[str | None, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description=(
                "YYYY-MM-DD: the items completed on or after this day (default: "
                "yesterday)"))] = None,
            judge: Annotated[Literal["auto", "offline"], Field(description=(
                "auto: the configured LLM when there is one; offline: similarity"))] = "auto",
    ) -> JsonResult:
        """The person's items completed since a day, each scored 0-3 against the projects
        they care about now (the Trunk Catalog note), grouped by project, with a markdown
        morning message. Read-only."""
        first = since or yesterday().isoformat()

        def run(m: Mindgraph) -> dict[str, Any]:
            try:
                day = dt.date.fromisoformat(first)
            except ValueError:
                raise InputError(f"since '{first}' is not a day; use YYYY-MM-DD.") from None
            llm = None
            if judge == "auto":
                from ..providers.llm.factory import make_llm_provider

                llm = make_llm_provider(m.settings)
            report = triage(m, day, llm)
            return {**report.to_dict(), "markdown": report.markdown()}
        return await call(ctx, "triage_completed", first, run, slow=True)

    @server.tool(annotations=READ_ONLY)
    async def item_relevance(
            ctx: Context,
            item: Annotated[str, Field(min_length=1, max_length=200,
                                       description="The id of the item you just created")],
            title: Annotated[str, Field(min_length=1, max_length=1000,
                                        description="Its title")],
    ) -> JsonResult:
        """After creating an item: what to do so it is filed under the project it serves —
        pick one trunk of the live Trunk Catalog and append one line `why: <trunk> — <reason>`
        to the item with update. Read-only."""
        return await call(ctx, "item_relevance", item,
                          lambda m: {"item": item, "relevance": relevance_for(m, item, title)})


__all__ = ["add_triage_tools"]
