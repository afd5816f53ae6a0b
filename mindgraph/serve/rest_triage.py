"""REST routes of triage (mindgraph/triage/): GET /triage (the items completed since a day,
scored against the Trunk Catalog, grouped by trunk) and GET /triage/relevance (the instruction
block for an agent that just created an item). Each caller sees its own view's pages only."""

from __future__ import annotations

import datetime as dt
import typing
from typing import Any, Callable, Literal

from fastapi import FastAPI, Query
from pydantic import BaseModel, Field

from ..core import Mindgraph
from ..triage.service import relevance_for, triage, yesterday


class TriagedItem(BaseModel):
    """One completed item and the trunk it serves."""

    id: str
    title: str
    url: str | None
    completed: str
    trunk: str | None
    score: int = Field(ge=0, le=3)
    reason: str
    judge: str


class TrunkGroup(BaseModel):
    """The items of one trunk (null: no trunk), best first."""

    trunk: str | None
    items: list[TriagedItem]


class TriageOut(BaseModel):
    """Items completed since a day, grouped by trunk; markdown is the morning message."""

    since: str
    catalog: str
    items: int
    notes: list[str]
    trunks: list[TrunkGroup]
    markdown: str


class RelevanceOut(BaseModel):
    """What the calling agent should do with a new item."""

    item: str
    relevance: str


def add_triage_routes(app: FastAPI, route: Callable[..., Callable], mg: Mindgraph,
                      fresh: Callable[[], None], caller: Any) -> None:
    """Register the routes with rest.py's ``route`` helper; ``caller`` is its identity
    dependency."""
    who_is = typing.get_args(caller)[1]

    @route("get", "/triage", TriageOut,
           "Items completed since a day, scored 0-3 against the Trunk Catalog, by trunk", 400,
           404, 502)
    def triage_route(who: Any = who_is,
                     since: dt.date | None = Query(None, description=(
                         "YYYY-MM-DD: items completed on or after this day (default: "
                         "yesterday)")),
                     judge: Literal["auto", "offline"] = Query(
                         "auto", description="auto: the configured LLM when there is one; "
                                             "offline: similarity")) -> dict[str, Any]:
        fresh()
        llm = None
        if judge == "auto":
            from ..providers.llm.factory import make_llm_provider

            llm = make_llm_provider(mg.settings)
        report = triage(mg.as_identity(who), since or yesterday(), llm)
        return {**report.to_dict(), "markdown": report.markdown()}

    @route("get", "/triage/relevance", RelevanceOut,
           "The instruction block for an agent that just created an item", 400, 404)
    def relevance_route(who: Any = who_is,
                        item: str = Query(..., min_length=1, max_length=200,
                                          description="The new item's id"),
                        title: str = Query(..., min_length=1, max_length=1000,
                                           description="The new item's title")
                        ) -> dict[str, Any]:
        fresh()
        return {"item": item, "relevance": relevance_for(mg.as_identity(who), item, title)}


__all__ = ["add_triage_routes"]
