"""The REST API: a FastAPI app over one warm ``Mindgraph``.

Safe by default: the CLI binds 127.0.0.1; any other address requires a bearer token read from
the environment variable named by ``serve.token_env``. Errors are JSON with a real status (one
handler maps the error tree: NotFoundError → 404, ConfigError → 400, other errors → 422/500);
every limit is bounded by the schema, so bad parameters are 422 before any work is done.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import asdict
from typing import Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse

from ..core import Mindgraph
from ..errors import ConfigError, MindgraphError, NotFoundError, StoreError
from ..page.data import DataBlockError
from ..version import __version__
from .params import folder_inside, parse_day

MAX_LIMIT = 100


def create_app(mg: Mindgraph, token: str | None = None) -> FastAPI:
    """Build the app. With ``token`` set, every route but /health needs ``Bearer <token>``."""
    app = FastAPI(title="mindgraph", version=__version__,
                  description="Query a compiled markdown wiki: pages, sections, links, "
                              "graph, search, timeline and coverage.")
    app.state.mg = mg

    def authorize(request: Request) -> None:
        if token is None:
            return
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), token):
            raise _Unauthorized()

    guard = [Depends(authorize)]

    @app.exception_handler(MindgraphError)
    async def domain_error(request: Request, exc: MindgraphError) -> JSONResponse:
        return JSONResponse({"error": type(exc).__name__, "detail": str(exc)},
                            status_code=_status(exc))

    @app.exception_handler(_Unauthorized)
    async def unauthorized(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"error": "Unauthorized",
                             "detail": "Send 'Authorization: Bearer <token>' with the token "
                                       "from the server's token environment variable."},
                            status_code=401, headers={"WWW-Authenticate": "Bearer"})

    @app.get("/health", summary="Liveness and basic counts")
    def health() -> dict[str, Any]:
        return {"status": "ok", "version": __version__,
                "pages": len(mg.vault().pages)}

    @app.get("/stats", dependencies=guard, summary="Pages, sections, links, tags, raw states")
    def stats() -> dict[str, Any]:
        return mg.stats()

    @app.get("/page", dependencies=guard, summary="A page with its sections, links, backlinks")
    def page(name: str = Query(..., min_length=1, max_length=1000,
                               description="Path, title, alias or file name")) -> dict[str, Any]:
        found = mg.page(name)
        links = mg.links(found.path)
        return {"path": found.path, "title": found.title, "aliases": list(found.aliases),
                "tags": list(found.tags), "url": mg.url(found.path),
                "frontmatter": dict(found.frontmatter),
                "sections": [{"id": s.id, "heading": s.heading, "level": s.level,
                              "path": list(s.path), "lines": [s.start_line, s.end_line]}
                             for s in found.sections],
                "outgoing": links["outgoing"], "backlinks": links["backlinks"]}

    @app.get("/section", dependencies=guard, summary="One section of a page")
    def section(page: str = Query(..., min_length=1, max_length=1000),
                id: str = Query(..., min_length=1, max_length=1000)) -> dict[str, Any]:
        found, sec = mg.section(page, id)
        return {"page": found.path, "id": sec.id, "heading": sec.heading,
                "path": list(sec.path), "text": sec.text,
                "lines": [sec.start_line, sec.end_line]}

    @app.get("/extract", dependencies=guard, summary="A page's fenced json/yaml data block")
    def extract(page: str = Query(..., min_length=1, max_length=1000),
                block: int = Query(1, ge=1, le=1000)) -> dict[str, Any]:
        return {"page": mg.page(page).path, "block": block, "data": mg.extract(page, block)}

    @app.get("/search", dependencies=guard, summary="Keyword (BM25) search")
    def search(q: str = Query(..., min_length=1, max_length=1000, description="The query"),
               limit: int = Query(10, ge=1, le=MAX_LIMIT)) -> dict[str, Any]:
        started = time.perf_counter()
        results = [r.to_dict() for r in mg.search(q, limit)]
        latency = (time.perf_counter() - started) * 1e3
        mg.usage_log.record("rest", q, intent="keyword", results=[r["page"] for r in results],
                            result_count=len(results), latency_ms=latency)
        return {"query": q, "retriever": "keyword", "count": len(results), "results": results,
                "latency_ms": round(latency, 2)}

    @app.get("/smart_search", dependencies=guard,
             summary="Hybrid search: intent, keyword + vector fusion, graph boost, explained")
    def smart_search(q: str = Query(..., min_length=1, max_length=1000),
                     limit: int = Query(10, ge=1, le=MAX_LIMIT)) -> dict[str, Any]:
        started = time.perf_counter()
        response = mg.smart_search(q, limit)
        mg.usage_log.record("rest", q, intent=response.intent.name,
                            results=[r.page for r in response.results],
                            result_count=len(response.results),
                            latency_ms=(time.perf_counter() - started) * 1e3)
        return response.to_dict()

    @app.get("/context", dependencies=guard,
             summary="Top knowledge for a situation as markdown (empty on timeout or error)")
    def context(situation: str = Query(..., min_length=1, max_length=4000),
                limit: int = Query(3, ge=1, le=20)) -> dict[str, Any]:
        started = time.perf_counter()
        block = mg.context(situation, limit=limit)
        mg.usage_log.record("rest", situation, intent="context", results=block.sources,
                            result_count=len(block.sources),
                            latency_ms=(time.perf_counter() - started) * 1e3,
                            status=block.status)
        return block.to_dict()

    @app.get("/related", dependencies=guard, summary="Pages within N links of a page")
    def related(page: str = Query(..., min_length=1, max_length=1000),
                depth: int = Query(1, ge=1, le=5),
                links_only: bool = False) -> dict[str, Any]:
        found = mg.page(page)
        return {"page": found.path, "depth": depth,
                "related": [asdict(n) for n in mg.related(found.path, depth,
                                                          links_only=links_only)]}

    @app.get("/path", dependencies=guard, summary="Shortest chain of pages between two pages")
    def path(source: str = Query(..., min_length=1, max_length=1000),
             target: str = Query(..., min_length=1, max_length=1000)) -> dict[str, Any]:
        return {"path": mg.path(source, target)}

    @app.get("/communities", dependencies=guard, summary="Louvain communities of the graph")
    def communities(limit: int = Query(50, ge=1, le=1000)) -> dict[str, Any]:
        found = mg.communities()
        return {"count": len(found), "communities": [asdict(c) for c in found[:limit]]}

    @app.get("/check", dependencies=guard, summary="Broken links, orphans, duplicates")
    def check() -> dict[str, Any]:
        return mg.check().to_dict()

    @app.get("/timeline", dependencies=guard, summary="Dated notes mentioning a concept")
    def timeline(concept: str = Query(..., min_length=1, max_length=200),
                 limit: int = Query(50, ge=1, le=1000), newest_first: bool = False,
                 since: str | None = Query(None, pattern=r"^\d{4}-\d{2}-\d{2}$"),
                 until: str | None = Query(None, pattern=r"^\d{4}-\d{2}-\d{2}$")
                 ) -> dict[str, Any]:
        return mg.timeline(concept, since=parse_day(since), until=parse_day(until),
                           newest_first=newest_first, limit=limit).to_dict()

    @app.get("/coverage", dependencies=guard, summary="How much of a codebase the wiki knows")
    def coverage(codebase: str = Query(..., min_length=1, max_length=1000,
                                       description="Folder inside the workspace"),
                 service_level: bool = False,
                 min_mentions: int = Query(1, ge=1, le=1000)) -> dict[str, Any]:
        folder = folder_inside(mg.settings.base_dir, codebase)
        return mg.coverage(folder, service_level=service_level,
                           min_mentions=min_mentions).to_dict()

    @app.middleware("http")
    async def timing(request: Request, call_next):
        started = time.perf_counter()
        response = await call_next(request)
        response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1e3:.1f}"
        return response

    return app


class _Unauthorized(Exception):
    """Missing or wrong bearer token."""


def _status(exc: MindgraphError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, (ConfigError, DataBlockError)):
        return 422
    if isinstance(exc, StoreError):
        return 503
    return 500
