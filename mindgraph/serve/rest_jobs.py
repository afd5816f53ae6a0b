"""REST routes of the background work: GET /sync/status (what the watcher of `serve --watch`
has pending or running, and its last run) and POST /reindex (compile the changed raw notes,
then embed the changed sections). Both are for the local identity only (403 otherwise): the
first names the changed files of every tenant, the second writes the whole workspace.

Reindex runs one at a time on its own lane, not behind queries: a second call while one runs
gets 409 at once rather than queueing a duplicate compile. Past ``serve.reindex_timeout_s``
the caller gets 504 and the run goes on in the background (409 until it has finished)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi import Body, Depends, Query

from ..core import Mindgraph
from . import schemas as s
from .lanes import LaneTimeout, ServerLanes
from .rest_errors import AppError
from .rest_routing import Caller, json_object_body


def add_job_routes(route: Callable[..., Callable], mg: Mindgraph, fresh: Callable[[], None],
                   lanes: ServerLanes,
                   sync_status: Callable[[], dict[str, Any]] | None) -> None:
    """Register the routes with rest.py's ``route`` helper; ``sync_status`` is the watcher's
    status (None: no watcher)."""
    serve = mg.settings.serve
    reindexing = threading.Lock()

    @route("get", "/sync/status", s.SyncStatusOut,
           "What the watcher (serve --watch) has pending or running, and its last run", 403,
           lane=None)
    def sync_state(who: Caller) -> dict[str, Any]:
        if not who.is_local:      # it names changed files of every tenant
            raise AppError(403, "Forbidden", f"{who.name} may not read the watcher's status: it "
                                             f"names the changed files of the whole workspace, "
                                             f"so only the local identity (serve.token_env) may.")
        # off the core lane: it answers while a run holds the core
        return sync_status() if sync_status is not None else s.SyncStatusOut().model_dump()

    @route("post", "/reindex", s.ReindexOut,
           "Compile changed raw notes (ingest), then embed changed sections", 400, 408, 409,
           413, 415, 502, lane=None, dependencies=(Depends(json_object_body),))
    async def reindex(who: Caller, body: s.ReindexIn = Body(None),     # absent: defaults
                      embed: bool | None = Query(None, description="Also embed the changed "
                                                                   "sections (default true)"),
                      dry_run: bool | None = Query(None, description="Say what would change; "
                                                                     "write nothing (default "
                                                                     "false)")
                      ) -> dict[str, Any]:
        given = body or s.ReindexIn()
        for name, value in (("embed", embed), ("dry_run", dry_run)):
            other = getattr(given, name)
            if value is not None and other is not None and value != other:
                raise AppError(422, "Unprocessable Entity",
                                 f"'{name}' is {other} in the body but {value} in the query; "
                                 f"give it once.")
        if not who.is_local:
            raise AppError(403, "Forbidden", f"{who.name} may not reindex: compiling and "
                                             f"embedding write the whole workspace, so only "
                                             f"the local identity (serve.token_env) may.")
        embed = _first(embed, given.embed, True)
        dry_run = _first(dry_run, given.dry_run, False)
        # not behind queries, and a second call gets its 409 at once
        if not reindexing.acquire(blocking=False):
            raise AppError(409, "Conflict", "A reindex is already running on this server; "
                                              "retry when it has finished.")

        def work() -> dict[str, Any]:
            try:
                return _reindex(mg, fresh, embed=embed, dry_run=dry_run)
            finally:
                reindexing.release()

        try:
            return await lanes.admin.run(work, serve.reindex_timeout_s,
                                         "serve.reindex_timeout_s", on_dropped=reindexing.release)
        except LaneTimeout as exc:
            raise AppError(504, "Gateway Timeout",
                             f"{exc} The reindex goes on in the background: a new one answers "
                             f"409 until it has finished.") from None


def _first(*values: bool | None) -> bool:
    return next(v for v in values if v is not None)  # type: ignore[return-value]


def _reindex(mg: Mindgraph, fresh: Callable[[], None], *, embed: bool,
             dry_run: bool) -> dict[str, Any]:
    started = time.perf_counter()
    notes: list[str] = []
    ingest = None
    if mg.settings.raw_dir.is_dir():
        # re-syncs the warm indexes itself, unless a dry run (which changes nothing)
        ingest = mg.ingest(dry_run=dry_run).to_dict()
    elif dry_run:
        # not re-read either: that updates the page cache, the indexes and their files
        # under .mindgraph, and embeds the pages that changed
        notes.append(f"no raw folder at {mg.settings.raw_dir}: nothing to compile")
    else:
        notes.append(f"no raw folder at {mg.settings.raw_dir}: nothing to compile, "
                     f"only the wiki was re-read")
        fresh()
    embedded = None
    if embed:
        report, _ = mg.embed(dry_run=dry_run)
        embedded = report.as_dict()
    return {"ingest": ingest, "embed": embedded, "notes": notes,
            "seconds": round(time.perf_counter() - started, 3)}


__all__ = ["add_job_routes"]
