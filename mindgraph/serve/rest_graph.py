"""REST routes over the link graph: GET /related (pages within N links of a page), GET
/path (the shortest chain of pages between two; 404 when there is none) and GET
/communities (Leiden). Path and communities walk the whole graph, so they run on the slow
lane and cannot starve searches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any, Literal

from fastapi import Query

from ..core import Mindgraph
from ..graph.communities import MIN_COMMUNITY_SIZE
from . import schemas as s
from .lanes import ServerLanes
from .rest_params import page_name
from .rest_routing import Caller


def add_graph_routes(route: Callable[..., Callable], mg: Mindgraph, fresh: Callable[[], None],
                     lanes: ServerLanes) -> None:
    """Register the routes with rest.py's ``route`` helper."""

    @route("get", "/related", s.RelatedOut, "Pages within N links of a page", 404)
    def related(who: Caller, page: str = page_name(), depth: int = Query(1, ge=1, le=5),
                direction: Literal["both", "out", "in"] = "both",
                links_only: bool = False) -> dict[str, Any]:
        fresh()
        core = mg.as_identity(who)
        found = core.page(page)
        return {"page": found.path, "depth": depth,
                "related": [asdict(n) for n in core.related(found.path, depth, direction,
                                                            links_only=links_only)]}

    @route("get", "/path", s.PathOut, "Shortest chain of pages between two pages", 404,
           lane=lanes.slow)
    def path(who: Caller, source: str = page_name(), target: str = page_name(),
             via_tags: bool = Query(False, description="Count shared tags as steps too "
                                                       "(default: real links only)")
             ) -> dict[str, Any]:
        fresh()
        return mg.as_identity(who).path_with_steps(source, target, via_tags)

    @route("get", "/communities", s.CommunitiesOut, "Communities of the graph (Leiden)",
           lane=lanes.slow)
    def communities(who: Caller, limit: int = Query(50, ge=1, le=1000),
                    min_size: int = Query(MIN_COMMUNITY_SIZE, ge=1, description=(
                        "Leave out smaller communities (a page with no links is a "
                        "community of one)"))) -> dict[str, Any]:
        fresh()
        found = mg.as_identity(who).communities(min_size)
        return {"count": len(found),
                "communities": [{**asdict(c), "size": c.size} for c in found[:limit]]}


__all__ = ["add_graph_routes"]
