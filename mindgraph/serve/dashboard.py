"""The dashboard's routes: the page at ``GET /``, its static files, and the two read endpoints
only it needs (the graph with every page's facets, a page rendered as safe HTML).

The page and its files are public (they hold no data, and a browser cannot send a bearer
token when it opens a URL: serve/token_gate.py lists them in ``PUBLIC``); every data request the page makes goes through the same Guard and
token as the API. Every dashboard response carries a strict Content-Security-Policy: scripts
and styles from this server only, nothing inline, no frames, no form posts elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query
from pydantic import BaseModel, Field
from starlette.requests import Request
from starlette.responses import Response

from ..core import Mindgraph
from ..dashboard import assets
from ..dashboard.attachments import MEDIA_TYPES, missing_attachment
from ..dashboard.propagation import queue_view
from ..dashboard.views import graph_view, page_view
from ..errors import NotFoundError
from .attachment_tickets import opens_signed_file, raw_relative, ticket_query
from .lanes import Lane
from .mcp_results import no_pages_notes
from .timed_file import TimedFileResponse

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")
DASHBOARD_HEADERS = {"content-security-policy": CSP, "x-content-type-options": "nosniff",
                     "referrer-policy": "no-referrer", "x-frame-options": "DENY"}
# An attachment opened on its own (a link, "open image in new tab") is a document of the
# dashboard's origin, and an SVG can hold scripts: ``sandbox`` (no allow-scripts, no
# allow-same-origin) runs none and gives it an opaque origin. A pdf too: browsers' viewers
# refuse a sandboxed *frame* (Chromium's viewer is a plugin, which a sandboxed frame may not
# load, crbug 413851; Firefox's pdf.js falls back to its download bar), but the dashboard
# opens a pdf in a tab of its own, never a frame (``frame-ancestors 'none'``), and a sandboxed
# top-level pdf is drawn: by Chromium 156 (tests/dashboard/test_browser_notes.py) and by
# Firefox ESR 153's pdf.js (``firefox-esr --headless --screenshot``). It was served
# unsandboxed for that belief; now no attachment is a document of the dashboard's origin.
ATTACHMENT_CSP = CSP + "; sandbox"
# the headers of every attachment, whatever its type: the dashboard's, sandboxed
ATTACHMENT_HEADERS = {**DASHBOARD_HEADERS, "content-security-policy": ATTACHMENT_CSP,
                      "cache-control": "private, no-cache"}


class NodeOut(BaseModel):
    """A page as the graph and the list show it."""

    id: str
    doc: str = Field(description="Its id in the documents API (/documents, POST /links)")
    title: str
    type: str | None
    tags: list[str]
    scope: str | None
    community: int | None
    trust: int = Field(description="Verification level 0..3")
    date: str | None = Field(description="updated, date or created from the frontmatter")
    links: int = Field(description="Edges in and out (extracted and inferred)")
    backlinks: int
    summary: str


class EdgeOut(BaseModel):
    """One edge: extracted (a written link, relation = its kind) or inferred (shared tag)."""

    source: str
    target: str
    kind: str | None
    relation: str
    label: str


class CommunityBriefOut(BaseModel):
    """A community: id, the name of its central page, its size."""

    id: int
    name: str
    size: int


class GraphViewOut(BaseModel):
    """Everything the dashboard's list and graph draw."""

    nodes: list[NodeOut]
    edges: list[EdgeOut]
    communities: list[CommunityBriefOut]
    notes: list[str] = Field(default_factory=list,
                             description="Why the list is empty, when the wiki has no page "
                                         "(its notes never compiled: `mindgraph ingest`; "
                                         "or its raw folder holds no notes)")


class RenderedPageOut(BaseModel):
    """A page rendered as HTML (raw HTML in the note goes through an allow-list: the rest is
    escaped), with its community, trust record and compile information."""

    path: str
    title: str
    lang: str = Field(description="en, ja, zh, ko or other: the text's language")
    html: str
    community: CommunityBriefOut | None
    trust: dict[str, Any]
    compile: dict[str, Any]
    type: str | None
    scope: str | None


class PassageOut(BaseModel):
    """One passage a draft changes, against the page as it is now."""

    line: int = Field(description="Its first line in the page now (1-based)")
    before: list[str] = Field(description="The unchanged line(s) just before it")
    removed: list[str]
    added: list[str]
    after: list[str] = Field(description="The unchanged line(s) just after it")


class QueueTargetOut(BaseModel):
    """One page a queued plan would update, and why."""

    path: str
    how: str = Field(description="substituted, marked (a callout for a person) or rewritten")
    changed_page: str = Field(description="The page whose fact changed ('' for a correction)")
    old: str
    new: str
    unchanged_since_plan: bool = Field(description="False: the page changed since the plan "
                                                   "was made, and applying it is refused")
    passages: list[PassageOut]


class QueuePlanOut(BaseModel):
    """A queued plan, approved by its digest through POST /propagate/apply."""

    plan: str
    digest: str
    created: str
    drafter: str
    targets: list[QueueTargetOut]


class QueueViewOut(BaseModel):
    """The propagation plans awaiting approval, oldest first, with their passages."""

    plans: list[QueuePlanOut]


def install_dashboard(app: FastAPI, route: Callable[..., Any], mg: Mindgraph,
                      fresh: Callable[[], None], slow: Lane, caller: Any) -> None:
    """Add the dashboard to ``app``; ``route`` is the API's route maker (token, lanes, error
    documentation), ``fresh`` its refresh from the wiki, ``caller`` the API's dependency that
    gives a request's identity: each viewer sees its own view's pages only."""
    who_is = typing.get_args(caller)[1]    # the Depends(...) of the API's Caller
    files = assets.static_files()

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    async def dashboard_page() -> Response:
        return _asset(*files["index.html"])

    @app.api_route("/dashboard/static/{name:path}", methods=["GET", "HEAD"],
                   include_in_schema=False)
    async def dashboard_file(name: str) -> Response:
        found = files.get(name)
        if found is None:
            return Response(b"not a dashboard file\n", 404, media_type="text/plain",
                            headers=DASHBOARD_HEADERS)
        return _asset(*found)

    @route("get", "/dashboard/graph", GraphViewOut,
           "The dashboard's graph: pages with type, tags, scope, community, trust, link "
           "counts and summary; edges with kind and relation", lane=slow)
    def dashboard_graph(who: Any = who_is) -> dict[str, Any]:
        fresh()
        core = mg.as_identity(who)
        vault = core.vault()
        view = graph_view(vault, core.graph(), core.communities(), core.trust_of(vault.pages),
                          _scope_kind(mg) if mg.scopes.enabled else None)
        # "0 of 0 pages" alone read as a broken dashboard: the search box's note, said here
        return {**view, "notes": no_pages_notes(core, list(vault.pages))}

    @route("get", "/dashboard/page", RenderedPageOut,
           "A page rendered as safe HTML for the dashboard, with community, trust and compile "
           "info", 404, lane=slow)
    def dashboard_rendered(request: Request, response: Response, who: Any = who_is,
                           page: str = Query(..., min_length=1, max_length=1000,
                                             description="Path, title, alias or file name")
                           ) -> Any:
        fresh()
        core = mg.as_identity(who)
        found = core.page(page)
        # each attachment is named by its route URL, signed with the caller's token when
        # one is needed: the browser opens it (sandboxed), with no token to send
        authorization = request.headers.get("authorization")
        view = page_view(core.vault(), found, core.communities(),
                         core.trust_of([found.path]).get(found.path, {}),
                         core.attachment_finder(),
                         _signer(request.app.state.auth, authorization, core,
                                 mg.settings.raw_dir))
        # the same page renders the same JSON while its tickets' bucket lasts: the browser
        # asks again with the tag (If-None-Match) and keeps what it has on a 304
        tag = _etag(view)
        headers = {"etag": tag, "cache-control": "private, no-cache"}
        if tag in _tags(request.headers.get("if-none-match", "")):
            return Response(status_code=304, headers=headers)
        response.headers.update(headers)
        return view

    @route("get", "/dashboard/attachment", None,
           "An image, pdf, audio or video file in raw/ that a page embeds (as the vault "
           "resolves the embed; nothing outside raw/); Range requests are answered (206), and "
           "the bytes must be sent within serve.attachment_timeout_s", 404, lane=slow,
           response_class=Response, files=tuple(sorted(set(MEDIA_TYPES.values()))))
    def dashboard_attachment(who: Any = who_is,
                             target: str = Query(..., min_length=1, max_length=1000,
                                                 description="The embed's target"),
                             page: str = Query("", max_length=1000,
                                               description="The embedding page"),
                             expires: int | None = Query(
                                 None, description="With ticket: when it expires (Unix time)"),
                             file: str | None = Query(
                                 None, max_length=1000,
                                 description="With ticket: the file (from raw/) it was "
                                             "signed for, the only one it opens"),
                             ticket: str | None = Query(
                                 None, max_length=128,
                                 description="Stands for the bearer token an <img> or a link "
                                             "cannot send: signed with it for this target, "
                                             "page, file and expiry (the URLs of GET "
                                             "/dashboard/page carry one)")
                             ) -> Response:
        del expires                         # the token gate's (serve/attachment_tickets.py)
        fresh()
        path, media_type = mg.as_identity(who).attachment(target, page)
        if not opens_signed_file(path, mg.settings.raw_dir, ticket, file):
            # the embed finds another file now (the signed one moved): not the ticket's, and
            # said in the words of a file found nowhere (that one is not the holder's to know)
            raise NotFoundError(missing_attachment(target, page))
        # streamed after the handler's budget, within its own (serve/timed_file.py)
        return TimedFileResponse(path, media_type=media_type,
                                 timeout_s=mg.settings.serve.attachment_timeout_s,
                                 headers=ATTACHMENT_HEADERS)

    _queue_route(route, mg, slow, who_is)


def _queue_route(route: Callable[..., Any], mg: Mindgraph, slow: Lane, who_is: Any) -> None:
    @route("get", "/dashboard/propagation", QueueViewOut,
           "The propagation queue with each draft's changed passages (approve a plan with POST "
           "/propagate/apply)", 403, lane=slow)
    def dashboard_propagation(who: Any = who_is) -> dict[str, Any]:
        return queue_view(mg.as_identity(who).propagation.pending(), mg.settings.wiki_dir)


def _signer(auth: Any, authorization: str | None, core: Any,
            raw_dir: Path) -> Callable[[str, str], str] | None:
    """What the route URL of an attachment embed adds for this viewer, from (target, page):
    a ticket for the file the embed finds now (serve/attachment_tickets.py), "" when it finds
    none (the index said there was one: gone since); None when the server needs no token."""
    if not auth.required:
        return None
    locate = core.attachment_locator()      # the view's files read once for the whole page
    signed_for: dict[tuple[str, str], str] = {}     # an embed repeated is signed once

    def signed(target: str, source: str) -> str:
        if (target, source) not in signed_for:
            path = locate(target, source)
            signed_for[target, source] = "" if path is None else ticket_query(
                auth, authorization, target, source, raw_relative(path, raw_dir))
        return signed_for[target, source]

    return signed


def _etag(view: dict[str, Any]) -> str:
    """A weak entity tag of a rendered page: the same for the same JSON."""
    text = json.dumps(view, sort_keys=True, ensure_ascii=False, default=str)
    return 'W/"' + hashlib.sha256(text.encode()).hexdigest()[:32] + '"'


def _tags(if_none_match: str) -> set[str]:
    """The tags an If-None-Match header names, each as a weak tag (a GET compares weakly)."""
    return {tag if tag.startswith("W/") else "W/" + tag
            for tag in (part.strip() for part in if_none_match.split(",")) if tag}


def _scope_kind(mg: Mindgraph) -> Callable[[Any], str | None]:
    """A page's scope kind (personal, team, shared) from the folder mapping."""
    def kind(page: Any) -> str | None:
        found = mg.scopes.mapping.page_scope(page.path, page.frontmatter)
        return found.kind if found is not None else None
    return kind


def _asset(body: bytes, media_type: str) -> Response:
    return Response(body, media_type=media_type,
                    headers={**DASHBOARD_HEADERS, "cache-control": "no-cache"})


class DashboardHeaders:
    """Adds the dashboard's security headers to the JSON answers of ``/dashboard/*`` too."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if not path.startswith("/dashboard/"):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", ())}
                extra = [(k.encode(), v.encode()) for k, v in DASHBOARD_HEADERS.items()
                         if k.encode() not in have]
                message = {**message, "headers": [*message.get("headers", ()), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


__all__ = ["CSP", "DashboardHeaders", "install_dashboard"]
