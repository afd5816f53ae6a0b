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
    408 / 413 / 415 the body came too slowly, is too large, is not JSON
    409 a reindex is already running, or the page's data block does not parse (fix the page)
    422 bad parameters (an unknown or repeated query key too), a body that is not an object
    502 an LLM/embedding provider failed (reindex)
    503 the server cannot answer: wiki folder missing, vector store down, mindgraph.yml wrong,
        too many slow requests at once (``serve.slow_workers``, ``serve.slow_queue``)
    504 the request ran past its budget (``serve.request_timeout_s``, reindex: its own)

Every limit is bounded by the schema, so bad parameters are 422 before any work is done, and
every route declares its response model, so the OpenAPI document describes what comes back.

Freshness: before a query the app refreshes the core from the wiki — draining the inotify
queue on Linux (microseconds), else scanning every file's stat — and one refresh serves every
request that arrived before it started (``FreshnessGate``), so 20 concurrent clients cost one
refresh, not 20, and a file changed before a request is still seen by it.
``POST /reindex`` runs one at a time; a second concurrent call gets 409 at once rather than
queueing a duplicate compile behind the first.

Handlers run on lanes (serve/lanes.py), off the event loop: queries on the core one at a time
in arrival order (the core answers one at a time under its lock anyway, and a FIFO keeps the p95
close to the median), slow requests on a bounded lane of their own so they cannot starve
searches, reindex on a third. A handler may have a ``prepare`` step that needs no core lock
(embedding the query), run first on a lane with a thread per CPU so the next requests' model
inference overlaps the queued Python work of this one.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import functools
import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Annotated, Any, Literal

from fastapi import Body, Depends, FastAPI, Header, Query, Request
from pydantic import BeforeValidator

from ..config import load_settings
from ..core import Mindgraph
from ..documents.service import DocumentService
from ..errors import NotFoundError, Unauthenticated
from ..lint.findings import RULES
from ..scopes import Authenticator, Identity
from ..scopes.auth import usage_identity
from ..trust.answer import TrustCriteria, context_answer, hybrid_answer, keyword_answer
from ..trust.validate import validate_text
from ..version import __version__
from . import schemas as s
from .dashboard import DashboardHeaders, install_dashboard
from .agent_paths import AgentPaths
from .guard import Guard, Policy
from .lanes import Lane, LaneTimeout, ServerLanes
from .params import folder_inside
from .rest_errors import AppError, install_error_handlers
from .rest_aliases import OldParameterNames
from .query_keys import checked_query_keys
from .callers import Callers
from .rest_documents import add_document_routes, upload_rule
from .rest_apps import add_app_routes
from .rest_triage import add_triage_routes
from .timing import ServerTiming

MAX_LIMIT = 100
_MIN_TRUST = Query(None, pattern="^[Ll]?[0-3]$", description="Only pages verified to at least this "
                   "level: L0..L3 (L2: claims checked against the evidence)")
_FRESH = Query(False, alias="fresh", description="Only pages whose verification is current")
_RULE = "(" + "|".join(RULES) + ")"
RULE_LIST = f"^{_RULE}(,{_RULE})*$"
WORKER_ENV = "MINDGRAPH_SERVE_WORKSPACE"     # {"base": dir, "config": file or null, "host"}
_ARRIVED: contextvars.ContextVar[int] = contextvars.ContextVar("mindgraph_rest_arrived")


def _iso_day(value: Any) -> Any:
    # pydantic would also take "0.0" or "1700000000" as a date (Unix time): only YYYY-MM-DD
    if isinstance(value, str) and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError("use a date as YYYY-MM-DD")
    return value


Day = Annotated[dt.date, BeforeValidator(_iso_day)]


def _name() -> Any:
    # a fresh Query per parameter: FastAPI binds a Query object to the first name it serves
    return Query(..., min_length=1, max_length=1000, description="Path, title, alias or file name")


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


_BUDGET = "serve.request_timeout_s"


def _warm_up(mg: Mindgraph) -> None:
    """Load what a first search needs; a wiki or model that is not there yet is the first
    request's business (it gets the proper error), not the server's start."""
    try:
        mg.sync()
        mg.hybrid_retriever()
        mg.prepare_query("warm up")
    except Exception:  # noqa: BLE001 - see the docstring
        pass


def _run_arrived(arrived_ns: int, handler: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    token = _ARRIVED.set(arrived_ns)
    try:
        return handler(**kwargs)
    finally:
        _ARRIVED.reset(token)


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
    set, every route but /health needs ``Bearer <token>``. ``sync_status`` is the watcher's
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
    mg.auto_refresh = False
    gate = FreshnessGate(_scan_wiki(mg))
    reindexing = threading.Lock()
    usage = mg.usage_log        # once: the property resolves the state path on every call

    def fresh() -> None:
        gate.ensure(_ARRIVED.get(time.monotonic_ns()))

    auth = app.state.auth = Authenticator(mg.scopes,
                                          (serve.token_env, token) if token else None)
    guard = [Depends(_authorize)]

    def record(who: Identity, query: str, **fields: Any) -> None:
        usage.record("rest", query, **fields, **usage_identity(mg.scopes, who))

    def route(method: str, path: str, model: type, summary: str, *extra: int,
              public: bool = False, lane: Lane | None = lanes.core,
              prepare: Callable[..., Any] | None = None,
              dependencies: tuple[Any, ...] = (), **options: Any) -> Callable:
        codes = ((401,) if not public else ()) + (403, 421, 422, 503, 504) + extra
        add = getattr(app, method)(path, response_model=model, summary=summary,
                                   dependencies=([] if public else guard)
                                   + [Depends(checked_query_keys)] + list(dependencies),
                                   responses={c: {"model": s.ErrorOut}
                                              for c in sorted(set(codes))},
                                   **options)

        def register(handler: Callable[..., Any]) -> Callable[..., Any]:
            add(handler if lane is None else _queued(
                lane, handler, serve.request_timeout_s,
                None if prepare is None else (lanes.prepare, prepare)))
            return handler

        return register

    install_error_handlers(app)

    @route("get", "/health", s.HealthOut, "Liveness and the page count", public=True)
    def health(authorization: str | None = Header(None, include_in_schema=False)
               ) -> dict[str, Any]:
        fresh()
        try:        # public: a page count only for a caller who may see pages
            pages = len(mg.as_identity(auth.identity_for(authorization)).vault().pages)
        except Unauthenticated:
            pages = None
        return {"status": "ok", "version": __version__, "pages": pages}

    @route("get", "/stats", s.StatsOut, "Pages, sections, links, tags, trust mix, raw states")
    def stats(who: Caller) -> dict[str, Any]:
        fresh()
        return mg.as_identity(who).stats()

    @route("get", "/page", s.PageOut, "A page with its sections, links and backlinks", 404)
    def page(who: Caller, page: str = _name()) -> dict[str, Any]:   # ?name= still works
        fresh()
        core = mg.as_identity(who)
        found = core.page(page)
        record(who, page, intent="page", kind="lookup", results=[found.path], result_count=1)
        links = core.links(found.path)
        return {"path": found.path, "title": found.title, "aliases": list(found.aliases),
                "tags": list(found.tags), "url": core.url(found.path),
                "frontmatter": dict(found.frontmatter),
                "sections": [{"id": x.id, "heading": x.heading, "level": x.level,
                              "path": list(x.path), "lines": [x.start_line, x.end_line]}
                             for x in found.sections],
                "outgoing": links["outgoing"], "backlinks": links["backlinks"],
                "trust": mg.trust_of([found.path])[found.path]}

    @route("get", "/section", s.SectionOut, "One section of a page, with its text", 404)
    def section(who: Caller, page: str = _name(),
                section_id: str = Query(..., min_length=1, max_length=1000,
                                        description="Section id, as listed by /page (?id= "
                                                    "still works)")) -> dict[str, Any]:
        fresh()
        found, sec = mg.as_identity(who).section(page, section_id)
        record(who, f"{page}#{section_id}", intent="section", kind="lookup",
               results=[found.path], result_count=1)
        return {"page": found.path, "id": sec.id, "heading": sec.heading,
                "path": list(sec.path), "text": sec.text,
                "lines": [sec.start_line, sec.end_line]}

    @route("get", "/extract", s.ExtractOut, "A page's fenced json/yaml data block", 404, 409)
    def extract(who: Caller, page: str = _name(),
                block: int = Query(1, ge=1, le=1000)) -> dict[str, Any]:
        fresh()
        core = mg.as_identity(who)
        return {"page": core.page(page).path, "block": block, "data": core.extract(page, block)}

    @route("get", "/search", s.KeywordSearchOut, "Keyword (BM25) search")
    def search(who: Caller,
               q: str = Query(..., min_length=1, max_length=1000, description="The query"),
               limit: int = Query(10, ge=1, le=MAX_LIMIT), min_trust: str | None = _MIN_TRUST,
               fresh_only: bool = _FRESH) -> dict[str, Any]:
        started = time.perf_counter()
        fresh()
        results, notes = keyword_answer(mg.as_identity(who), q, limit,
                                        TrustCriteria.parse(min_trust, fresh_only))
        latency = (time.perf_counter() - started) * 1e3
        record(who, q, intent="keyword", results=[r["page"] for r in results],
                     result_count=len(results), latency_ms=latency)
        return {"query": q, "retriever": "keyword", "count": len(results), "results": results,
                "degradation": notes, "latency_ms": round(latency, 2)}

    @route("get", "/smart_search", s.SmartSearchOut,
           "Hybrid search: intent, keyword + vector fusion, graph boost, explained",
           prepare=lambda q, **_: mg.prepare_query(q))
    def smart_search(who: Caller, q: str = Query(..., min_length=1, max_length=1000),
                     limit: int = Query(10, ge=1, le=MAX_LIMIT),
                     min_trust: str | None = _MIN_TRUST,
                     fresh_only: bool = _FRESH) -> dict[str, Any]:
        started = time.perf_counter()
        fresh()
        answer = hybrid_answer(mg.as_identity(who), q, limit,
                               TrustCriteria.parse(min_trust, fresh_only))
        record(who, q, intent=answer["intent"]["name"],
                     results=[r["page"] for r in answer["results"]],
                     result_count=len(answer["results"]),
                     latency_ms=(time.perf_counter() - started) * 1e3)
        return answer

    @route("get", "/context", s.ContextOut,
           "Top knowledge for a situation as markdown (empty on timeout or error)")
    def context(who: Caller, situation: str = Query(..., min_length=1, max_length=4000),
                limit: int = Query(3, ge=1, le=20), min_trust: str | None = _MIN_TRUST,
                fresh_only: bool = _FRESH) -> dict[str, Any]:
        started = time.perf_counter()
        fresh()
        block = context_answer(mg.as_identity(who), situation, limit,
                               TrustCriteria.parse(min_trust, fresh_only))
        record(who, situation, intent="context", results=block["sources"],
                     result_count=len(block["sources"]),
                     latency_ms=(time.perf_counter() - started) * 1e3, status=block["status"])
        return block

    @route("get", "/related", s.RelatedOut, "Pages within N links of a page", 404)
    def related(who: Caller, page: str = _name(), depth: int = Query(1, ge=1, le=5),
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
    def path(who: Caller, source: str = _name(), target: str = _name(),
             via_tags: bool = Query(False, description="Count shared tags as steps too "
                                                       "(default: real links only)")
             ) -> dict[str, Any]:
        fresh()
        return {"path": mg.as_identity(who).path(source, target, via_tags)}

    @route("get", "/communities", s.CommunitiesOut, "Communities of the graph (Leiden)",
           lane=lanes.slow)
    def communities(who: Caller, limit: int = Query(50, ge=1, le=1000)) -> dict[str, Any]:
        fresh()
        found = mg.as_identity(who).communities()
        return {"count": len(found), "communities": [asdict(c) for c in found[:limit]]}

    @route("get", "/check", s.CheckOut, "Broken links, pages without backlinks, duplicates",
           lane=lanes.slow)
    def check(who: Caller) -> dict[str, Any]:
        fresh()
        return mg.as_identity(who).check().to_dict()

    @route("get", "/lint", s.LintOut, "What a careful editor would flag: summaries, dangling "
           "references, conflicting facts, deprecated-but-current, near-duplicates", 400,
           lane=lanes.slow)
    def lint(who: Caller, judge: Literal["offline", "llm", "auto"] = Query(
                 "offline", description="Who decides which similar statements contradict: "
                                        "offline rules, the configured LLM, or the LLM when "
                                        "one is configured"),
             limit: int = Query(200, ge=1, le=10000, description="At most this many findings "
                                                                 "(counts cover all)"),
             rule: str | None = Query(None, pattern=RULE_LIST, description="Only these rules, "
                                      "comma-separated (" + ", ".join(RULES) + ")")
             ) -> dict[str, Any]:
        fresh()
        report = mg.as_identity(who).lint(judge).only(rule.split(",") if rule else ()).to_dict()
        return report | {"findings": report["findings"][:limit]}

    @route("get", "/calibrate", s.CalibrateOut, "The recency decay the usage log argues for: "
           "MRR@10 of the pages read after each logged query under each λ (writes nothing)",
           lane=lanes.slow)
    def calibrate(who: Caller) -> dict[str, Any]:
        fresh()
        return mg.as_identity(who).calibrate_recency().to_dict()

    @route("get", "/timeline", s.TimelineOut, "Dated notes mentioning a concept", 400,
           lane=lanes.slow)
    def timeline(who: Caller,
                 concept: str = Query(..., min_length=1, max_length=200, pattern=r"\w",
                                      description="A phrase or a page name (with a word in "
                                                  "it)"),
                 limit: int = Query(50, ge=1, le=1000), newest_first: bool = False,
                 since: Day | None = None, until: Day | None = None
                 ) -> dict[str, Any]:
        # reads raw/ and wiki/ from disk itself: no refresh needed
        return mg.as_identity(who).timeline(concept, since=since, until=until,
                                            newest_first=newest_first, limit=limit).to_dict()

    @route("get", "/coverage", s.CoverageOut, "How much of a codebase the wiki knows", 400, 404,
           lane=lanes.slow)
    def coverage(who: Caller, codebase: str = Query(..., min_length=1, max_length=1000,
                                       description="Folder inside the workspace"),
                 service_level: bool = False,
                 min_mentions: int = Query(1, ge=1, le=1000)) -> dict[str, Any]:
        fresh()
        folder = folder_inside(mg.settings.base_dir, codebase, _private(mg, who))
        return mg.as_identity(who).coverage(folder, service_level=service_level,
                                            min_mentions=min_mentions).to_dict()

    @route("post", "/validate", s.ValidateOut,
           "Judge a text against evidence texts (offline validator); reads and writes nothing",
           400, 408, 413, 415, dependencies=(Depends(_json_object_body),))
    def validate(body: s.ValidateIn) -> dict[str, Any]:
        return validate_text(body.text, body.evidence)

    @route("get", "/propagate/queue", s.PropagationQueueOut,
           "Fact-propagation plans awaiting approval (drafts of pages that state a changed "
           "fact), without their texts")
    def propagation_queue(who: Caller) -> dict[str, Any]:
        return {"plans": mg.as_identity(who).propagation.queue()}

    @route("post", "/propagate/apply", s.RunOut,
           "Apply a queued propagation plan when 'approve' is its digest (wiki/ only; a "
           "ledger run either way)", 400, 404, 408, 413, 415,
           dependencies=(Depends(_json_object_body),))
    def approve_propagation(who: Caller, body: s.ApproveIn) -> dict[str, Any]:
        service = mg.as_identity(who).propagation
        return service.apply(service.queued_plan(body.plan), body.approve).to_dict()

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
           413, 415, 502, lane=None, dependencies=(Depends(_json_object_body),))
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

    app.state.documents = DocumentService(mg)
    app.state.callers = Callers(mg.settings, token)
    add_document_routes(app, route, app.state.documents, lanes, app.state.callers.view,
                        _json_object_body)
    add_app_routes(app, route, mg.settings, lanes, app.state.callers.view, _json_object_body)
    install_dashboard(app, route, mg, fresh, lanes.slow, Caller)
    add_triage_routes(app, route, mg, fresh, Caller)
    app.add_middleware(ServerTiming)
    app.add_middleware(DashboardHeaders)
    app.add_middleware(OldParameterNames)
    app.add_middleware(Guard, policy=Policy.for_server(serve, host or serve.host,
                                                       (upload_rule(serve),)))
    app.add_middleware(AgentPaths, base=mg.settings.base_dir)     # outermost: errors too
    return app


async def _authorize(request: Request) -> Identity:
    """The caller's identity, from its bearer token alone (scopes/auth.py), never from a
    parameter; 401 without a valid token. async: a header check needs no threadpool trip."""
    try:
        return request.app.state.auth.identity_for(request.headers.get("authorization"))
    except Unauthenticated as exc:
        raise AppError(401, "Unauthorized", str(exc), {"WWW-Authenticate": "Bearer"}) from None


Caller = Annotated[Identity, Depends(_authorize)]


def _private(mg: Mindgraph, who: Identity) -> tuple[Path, ...]:
    """The folders whose file names an agent may not list (coverage of raw/ would name other
    scopes' notes): raw/, wiki/ and the state folder; none for the local identity."""
    s = mg.settings
    return () if who.is_local else (s.raw_dir, s.wiki_dir, s.state_dir)


async def _json_object_body(request: Request) -> None:
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
                         f"body: send a JSON object (e.g. {{\"embed\": false}}) or no body, not "
                         f"{type(value).__name__ if value is not None else 'null'}.")


def _first(*values: bool | None) -> bool:
    return next(v for v in values if v is not None)  # type: ignore[return-value]


def _reindex(mg: Mindgraph, fresh: Callable[[], None], *, embed: bool,
             dry_run: bool) -> dict[str, Any]:
    started = time.perf_counter()
    notes: list[str] = []
    ingest = None
    if mg.settings.raw_dir.is_dir():
        ingest = mg.ingest(dry_run=dry_run).to_dict()   # re-syncs the warm indexes itself
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


def _scan_wiki(mg: Mindgraph) -> Callable[[], None]:
    def scan() -> None:
        try:
            mg.settings.require_wiki()    # gone while serving: the watcher saw only deletions
            mg.sync()
        except NotFoundError as exc:      # the wiki folder is gone: the server, not the query
            raise AppError(503, "Unavailable", str(exc)) from exc
    return scan
