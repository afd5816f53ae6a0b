"""How rest.py registers a route: ``route_maker`` builds the ``route`` decorator every
rest_<feature>.py module registers its handlers with (the guard, the query-key check, the
documented error responses, the lane it runs on), plus what those handlers share: the
caller's identity (``Caller``, from the bearer token alone), the JSON-object body check and
the ``FreshnessGate`` that refreshes the core from the wiki before a query.

A queued handler runs on its lane off the event loop, within ``serve.request_timeout_s``;
the arrival time taken on the event loop goes with it, so the gate knows which scan a queued
request still needs.
"""

from __future__ import annotations

import contextvars
import functools
import json
import threading
import time
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request

from ..core import Mindgraph
from ..errors import NotFoundError, Unauthenticated
from ..quotas import charge_to
from ..scopes import Identity
from . import schemas as s
from .lanes import Lane, ServerLanes
from .query_keys import checked_query_keys
from .rest_errors import AppError

_ARRIVED: contextvars.ContextVar[int] = contextvars.ContextVar("mindgraph_rest_arrived")
_BUDGET = "serve.request_timeout_s"


class FreshnessGate:
    """Group refresh: one wiki scan serves every request that arrived before the scan began.

    A request that arrives while a scan runs waits for the next one (which starts after it
    arrived, so it sees any file changed before the request); the requests queued behind that
    scan all share it. Errors of the scan reach the request that ran it."""

    def __init__(self, scan: Callable[[], Any]):
        self._scan = scan
        self._lock = threading.Lock()
        self._covered_ns = -1      # start time of the last scan that finished

    def ensure(self, arrived_ns: int) -> None:
        """Return once a scan that started at or after ``arrived_ns`` has finished."""
        with self._lock:
            if self._covered_ns >= arrived_ns:
                return
            started = time.monotonic_ns()
            self._scan()
            self._covered_ns = started


def freshness(mg: Mindgraph) -> Callable[[], None]:
    """The ``fresh()`` a handler calls before it reads the core: the wiki is re-read once for
    every request that arrived before the scan began (503 when the wiki folder is gone)."""

    def scan() -> None:
        try:
            mg.settings.require_wiki()    # gone while serving: the watcher saw only deletions
            mg.sync()
        except NotFoundError as exc:      # the wiki folder is gone: the server, not the query
            raise AppError(503, "Unavailable", str(exc)) from exc

    gate = FreshnessGate(scan)

    def fresh() -> None:
        gate.ensure(_ARRIVED.get(time.monotonic_ns()))

    return fresh


def deadline(budget_s: float) -> float:
    """When a queued handler's budget ends (``time.monotonic()``): ``budget_s`` after its
    request arrived, as its lane counts it, so work it checks against this stops when the
    caller has been told 504."""
    return _ARRIVED.get(time.monotonic_ns()) / 1e9 + budget_s


async def _authorize(request: Request) -> Identity:
    """The caller's identity, from its bearer token alone (scopes/auth.py), never from a
    parameter; 401 without a valid token. What the request then does — its LLM calls, the
    documents it creates — is charged to it (quotas/; the request's context ends with it,
    and the lanes run its handler in a copy). async: a header check needs no threadpool
    trip, and a context variable set here holds for the handler."""
    try:
        who = request.app.state.auth.identity_for(request.headers.get("authorization"))
    except Unauthenticated as exc:
        raise AppError(401, "Unauthorized", str(exc), {"WWW-Authenticate": "Bearer"}) from None
    quotas = getattr(request.app.state, "quotas", None)
    if quotas is not None:
        charge_to(quotas, who)
    return who


Caller = Annotated[Identity, Depends(_authorize)]


async def json_object_body(request: Request) -> None:
    """A JSON body must be an object: ``null`` or ``[]`` would otherwise pass as "no body"."""
    raw = await request.body()
    if not raw.strip():
        return
    try:
        value = json.loads(raw)
    except ValueError:
        return                      # the body parameter reports it, with the position
    if not isinstance(value, dict):
        raise AppError(422, "ValidationError",
                       f"body: send a JSON object, not "
                       f"{type(value).__name__ if value is not None else 'null'} (the fields "
                       f"of {request.method} {request.url.path} are in /openapi.json).")


def route_maker(app: FastAPI, lanes: ServerLanes, budget_s: float) -> Callable[..., Callable]:
    """The ``route(method, path, model, summary, *error_codes, ...)`` decorator of ``app``:
    every route but a ``public`` one needs a caller, every one refuses unknown query keys and
    documents its error responses; the handler runs on ``lane`` (the core lane by default,
    None: on the event loop) after ``prepare`` (on the per-CPU lane), within ``budget_s``."""
    guard = [Depends(_authorize)]

    def route(method: str, path: str, model: type, summary: str, *extra: int,
              public: bool = False, lane: Lane | None = lanes.core,
              prepare: Callable[..., Any] | None = None,
              dependencies: tuple[Any, ...] = (), files: tuple[str, ...] = (),
              **options: Any) -> Callable:
        codes = ((401, 429) if not public else ()) + (403, 421, 422, 503, 504) + extra
        if 404 in extra:    # a name that is not found may also be one of several (409)
            codes += (409,)
        responses: dict[int | str, dict[str, Any]] = {c: {"model": s.ErrorOut}
                                                      for c in sorted(set(codes))}
        if files:           # a file's bytes (``files``: its media types), not JSON
            binary = {"schema": {"type": "string", "format": "binary"}}
            responses[200] = {"description": "The file",
                              "content": {kind: binary for kind in files}}
        add = getattr(app, method)(path, response_model=model, summary=summary,
                                   dependencies=([] if public else guard)
                                   + [Depends(checked_query_keys)] + list(dependencies),
                                   responses=responses, **options)

        def register(handler: Callable[..., Any]) -> Callable[..., Any]:
            add(handler if lane is None else _queued(
                lane, handler, budget_s, None if prepare is None else (lanes.prepare, prepare)))
            return handler

        return register

    return route


def _queued(lane: Lane, handler: Callable[..., Any], budget_s: float,
            prepare: tuple[Lane, Callable[..., Any]] | None = None) -> Callable[..., Any]:
    """An async endpoint with ``handler``'s signature that runs ``handler`` on ``lane`` (after
    ``prepare``, called with the same arguments, on its lane), all within ``budget_s``. The
    arrival time (taken on the event loop) goes with the call, so the freshness gate knows
    which scan a queued request still needs."""

    @functools.wraps(handler)
    async def endpoint(**kwargs: Any) -> Any:
        arrived = time.monotonic_ns()
        deadline = time.monotonic() + budget_s
        if prepare is not None:
            await prepare[0].run(functools.partial(prepare[1], **kwargs), budget_s, _BUDGET)
        return await lane.run(functools.partial(_run_arrived, arrived, handler, kwargs),
                              deadline - time.monotonic(), _BUDGET)

    return endpoint


def _run_arrived(arrived_ns: int, handler: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    token = _ARRIVED.set(arrived_ns)
    try:
        return handler(**kwargs)
    finally:
        _ARRIVED.reset(token)


__all__ = ["Caller", "FreshnessGate", "deadline", "freshness", "json_object_body",
           "route_maker"]
