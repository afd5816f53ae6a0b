"""The MCP server: the wiki as tools an agent calls, over stdio or streamable HTTP.

Every tool is a thin wrapper over one ``Mindgraph`` method. The SDK turns the type hints into
each tool's input schema (bounded integers, bounded strings, enums), so bad arguments are
refused before any work is done. A tool returns a compact JSON object that cites page paths
and section ids, which are the arguments of the other tools, so an agent can always fetch
more. A ``MindgraphError`` (unknown page, missing section, bad data block) becomes a tool error
(``isError``) carrying its helpful message; every call, failed or not, writes one usage-log
line with interface "mcp". Tool bodies run on lanes (serve/lanes.py) within
``serve.request_timeout_s``, slow ones (timeline, coverage, communities, path) on their own.
Over HTTP, a tool's LLM calls and the documents it creates are charged to the caller's
quotas (mindgraph/quotas/; a used-up one is a tool error naming the setting).

Over HTTP the app is guarded like the REST API: when a token or identities are configured,
every request needs ``Authorization: Bearer <token>`` (see ``BearerAuth``), and each tool
answers from that token's identity's view (``Mindgraph.as_identity``); over stdio the tools act
as the configured local identity. The CLI refuses to bind a non-loopback address without a
token.
"""

import functools
import json
import logging
import os
import time
from collections.abc import Awaitable
from typing import Annotated, Any, Callable, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent
from pydantic import Field
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..config import ServeSettings
from ..core import Mindgraph
from ..errors import (ConfigError, MindgraphError, Unauthenticated, for_agents,
                      note_details, said_in_log)
from ..graph.communities import MIN_COMMUNITY_SIZE
from ..lint.findings import RULES
from ..quotas import charged_to
from ..scopes import LOCAL, Authenticator, Identity, Scopes
from ..scopes.auth import usage_identity
from ..trust.answer import TrustCriteria, context_answer, hybrid_answer, keyword_answer
from ..trust.validate import ValidateLimits, validate_text
from ..version import __version__
from .agent_paths import workspace_paths
from .guard import Guard, Policy, is_loopback, refuse_websocket
from .lanes import Lane, LaneBusy, LaneTimeout, ServerLanes
from .callers import Callers
from .mcp_arguments import PlainArgumentsServer
from .mcp_apps import add_app_tools
from .mcp_documents import add_document_tools
from .mcp_initialize import HttpInitializeFirst
from .mcp_pages import add_page_tools
from .mcp_sessions import SessionOwners
from .mcp_triage import add_triage_tools
from .mcp_types import APPROVED_WRITE, READ_ONLY, DateText, JsonResult, PageName
from .params import folder_inside, parse_day
from .schemas import SyncStatusOut
from .token_gate import refused
from .mcp_results import (
    brief_hybrid,
    brief_keyword,
    cited_paths,
    communities_result,
    hybrid_no_pages,
    jsonable,
    no_pages_notes,
    result_count,
    timeline_result,
    usage_kind,
)

Verbose = Annotated[bool, Field(description="Also each hit's score breakdown, matched terms "
                                            "and timings (for debugging a ranking)")]

MinTrust = Annotated[str | None, Field(description=(
    "Only pages verified to at least this level: L0..L3 (L2: claims checked against the "
    "evidence); what is left out is said in degradation"))]
Fresh = Annotated[bool, Field(description="Only pages whose verification is current")]
LintRule = Literal[RULES]       # type: ignore[valid-type]

INSTRUCTIONS = """\
mindgraph: a private wiki compiled from markdown notes. Pages are addressed by their
vault path (e.g. "Plugins/Templates.md"); a title, alias or file name also works. Sections
are addressed by id (from get_page or list_sections). Typical use: find documents with
search_documents (or search / smart_search), read one with get_page, read a long page
section by section with get_section, follow backlinks/related pages, and use timeline to see
how a concept evolved; create_document and link_documents add to the wiki. Results cite
page paths and section ids: pass them back to these tools."""

_LOG = logging.getLogger("mindgraph.serve")


def create_mcp_server(mg: Mindgraph,
                      sync_status: Callable[[], dict[str, Any]] | None = None) -> MCPServer:
    """Build the MCP server over one warm ``Mindgraph`` (tools only; no transport yet);
    ``sync_status`` is the watcher's status (`mcp --watch`) for the sync_status tool."""
    server = PlainArgumentsServer("mindgraph", title="mindgraph", version=__version__,
                       instructions=INSTRUCTIONS, log_level="WARNING")

    lanes = ServerLanes(mg.settings.serve)

    async def call(ctx: Context, tool: str, query: str, run: Callable[[Mindgraph], dict[str, Any]],
                   slow: bool = False) -> CallToolResult:
        who = caller(mg, ctx)
        core = mg.as_identity(who)
        quotas = mg.quotas if _over_http(ctx) else None     # stdio: the owner's own client

        def charged() -> dict[str, Any]:
            if quotas is None:
                return run(core)
            with charged_to(quotas, who):      # its LLM calls and documents (quotas/)
                return run(core)
        return await _in_lane(mg, lanes.slow if slow else lanes.core, tool, query,
                              charged, usage_identity(mg.scopes, who), who.name)

    @server.tool(annotations=READ_ONLY)
    async def timeline(ctx: Context,
                       concept: Annotated[str, Field(min_length=1, max_length=200, pattern=r"\w",
                                                     description="A phrase or a page name")],
                       limit: Annotated[int, Field(ge=1, le=200)] = 20,
                       newest_first: bool = False,
                       since: DateText = None, until: DateText = None) -> JsonResult:
        """How a concept evolved: dated notes (raw and wiki) that mention it, in date order,
        each with a snippet and the page path to read more."""
        return await call(ctx, "timeline", concept, lambda m: timeline_result(
            m.timeline(concept, since=parse_day(since), until=parse_day(until),
                        newest_first=newest_first, limit=limit)), slow=True)

    @server.tool(annotations=READ_ONLY)
    async def coverage(ctx: Context, codebase: Annotated[str, Field(min_length=1, max_length=1000,
                                                description="A folder inside the workspace")],
                 service_level: bool = False,
                 min_mentions: Annotated[int, Field(ge=1, le=1000)] = 1,
                 limit: Annotated[int, Field(ge=0, le=1000, description="At most this many "
                                             "uncovered units listed")] = 50) -> JsonResult:
        """How much of a codebase the wiki documents: totals, and the modules (or services)
        no page mentions yet."""
        who = caller(mg, ctx)
        private = () if who.is_local else (mg.settings.raw_dir, mg.settings.wiki_dir,
                                           mg.settings.state_dir)

        def run(m: Mindgraph) -> dict[str, Any]:
            folder = folder_inside(m.settings.base_dir, codebase, private)
            report = m.coverage(folder, service_level=service_level,
                                 min_mentions=min_mentions).to_dict()
            uncovered = [u["unit"] for u in report["units"] if not u["covered"]]
            return {key: report[key] for key in ("codebase", "level", "total", "covered",
                                                 "percent")} | {
                "uncovered": uncovered[:limit], "uncovered_total": len(uncovered)}
        return await call(ctx, "coverage", codebase, run, slow=True)

    watcher_status = sync_status

    @server.tool(annotations=READ_ONLY)
    async def sync_status(ctx: Context) -> JsonResult:
        """What the watcher (`mindgraph mcp --watch`) has pending or running, and its last
        run: what changed, what was compiled, re-indexed and embedded, how long it took.
        state "off" when this server does not watch (then run `mindgraph ingest`)."""
        who = caller(mg, ctx)
        if not who.is_local:       # it names the changed files of every tenant
            raise ToolError(f"{who.name} may not read the watcher's status: it names the "
                            f"changed files of the whole workspace, so only the local "
                            f"identity may.")
        # not on a lane: it answers while a run holds the core
        # off: the same answer, every field, as GET /sync/status's
        return _call(mg, "sync_status", "", lambda: watcher_status() if watcher_status
                     else SyncStatusOut().model_dump(), usage_identity(mg.scopes, who))

    add_page_tools(server, call)
    _add_engine_tools(server, call, mg.settings.serve)
    callers = Callers(mg.settings, os.environ.get(mg.settings.serve.token_env) or None)
    add_document_tools(server, mg, call, callers)
    add_app_tools(server, mg, call, callers)
    add_triage_tools(server, call)
    return server


def _add_engine_tools(server: MCPServer, call: Callable[..., Awaitable[CallToolResult]],
                      serve: ServeSettings) -> None:
    """Search, graph, stats and context tools (``serve``: the validate tool's limits)."""
    Limit = Annotated[int, Field(ge=1, le=100, description="At most this many results")]
    Query = Annotated[str, Field(min_length=1, max_length=1000,
                                 description="What you are looking for, in words")]

    @server.tool(annotations=READ_ONLY)
    async def search(ctx: Context, query: Query, limit: Limit = 10, verbose: Verbose = False,
                     min_trust: MinTrust = None, fresh: Fresh = False) -> JsonResult:
        """Keyword (BM25) search over the wiki: best first, each hit citing its page path
        and best section id (read it with get_section), and the page's trust level. Good
        for names and exact terms."""
        return await call(ctx, "search", query, lambda m: brief_keyword(
            _keyword(m, query, limit, TrustCriteria.parse(min_trust, fresh), verbose), verbose))

    @server.tool(annotations=READ_ONLY)
    async def smart_search(ctx: Context, query: Query, limit: Limit = 10, verbose: Verbose = False,
                           min_trust: MinTrust = None, fresh: Fresh = False) -> JsonResult:
        """Hybrid search (keywords + meaning, fused): best first, each hit citing its page
        path and section id, and the page's trust level. Good for questions and
        paraphrases."""
        return await call(ctx, "smart_search", query, lambda m: brief_hybrid(hybrid_no_pages(
            m, hybrid_answer(m, query, limit, TrustCriteria.parse(min_trust, fresh))), verbose))

    @server.tool(annotations=READ_ONLY)
    async def related(ctx: Context, page: PageName,
                depth: Annotated[int, Field(ge=1, le=3, description="Link hops")] = 1
                ) -> JsonResult:
        """Pages connected to a page in the link graph, up to depth hops away."""
        return await call(ctx, "related", page,
                          lambda m: _listing("related", m.related(page, depth)))

    @server.tool(annotations=READ_ONLY)
    async def communities(ctx: Context, limit: Annotated[int, Field(ge=1, le=500, description=(
                        "How many clusters, largest first"))] = 20,
                    members: Annotated[int, Field(ge=1, le=1000, description=(
                        "Pages listed per cluster, most central first"))] = 20,
                    min_size: Annotated[int, Field(ge=1, description=(
                        "Leave out smaller clusters (a page with no links is a cluster of "
                        "one)"))] = MIN_COMMUNITY_SIZE) -> JsonResult:
        """Clusters of closely linked pages (topics of the wiki), largest first, each with its
        most central pages."""
        return await call(ctx, "communities", "", lambda m: communities_result(
            m.communities(min_size), limit, members), slow=True)

    @server.tool(annotations=READ_ONLY)
    async def path(ctx: Context, source: PageName, target: PageName,
                   via_tags: Annotated[bool, Field(
                       description="Also step between pages that share a tag (default: real "
                                   "links only)")] = False) -> JsonResult:
        """The shortest chain of links between two pages, followed either way: each step
        says which page links which (direction out, in, both, or tag with via_tags)."""
        return await call(ctx, "path", f"{source} -> {target}",
                          lambda m: m.path_with_steps(source, target, via_tags), slow=True)

    @server.tool(annotations=READ_ONLY)
    async def stats(ctx: Context) -> JsonResult:
        """Size of the wiki and its indexes: pages, sections, links, graph, search index."""
        return await call(ctx, "stats", "", lambda m: _listing("stats", m.stats()))

    @server.tool(annotations=READ_ONLY)
    async def lint(ctx: Context,
                   judge: Annotated[Literal["offline", "llm", "auto"], Field(description=(
                       "Who decides which similar statements contradict: the offline rules, "
                       "the configured LLM, or the LLM when one is configured"))] = "offline",
                   limit: Annotated[int, Field(ge=1, le=1000, description=(
                       "At most this many findings (counts cover all)"))] = 50,
                   rules: Annotated[list[LintRule], Field(max_length=len(RULES), description=(
                       "Only these rules (default: all but unresolved-link, links to no page: "
                       "Obsidian's placeholders)"))] = []) -> JsonResult:
        """What a careful editor would flag in the wiki: pages without a real summary,
        references that point nowhere, facts two pages state differently, features one page
        calls deprecated while others describe them as current, near-duplicate pages. Each
        finding names the page, section, line and the fix. Read-only."""
        def run(m: Mindgraph) -> dict[str, Any]:
            report = m.lint(judge, rules).to_dict()     # runs only the rules asked for
            return report | {"findings": report["findings"][:limit]}
        return await call(ctx, "lint", judge, run, slow=True)

    @server.tool(annotations=READ_ONLY)
    async def calibrate(ctx: Context) -> JsonResult:
        """The recency decay λ (and evergreen pages) that would have ranked the pages read
        after each logged query highest, with MRR@10 for each λ tried. Writes nothing:
        a person applies it with `mindgraph calibrate --write`."""
        return await call(ctx, "calibrate", "", lambda m: m.calibrate_recency().to_dict(),
                          slow=True)

    @server.tool(annotations=READ_ONLY)
    async def propagation_queue(ctx: Context) -> JsonResult:
        """Fact-propagation plans awaiting approval: for each, its name, digest and the pages
        it would update (how, and the old and new statement)."""
        return await call(ctx, "propagation_queue", "",
                          lambda m: {"plans": m.propagation.queue()})

    @server.tool(annotations=APPROVED_WRITE)
    async def approve_propagation(
            ctx: Context,
            plan: Annotated[str, Field(pattern=r"^[0-9a-f]{16}(\.json)?$",
                                       description="The plan's name in the queue")],
            approve: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$",
                                          description="The plan's digest")]) -> JsonResult:
        """Apply a queued propagation plan when ``approve`` is its digest: writes the drafted
        pages (wiki/ only) and records a ledger run. Refused, writing nothing, when the
        digest differs or a page changed since planning."""
        def run(m: Mindgraph) -> dict[str, Any]:
            service = m.propagation
            return service.apply(service.queued_plan(plan), approve).to_dict()
        return await call(ctx, "approve_propagation", plan, run)

    @server.tool(annotations=READ_ONLY)
    async def validate(ctx: Context, text: Annotated[str, Field(min_length=1, max_length=200_000,
                                            description="Markdown whose claims to check")],
                 evidence: Annotated[list[str], Field(max_length=20, description=(
                     "Evidence texts to check the claims against"))]) -> JsonResult:
        """Judge a text against evidence texts with the offline validator: per claim
        supported / unsupported / contradicted with the quote, and a verdict (pass only when
        every claim is supported). Reads and writes nothing."""
        limits = ValidateLimits(serve.validate_max_claims, serve.validate_max_evidence_sentences,
                                time.monotonic() + serve.request_timeout_s)
        return await call(ctx, "validate", "(validate)",
                          lambda m: validate_text(text, evidence, limits), slow=True)

    @server.tool(annotations=READ_ONLY)
    async def context(ctx: Context, situation: Annotated[str, Field(min_length=1, max_length=4000,
                                                description="What you are doing right now")],
                limit: Annotated[int, Field(ge=1, le=20, description="How many notes")] = 3,
                min_trust: MinTrust = None, fresh: Fresh = False) -> JsonResult:
        """The notes most relevant to your current situation, as a compact markdown block
        with page addresses and each page's trust. Returns an empty block (never an error
        but your used-up LLM quota) on failure; on timeout, the keyword matches alone
        (status "timeout") or nothing."""
        return await call(ctx, "context", situation, lambda m: context_answer(
            m, situation, limit, TrustCriteria.parse(min_trust, fresh)))


def _keyword(mg: Mindgraph, query: str, limit: int, trust: TrustCriteria,
             why: bool = True) -> dict[str, Any]:
    """Keyword results with their trust (and what a trust filter left out, when it did);
    ``why=False``: without the field-by-field why, which ``brief_keyword`` drops unless
    verbose (not computed: a fifth of the call)."""
    results, notes = keyword_answer(mg, query, limit, trust, why)
    notes = [*notes, *no_pages_notes(mg, results)]
    data = _listing("results", results)
    return {**data, "degradation": notes} if notes else data


def _listing(key: str, value: Any) -> dict[str, Any]:
    """A core result as a JSON object (objects stay as they are; lists go under ``key``)."""
    data = jsonable(value, digits=4)
    return data if isinstance(data, dict) else {key: data}


async def _in_lane(mg: Mindgraph, lane: Lane, tool: str, query: str,
                   run: Callable[[], dict[str, Any]], who: dict[str, str],
                   caller: str = "") -> CallToolResult:
    """Run one tool body on ``lane`` as a call of ``caller`` (the identity's name: the lane
    takes callers in turn) within ``serve.request_timeout_s``; a full lane or a call past its
    budget is a tool error that says so (and a usage-log line, naming ``who``)."""
    started = time.perf_counter()
    try:
        return await lane.run(functools.partial(_call, mg, tool, query, run, who),
                              mg.settings.serve.request_timeout_s, "serve.request_timeout_s",
                              who=caller)
    except (LaneBusy, LaneTimeout) as exc:
        mg.usage_log.record("mcp", query, intent=tool, kind=usage_kind(tool),
                            latency_ms=(time.perf_counter() - started) * 1e3,
                            error=type(exc).__name__, **who)
        raise ToolError(workspace_paths(mg.settings.base_dir).text(str(exc))) from None


def _call(mg: Mindgraph, tool: str, query: str, run: Callable[[], dict[str, Any]],
          who: dict[str, str]) -> CallToolResult:
    """Run one tool body: time it, log it, and turn domain errors into tool errors; what it
    returns names workspace-relative paths only (serve/agent_paths.py)."""
    started = time.perf_counter()
    paths = workspace_paths(mg.settings.base_dir)
    try:
        mg.settings.require_wiki()      # a wiki deleted under the server: say so, not 0 pages
        data = run()
    except Exception as exc:
        mg.usage_log.record("mcp", query, intent=tool, kind=usage_kind(tool),
                            latency_ms=(time.perf_counter() - started) * 1e3,
                            error=type(exc).__name__, **who)
        if said_in_log(exc) and isinstance(exc, MindgraphError):  # a provider's or app's
            _LOG.warning("tool %s: %s: %s", tool, type(exc).__name__, exc)  # words: the log
        if isinstance(exc, MindgraphError):
            # ToolError keeps the message (the fix) for the agent; other exceptions are bugs
            # whose text stays in the server log (the SDK says only that the tool failed).
            raise ToolError(paths.text(for_agents(exc))) from exc
        raise
    for detail in note_details(data.get("degradation") or ()) if isinstance(data, dict) else ():
        _LOG.warning("tool %s: %s", tool, detail)
    text = _json(data)
    if paths.named_in(text):      # rewriting every string of every result costs a tenth
        data = paths.value(data)  # of a search: only when an absolute path is there
        text = _json(data)
    cited = cited_paths(data)
    mg.usage_log.record("mcp", query, intent=tool, kind=usage_kind(tool), results=cited,
                        result_count=result_count(tool, data),
                        latency_ms=(time.perf_counter() - started) * 1e3, **who)
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=json.loads(text))


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


IDENTITY_KEY = "mindgraph_identity"


def _request_of(ctx: Context | None) -> Any:
    """The HTTP request of a tool call; None over stdio or outside a request."""
    try:
        return ctx.request_context.request      # type: ignore[union-attr]
    except (AttributeError, ValueError):     # called outside a request (tests, in-process)
        return None


def _over_http(ctx: Context | None) -> bool:
    """Did this tool call come over HTTP (a token's identity, charged for what it spends)?"""
    return _request_of(ctx) is not None


def caller(mg: Mindgraph, ctx: Context) -> Identity:
    """Who calls a tool: over HTTP, the identity ``BearerAuth`` took from the request's token;
    over stdio (no request), the configured local identity (``scopes.local``)."""
    request = _request_of(ctx)
    if request is None:
        return mg.scopes.local
    found = getattr(request, "scope", {}).get("state", {}).get(IDENTITY_KEY)
    if isinstance(found, Identity):
        return found
    if mg.scopes.enabled:       # an HTTP app built without its identities: refuse, never guess
        raise ToolError("This server has identities configured but did not authenticate the "
                        "request; build the HTTP app with create_http_app(..., scopes=).")
    return LOCAL


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` naming an
    identity (else 401); the identity goes with the request (``caller``)."""

    def __init__(self, app: ASGIApp, auth: Authenticator):
        self.app = app
        self._auth = auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Lifespan events carry no headers and must reach the app (it starts the sessions).
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        given = [v for k, v in scope.get("headers", ()) if k == b"authorization"]
        try:
            if len(given) > 1:      # as the REST gate: which one counts is not ours to guess
                raise Unauthenticated("Send one Authorization header, not several.")
            identity = self._auth.identity_for(given[0] if given else None)
        except Unauthenticated as exc:
            if scope["type"] != "http":     # a WebSocket: closed before its accept
                await refuse_websocket(send, f"Unauthorized: {exc}")
                return
            response = JSONResponse({"error": "Unauthorized", "detail": str(exc)},
                                    status_code=401, headers={"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})[IDENTITY_KEY] = identity
        await self.app(scope, receive, send)


def create_http_app(server: MCPServer, token: str | None = None, host: str = "127.0.0.1",
                    serve: ServeSettings | None = None, scopes: Scopes | None = None
                    ) -> ASGIApp:
    """The streamable HTTP app (endpoint /mcp) for a server bound to ``host``: behind
    ``Guard`` (Host, Origin, body and CORS rules, the same as the REST API's; it replaces the
    SDK's own check, which covers 127.0.0.1 but not 127.0.0.2) and ``BearerAuth`` when
    ``token`` is set or ``scopes`` has identities (each request then acts as its token's
    identity). Sessions are bounded: ``serve.mcp_max_sessions`` open at once, each dropped
    after ``serve.mcp_session_idle_s`` without a request; with a token, each belongs to the
    identity that opened it, which holds at most ``serve.mcp_max_sessions_per_identity``
    (``SessionOwners``, serve/mcp_sessions.py)."""
    serve = serve or ServeSettings()
    app = server.streamable_http_app(
        host=host, max_request_body_size=serve.max_body_bytes,
        max_sessions=serve.mcp_max_sessions, session_idle_timeout=serve.mcp_session_idle_s,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    app = HttpInitializeFirst(app)      # a request outside a session: "send initialize"
    auth = Authenticator(scopes or Scopes(),
                         (serve.token_env, token) if token else None,
                         token_env=serve.token_env)
    if not is_loopback(host) and not auth.required:     # it would answer anyone
        raise ConfigError(f"An MCP server on {host} needs a bearer token: set "
                          f"{serve.token_env} (or configure scopes.identities), or bind "
                          f"127.0.0.1.")
    if auth.required:
        app = BearerAuth(SessionOwners(app, serve.mcp_max_sessions_per_identity,
                                       _identity_name), auth)
    return Guard(app, Policy.for_server(serve, host),
                 unauthorized=functools.partial(refused, auth) if auth.required else None)


def _identity_name(scope: Scope) -> str:
    """The name of the identity ``BearerAuth`` put in the scope."""
    return scope["state"][IDENTITY_KEY].name


__all__ = ["BearerAuth", "create_http_app", "create_mcp_server"]
