"""REST routes that say how the server and the wiki stand: GET /health (public: liveness,
the version, and the page count for a caller who may see pages) and GET /stats (pages,
sections, links, tags, the trust mix and the raw notes' states)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Header

from ..core import Mindgraph
from ..errors import Unauthenticated
from ..scopes import Authenticator
from ..version import __version__
from . import schemas as s
from .rest_routing import Caller


def add_status_routes(route: Callable[..., Callable], mg: Mindgraph, fresh: Callable[[], None],
                      auth: Authenticator) -> None:
    """Register the routes with rest.py's ``route`` helper; ``auth`` names a token's
    identity (/health is public, so it has no caller)."""

    @route("get", "/health", s.HealthOut, "Liveness and the page count", public=True)
    def health(authorization: str | None = Header(None, include_in_schema=False)
               ) -> dict[str, Any]:
        fresh()
        try:        # public: a page count only for a caller who may see pages
            pages = len(mg.as_identity(auth.identity_for(authorization)).vault().pages)
        except Unauthenticated:
            pages = None
        return {"status": "ok", "version": __version__, "pages": pages,
                "token": auth.token_state(authorization)}

    @route("get", "/stats", s.StatsOut, "Pages, sections, links, tags, trust mix, raw states")
    def stats(who: Caller) -> dict[str, Any]:
        fresh()
        return mg.as_identity(who).stats()


__all__ = ["add_status_routes"]
