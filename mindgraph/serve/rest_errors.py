"""Errors of the REST API as HTTP answers: one JSON shape (``ErrorOut``: error, detail, and
field errors for a 422) whoever raised them, and the one place that maps error types to
statuses (the list is in the docstring of serve/rest.py)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..errors import (
    AmbiguousName,
    ConfigError,
    Forbidden,
    IngestError,
    InputError,
    MindgraphError,
    NotFoundError,
    OverBudget,
    ProviderError,
    QuotaExceeded,
    QuotaLedgerBusy,
    StoreError,
    TooLarge,
    Unauthenticated,
    for_agents,
)
from ..documents.errors import BadUpload, Busy
from ..page.data import DataBlockError
from .lanes import LaneBusy, LaneTimeout


_LOG = logging.getLogger("mindgraph.serve")


class AppError(Exception):
    """An HTTP error raised by the app itself (not by the core)."""

    def __init__(self, status: int, error: str, detail: str,
                 headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status, self.error, self.detail, self.headers = status, error, detail, headers


def install_error_handlers(app: FastAPI) -> None:
    """One JSON shape for every error (``ErrorOut``), whoever raised it."""

    def body(status: int, error: str, detail: str, errors: list | None = None,
             headers: dict[str, str] | None = None) -> JSONResponse:
        content: dict[str, Any] = {"error": error, "detail": detail}
        if errors is not None:
            content["errors"] = errors
        return JSONResponse(content, status_code=status, headers=headers)

    @app.exception_handler(MindgraphError)
    async def domain_error(request: Request, exc: MindgraphError) -> JSONResponse:
        if isinstance(exc, ProviderError):      # the provider's own words stay in the log
            _LOG.warning("%s %s: %s: %s", request.method, request.url.path,
                         type(exc).__name__, exc)
        content: dict[str, Any] = {"error": type(exc).__name__, "detail": for_agents(exc)}
        if isinstance(exc, AmbiguousName):      # the pages to choose from, as paths
            content["candidates"] = list(exc.candidates)
        headers = None
        if isinstance(exc, QuotaExceeded):      # the limit to raise, and when to retry
            content["setting"] = exc.setting
            headers = {"Retry-After": str(int(exc.retry_after_s))}
        if isinstance(exc, QuotaLedgerBusy):    # another process holds the counts: soon
            headers = {"Retry-After": str(int(exc.retry_after_s))}
        return JSONResponse(content, status_code=_status(exc), headers=headers)

    @app.exception_handler(AppError)
    async def own_error(request: Request, exc: AppError) -> JSONResponse:
        return body(exc.status, exc.error, exc.detail, headers=exc.headers)

    @app.exception_handler(LaneBusy)
    async def busy(request: Request, exc: LaneBusy) -> JSONResponse:
        return body(503, "Unavailable", str(exc), headers={"Retry-After": "1"})

    @app.exception_handler(LaneTimeout)
    async def too_slow(request: Request, exc: LaneTimeout) -> JSONResponse:
        return body(504, "Gateway Timeout", str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_parameters(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", ""),
                   "type": e.get("type", "")} for e in exc.errors()]
        detail = "; ".join(f"body is not valid JSON (at character {e['loc'][-1]})"
                           if e["type"] == "json_invalid" else f"{_where(e['loc'])}: {e['msg']}"
                           for e in errors)
        if any(e["loc"][:1] == ["body"] for e in errors):
            detail += " (send a JSON object with Content-Type: application/json)"
        return body(422, "ValidationError", detail or "invalid request", errors)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        # a bug or damage nothing above handles: the JSON shape too, its text (paths,
        # internals) only in the log, with the traceback (Starlette logs it after this)
        return body(500, "InternalError", for_agents(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = str(exc.detail)
        if exc.status_code == 400 and "body" in detail:
            detail += " (send a JSON object with Content-Type: application/json)"
        return body(exc.status_code, "HTTPError", detail, headers=exc.headers)


def _where(loc: list[Any]) -> str:
    """``query.limit`` → ``limit``; a whole body → ``body``."""
    return ".".join(map(str, loc[1:])) or (str(loc[0]) if loc else "request")


_DOCUMENT_ERRORS = ((Unauthenticated, 401), (Forbidden, 403), (Busy, 409), (BadUpload, 415),
                    (TooLarge, 413), (QuotaExceeded, 429), (OverBudget, 504))


def _status(exc: MindgraphError) -> int:
    if isinstance(exc, AmbiguousName):      # it exists, several times: choose one
        return 409
    if isinstance(exc, NotFoundError):
        return 404
    for kind, status in _DOCUMENT_ERRORS:
        if isinstance(exc, kind):
            return status
    if isinstance(exc, InputError):   # well-formed but unusable: no words, no source files
        return 400
    # the request was valid (pydantic checked it); the resource or the server is the problem
    if isinstance(exc, (DataBlockError, IngestError)):   # IngestError: another ingest runs
        return 409
    if isinstance(exc, ProviderError):
        return 502
    if isinstance(exc, (StoreError, ConfigError)):
        return 503
    return 500
