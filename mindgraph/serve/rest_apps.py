"""REST routes of the note apps: /apps/projects, POST /apps/items, PATCH /apps/items/{id}.

Writes go to the app through its adapter (adapters/apps.py), never into raw/; the next `pull`
files the item. The caller's identity comes from its bearer token (``viewer``): the local
identity may write, another identity only when the adapter's entry lists it under
``writers`` (403 otherwise). The calls reach the app over the network, so they run on the
slow lane (they never hold up searches). Errors: 404 no such item or note app, 400 nothing to
change, 403 an identity that may not write, 502 the app failed (said in general terms:
errors.for_agents; the app's own reply, its address and the token's variable go to the
server's log only).
"""

from __future__ import annotations

from typing import Any, Callable

from fastapi import Depends, FastAPI, Path, Query, Request

from ..adapters.apps import NoteApps
from ..config import Settings
import logging

from ..errors import AdapterError, ConfigError, NotFoundError, for_agents
from . import schemas_apps as a
from .lanes import ServerLanes
from .rest_errors import AppError

_LOG = logging.getLogger("mindgraph.serve")
_CODES = (400, 403, 404, 408, 413, 415, 502)


def add_app_routes(app: FastAPI, route: Callable[..., Callable], settings: Settings,
                   lanes: ServerLanes, viewer: Callable[[Request], Any],
                   json_body: Any, relevance: Callable[[Any, dict], dict] | None = None) -> None:
    """Register the routes on ``app`` with rest.py's ``route`` helper; ``relevance(identity,
    created)`` adds the capture-time trunk instruction to a created item's answer."""
    apps = NoteApps(settings)
    write = {"lane": lanes.slow, "dependencies": (Depends(json_body),)}

    @route("get", "/apps/projects", a.ProjectsOut, "The note app's projects (lists)",
           404, 502, lane=lanes.slow)
    def projects(request: Request, app: str | None = Query(
            None, min_length=1, max_length=100, description="The note app, when several "
                                                             "are configured")) -> Any:
        return _as_writer(apps, app, viewer(request), lambda: apps.projects(app))

    @route("post", "/apps/items", a.ItemResultOut,
           "Create an item in the note app (not in raw/: the next pull files it)", *_CODES,
           **write)
    def create_item(request: Request, body: a.ItemIn) -> Any:
        view = viewer(request)
        created = _as_writer(apps, body.app, view, lambda: apps.create(
            body.title, body.content, body.project, body.app))
        return relevance(view.identity, created) if relevance else created

    @route("patch", "/apps/items/{item_id}", a.ItemResultOut,
           "Change an item's title or content, or append a line to it, in the note app",
           *_CODES, **write)
    def update_item(request: Request, body: a.ItemPatch,
                    item_id: str = Path(..., pattern=a.ITEM_ID_PATTERN,
                                        description="The item's id (item_id in the "
                                                    "frontmatter of its pulled note)")) -> Any:
        return _as_writer(apps, body.app, viewer(request), lambda: apps.update(
            item_id, title=body.title, content=body.content, append=body.append,
            app=body.app))


def _as_writer(apps: NoteApps, app: str | None, view: Any, run: Callable[[], Any]) -> Any:
    """``run()`` when the caller may write to the app (else 403), with the app's failures as
    HTTP answers: no such app 404, the app failing 502."""
    try:
        apps.check_writer(app, view.identity.name, view.identity.is_local)
        return run()
    except NotFoundError:
        raise
    except ConfigError as exc:        # no note app, or none of that name
        raise AppError(404, "NotFound", str(exc)) from None
    except AdapterError as exc:
        _LOG.warning("note app: %s: %s", type(exc).__name__, exc)
        raise AppError(502, "AppError", for_agents(exc)) from None


__all__ = ["add_app_routes"]
