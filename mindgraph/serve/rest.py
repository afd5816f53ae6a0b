"""The REST API: a FastAPI app over one warm ``Mindgraph``.

Safe by default: the CLI binds 127.0.0.1; any other address requires a bearer token read from
the environment variable named by ``serve.token_env``. With ``scopes.identities`` configured,
every request needs a token, the token alone decides the identity, and each handler answers
from that identity's view (``Mindgraph.as_identity``). ``Guard`` (serve/guard.py) checks Host,
Origin and the body of every request before the app sees it. Every error is JSON of one shape
(``ErrorOut``: error, detail, and field errors for a 422) with a real status:

    401 missing or wrong token      404 unknown page, section, block, folder; no path between pages
        (a page of another tenant or scope is unknown, in the same words: scopes/views.py)
    400 well-formed but unusable input: since after until, a coverage folder without source
        files, a request body that is not text
    403 a web page of another site; an identity that may not do this (reindex: only the local
        identity)                   421 a Host that is not this loopback server (DNS rebinding)
    408 / 413 / 415 the body came too slowly, is too large, is not JSON; 413 also: more claims
        or evidence sentences than /validate takes, an upload that could never compile
    409 a reindex is already running, or the page's data block does not parse (fix the page)
    422 bad parameters (an unknown or repeated query key too), a body that is not an object
    429 this identity already has ``serve.requests_per_identity`` requests in flight
        (Retry-After; serve/token_gate.py); the other identities are still served; or it
        used up a quota, ``limits.llm_calls_per_hour``, ``limits.embedding_calls_per_hour``
        or ``limits.documents_per_day`` (Retry-After, ``setting`` names it; quotas/): no
        provider call made, nothing written
    502 an LLM/embedding provider failed (reindex): said in general terms, its own answer
        only in the server log (errors.for_agents); a 500 says no more than its type
    503 the server cannot answer: wiki folder missing, vector store down, mindgraph.yml wrong,
        too many slow requests at once (``serve.slow_workers``, ``serve.slow_queue``), the
        quota counts locked by another process (QuotaLedgerBusy, Retry-After; quotas/)
    504 the request ran past its budget (``serve.request_timeout_s``, reindex: its own); work
        that checks its budget (/validate) stops there

HEAD answers on every GET route as the GET would, without the body (serve/head.py), for
health checks: ``curl -I http://127.0.0.1:8765/health``.

Every limit is bounded by the schema, so bad parameters are 422 before any work is done, and
every route declares its response model, so the OpenAPI document describes what comes back.

Freshness: before a query the app refreshes the core from the wiki — draining the inotify
queue on Linux (microseconds), else scanning every file's stat — and one refresh serves every
request that arrived before it started (``FreshnessGate``), so 20 concurrent clients cost one
refresh, not 20, and a file changed before a request is still seen by it.
``POST /reindex`` runs one at a time; a second concurrent call gets 409 at once rather than
queueing a duplicate compile behind the first.

Handlers run on lanes (serve/lanes.py), off the event loop: queries on the core one at a time,
each identity's in arrival order and the identities in turn (the core answers one at a time under
its lock anyway; the turns keep one token's flood from holding up everyone else's answers), slow requests on a bounded lane of their own so they cannot starve
searches, reindex on a third. A handler may have a ``prepare`` step that needs no core lock
(embedding the query), run first on a lane with a thread per CPU so the next requests' model
inference overlaps the queued Python work of this one.

This module only composes the app; the routes live by feature in serve/rest_<feature>.py,
each registered with the ``route`` decorator of serve/rest_routing.py.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

from ..config import load_settings
from ..core import Mindgraph
from ..errors import ConfigError, MindgraphError
from ..documents.service import DocumentService
from ..scopes import Authenticator, Identity
from ..scopes.auth import usage_identity
from ..triage.service import with_relevance
from ..version import __version__
from .agent_paths import AgentPaths
from .callers import Callers
from .dashboard import DashboardHeaders, install_dashboard
from .guard import Guard, Policy, is_loopback
from .head import HeadAsGet
from .lanes import ServerLanes
from .rest_aliases import OldParameterNames
from .rest_apps import add_app_routes
from .rest_documents import add_document_routes, upload_rule
from .rest_errors import install_error_handlers
from .rest_graph import add_graph_routes
from .rest_jobs import add_job_routes
from .rest_pages import add_page_routes
from .rest_reports import add_report_routes
from .rest_routing import Caller, FreshnessGate, freshness, json_object_body, route_maker
from .rest_search import add_search_routes
from .rest_status import add_status_routes
from .rest_triage import add_triage_routes
from .rest_trust import add_trust_routes
from .timing import ServerTiming
from .token_gate import TokenGate, refused

WORKER_ENV = "MINDGRAPH_SERVE_WORKSPACE"     # {"base": dir, "config": file or null, "host"}


def _warm_up(mg: Mindgraph) -> None:
    """Load what a first search needs; a wiki or model that is not there yet is the first
    request's business (it gets the proper error), not the server's start."""
    try:
        mg.sync()
        mg.hybrid_retriever()
        mg.prepare_query("warm up")
    except Exception:  # noqa: BLE001 - see the docstring
        pass


def app_for_worker() -> FastAPI:
    """The app of one process of `mindgraph serve --workers N`: the parent names the workspace
    in ``WORKER_ENV``; the token comes from the same variable as in the parent.

    Each process keeps its own warm core and follows the wiki itself; the embedded store
    merges the processes' writes, ingest takes a file lock (a second reindex gets 409)."""
    spec = json.loads(os.environ[WORKER_ENV])
    settings = load_settings(spec["base"], spec["config"])
    return create_app(Mindgraph(settings), os.environ.get(settings.serve.token_env) or None,
                      spec.get("host"))


def create_app(mg: Mindgraph, token: str | None = None, host: str | None = None,
               sync_status: Callable[[], dict[str, Any]] | None = None) -> FastAPI:
    """Build the app for a server bound to ``host`` (default ``serve.host``). With ``token``
    set, every path but those ``token_gate.PUBLIC`` names (with its reasons: /health, the
    dashboard's page and files) needs ``Bearer <token>``. ``sync_status`` is the watcher's
    status (`serve --watch`) for GET /sync/status.

    The app takes over refreshing ``mg`` from the files (``auto_refresh`` is turned off)."""
    serve = mg.settings.serve
    lanes = ServerLanes(serve)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        from threadpoolctl import threadpool_limits

        # One BLAS thread: requests are the parallelism. With OpenBLAS's default (a thread per
        # core) its spinning workers took half the CPU of each /smart_search on 2 cores.
        limits = threadpool_limits(1, user_api="blas")
        # Warm the core on its own queue: indexes loaded, the model ready, before the first
        # request arrives (else it pays ~0.35 s; with --workers, every worker's first does).
        lanes.core.submit(functools.partial(_warm_up, mg))
        try:
            yield
        finally:
            limits.restore_original_limits()
            lanes.close()

    app = FastAPI(title="mindgraph", version=__version__, lifespan=lifespan,
                  description="Query a compiled markdown wiki: pages, sections, links, "
                              "graph, search, timeline and coverage.")
    app.state.mg = mg
    app.state.lanes = lanes         # what runs and waits where (tests, diagnostics)
    mg.auto_refresh = False
    fresh = freshness(mg)
    usage = mg.usage_log        # once: the property resolves the state path on every call
    auth = app.state.auth = Authenticator(mg.scopes,
                                          (serve.token_env, token) if token else None,
                                          token_env=serve.token_env)
    _require_token_off_loopback(auth, host or serve.host, serve.token_env)
    app.state.quotas = mg.quotas    # each identity's LLM calls and documents (rest_routing)

    def record(who: Identity, query: str, **fields: Any) -> None:
        usage.record("rest", query, **fields, **usage_identity(mg.scopes, who))

    route = route_maker(app, lanes, serve.request_timeout_s)
    install_error_handlers(app)
    # in this order, so the OpenAPI document lists the operations as it always has
    add_status_routes(route, mg, fresh, auth)
    add_page_routes(route, mg, fresh, record)
    add_search_routes(route, mg, fresh, record)
    add_graph_routes(route, mg, fresh, lanes)
    add_report_routes(route, mg, fresh, lanes)
    add_trust_routes(route, mg, lanes)
    add_job_routes(route, mg, fresh, lanes, sync_status)
    app.state.documents = DocumentService(mg)
    app.state.callers = Callers(mg.settings, token)
    add_document_routes(app, route, app.state.documents, lanes, app.state.callers.view,
                        json_object_body)

    def relevance(identity: Identity, created: dict[str, Any]) -> dict[str, Any]:
        # the item exists in the app by now: a wiki that cannot be refreshed (never compiled,
        # busy) must not turn its creation into an error an agent would retry
        if not mg.settings.wiki_dir.is_dir():       # never compiled: no catalog to point at
            return created
        try:
            fresh()      # the catalog as the wiki has it now
        except MindgraphError as exc:
            return {**created, "relevance_error": str(exc)}
        return with_relevance(mg.as_identity(identity), created, quiet_when_missing=True)
    add_app_routes(app, route, mg.settings, lanes, app.state.callers.view, json_object_body,
                   relevance)
    install_dashboard(app, route, mg, fresh, lanes.slow, Caller)
    add_triage_routes(app, route, mg, fresh, Caller)
    app.add_middleware(TokenGate, auth=auth,      # every path, FastAPI's own (/docs) too
                       per_identity=serve.requests_per_identity,
                       share=serve.share_per_identity)
    app.add_middleware(ServerTiming)
    app.add_middleware(DashboardHeaders)
    app.add_middleware(OldParameterNames)
    app.add_middleware(Guard, policy=Policy.for_server(serve, host or serve.host,
                                                       (upload_rule(mg.settings),)),
                       unauthorized=functools.partial(refused, auth))
    app.add_middleware(AgentPaths, base=mg.settings.base_dir)     # errors too
    app.add_middleware(HeadAsGet)   # outermost: every check a GET gets; the body dropped last
    return app


def _require_token_off_loopback(auth: Authenticator, host: str, token_env: str) -> None:
    """A server beyond loopback with no token would answer anyone: refuse to build it (the
    CLI says so before binding; this covers an app built another way)."""
    if not is_loopback(host) and not auth.required:
        raise ConfigError(f"A server on {host} needs a bearer token: set {token_env} (or "
                          f"configure scopes.identities), or bind 127.0.0.1.")


__all__ = ["FreshnessGate", "WORKER_ENV", "app_for_worker", "create_app"]
