"""REST routes of the documents and links API: /documents, /links, /upload, /rescan, /status.

Thin: each route takes the caller's view from the request (``viewer``: the identity of the
authenticated token, never a parameter) and calls one ``DocumentService`` method. Reads run
on the query lane; writes (they compile) one at a time on the reindex lane, so they never run
two ingests at once. ``POST /rescan`` answers 202 at once and compiles in the background; a
second rescan of the same tenant while one runs is 409. ``GET /status`` is JSON, or — with
``Accept: text/event-stream`` or ``?stream=true`` — server-sent events: one ``status`` event
now and one per change, until nothing of the caller's tenant is running (then it closes).

``POST /upload`` is multipart (field ``files``, repeated; optional ``scope`` and ``team``).
The Guard streams its body to the app up to its own cap (``serve.upload_max_files`` ×
``serve.upload_max_file_bytes``) instead of the 1 MiB JSON limit, and the form is read only
after the token was checked.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from typing import Any, AsyncIterator, Callable

from fastapi import Body, Depends, FastAPI, Path, Query, Request
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.responses import StreamingResponse

from ..documents.service import ID_PATTERN, DocumentService, job_error
from . import schemas_documents as d
from .guard import BodyRule, SpoolBudget
from .lanes import ServerLanes
from .rest_errors import AppError

UPLOAD_PATH = "/upload"
MULTIPART = ("multipart/form-data",)
SSE_POLL_S = 0.1
_WRITE_CODES = (400, 403, 404, 408, 409, 413, 415)


def upload_rule(settings: Any) -> tuple[str, BodyRule]:
    """The Guard's body rule for POST /upload: multipart, streamed, its own cap and time.

    A file larger than ``compile.max_note_bytes`` is refused once the form is read (it could
    never compile), so the cap counts each file at most that: with the 50 MB per file of
    ``serve.upload_max_file_bytes`` alone, one request spooled 2.5 GB to disk before the
    refusal (50 × 2 MB, 100 MB, now). All uploads in progress together hold at most
    ``serve.upload_spool_bytes`` (the rule's ``SpoolBudget``: 503 past it)."""
    serve = settings.serve
    per_file = min(serve.upload_max_file_bytes, settings.compile.max_note_bytes)
    return UPLOAD_PATH, BodyRule(serve.upload_max_files * per_file + serve.max_body_bytes,
                                 MULTIPART, streamed=True, timeout_s=serve.upload_timeout_s,
                                 setting="serve.upload_max_files × the smaller of "
                                         "serve.upload_max_file_bytes and "
                                         "compile.max_note_bytes",
                                 budget=SpoolBudget(serve.upload_spool_bytes))


def _doc_id() -> Any:
    return Path(..., pattern=ID_PATTERN, description="A document id (from GET /documents)")


def add_document_routes(app: FastAPI, route: Callable[..., Callable], service: DocumentService,
                        lanes: ServerLanes, viewer: Callable[[Request], Any],
                        json_body: Any) -> None:
    """Register the routes on ``app`` with rest.py's ``route`` helper."""
    serve = service.settings.serve
    write = {"lane": lanes.admin, "dependencies": (Depends(json_body),)}

    @route("get", "/documents", d.DocumentListOut,
           "Documents you can see, filtered by scope, type, tag or team, a page at a time")
    def list_documents(request: Request,
                       scope: d.ScopeKind | None = None,
                       type: str | None = Query(None, min_length=1, max_length=100),
                       tag: str | None = Query(None, min_length=1, max_length=100),
                       team: str | None = Query(None, min_length=1, max_length=100),
                       offset: int = Query(0, ge=0, le=1_000_000),
                       limit: int = Query(50, ge=1, le=200)) -> dict[str, Any]:
        return service.list(viewer(request), scope=scope, type=type, tag=tag, team=team,
                            offset=offset, limit=limit)

    @route("get", "/documents/{doc_id}", d.DocumentDetailOut,
           "One document: metadata, scope, text and sections", 404)
    def get_document(request: Request, doc_id: str = _doc_id()) -> dict[str, Any]:
        return service.get(viewer(request), doc_id)

    @route("post", "/documents", d.CreatedOut,
           "A new note in your scope folder, compiled and indexed (says when searchable)",
           *_WRITE_CODES, **write)
    def create_document(request: Request, body: d.DocumentIn) -> dict[str, Any]:
        return service.create(viewer(request), title=body.title, text=body.text,
                              tags=body.tags, type=body.type, scope=body.scope, team=body.team)

    @route("put", "/documents/{doc_id}", d.DocumentDetailOut,
           "Set a document's title, tags or type (an overlay applied when it is compiled)",
           *_WRITE_CODES, **write)
    def update_document(request: Request, body: d.DocumentPatch,
                        doc_id: str = _doc_id()) -> dict[str, Any]:
        return service.update(viewer(request), doc_id,
                              {k: getattr(body, k) for k in body.model_fields_set})

    @route("delete", "/documents/{doc_id}", d.DeletedOut,
           "Delete a note created through the API in your scope (else 403 with the reason)",
           404, 409, lane=lanes.admin)
    def delete_document(request: Request, doc_id: str = _doc_id()) -> dict[str, Any]:
        return service.delete(viewer(request), doc_id)

    @route("get", "/documents/{doc_id}/links", d.LinksOut,
           "Outbound links and backlinks of a document, with kinds (manual ones marked)", 404)
    def document_links(request: Request, doc_id: str = _doc_id()) -> dict[str, Any]:
        return service.links(viewer(request), doc_id)

    @route("post", "/links", d.LinkOut,
           "A manual typed link between two documents (kept across recompiles)",
           *_WRITE_CODES, **write)
    def add_link(request: Request, body: d.LinkIn) -> dict[str, Any]:
        return service.add_link(viewer(request), body.source, body.target, body.kind,
                                body.context)

    @route("delete", "/links/{link_id}", d.LinkOut, "Remove a manual link", 404, 409,
           lane=lanes.admin)
    def delete_link(request: Request,
                    link_id: str = Path(..., pattern=ID_PATTERN,
                                        description="A manual link's id")) -> dict[str, Any]:
        return service.delete_link(viewer(request), link_id)

    @route("post", "/links/batch", d.LinksBatchOut,
           "Links and backlinks of many documents at once", 400, 404, 408, 413, 415,
           dependencies=(Depends(json_body),))
    def links_batch(request: Request, body: d.LinksBatchIn) -> dict[str, Any]:
        return {"documents": service.links_of(viewer(request), body.ids)}

    @route("post", UPLOAD_PATH, d.UploadOut,
           f"Upload up to {serve.upload_max_files} notes (multipart field 'files') into your "
           f"scope or one of your teams", *_WRITE_CODES, lane=None,
           openapi_extra={"requestBody": {"required": True, "content": {
               "multipart/form-data": {"schema": {
                   "type": "object", "required": ["files"],
                   "properties": {
                       "files": {"type": "array", "items": {"type": "string",
                                                            "format": "binary"},
                                 "minItems": 1, "maxItems": serve.upload_max_files},
                       "scope": {"type": "string", "enum": ["personal", "team", "shared"]},
                       "team": {"type": "string", "maxLength": 100}}}}}}})
    async def upload(request: Request) -> dict[str, Any]:
        view = viewer(request)
        async with _read_upload(request, serve) as (files, scope, team):
            batch = await lanes.admin.run(lambda: service.upload(view, files, scope=scope,
                                                                 team=team),
                                          serve.reindex_timeout_s, "serve.reindex_timeout_s")
        return {"folder": batch.folder,
                "documents": await _compile_in_turns(service, lanes, view, batch)}

    @route("post", "/rescan", d.RescanOut,
           "Compile your tenant's changed notes and embed them, in the background (202)",
           400, 408, 409, 413, 415, lane=None, status_code=202,
           dependencies=(Depends(json_body),))
    async def rescan(request: Request, body: d.RescanIn = Body(None)) -> dict[str, Any]:
        view = viewer(request)
        job = service.start_rescan(view)          # Busy (409) while one runs
        try:
            lanes.admin.submit(lambda: service.rescan(view, embed=(body or d.RescanIn()).embed,
                                                      job=job))
        except Exception as exc:
            service.jobs.finish(job, error=job_error(exc))
            raise
        return {"job": job.to_json()}

    @route("get", "/status", d.StatusOut,
           "What is being compiled or embedded (JSON, or server-sent events)", lane=None,
           openapi_extra={"responses": {"200": {"content": {
               "text/event-stream": {"schema": {
                   "type": "object", "required": ["event", "data"],
                   "description": "'status': data is the JSON status; 'idle': nothing runs "
                                  "any more, the stream ends",
                   "properties": {"event": {"type": "string", "enum": ["status", "idle"]},
                                  "data": {"type": "string"}}}}}}}})
    async def status(request: Request,
                     stream: bool = Query(False, description="Server-sent events until "
                                                             "nothing is running (also with "
                                                             "Accept: text/event-stream)")
                     ) -> Any:
        view = viewer(request)
        if stream or "text/event-stream" in request.headers.get("accept", ""):
            return StreamingResponse(_events(service, view, serve.reindex_timeout_s),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-store"})
        return service.status(view)


async def _compile_in_turns(service: DocumentService, lanes: ServerLanes, view: Any,
                            batch: Any) -> list[dict[str, Any]]:
    """Compile an upload's notes a turn of the write lane at a time (a heavy note alone,
    small ones together: documents/service.py's COMPILE_TURN_WEIGHT), each turn within
    serve.reindex_timeout_s: the lane takes its callers in turn, so another tenant's write
    waits for one of these turns, not for the whole upload (five notes of 90,000 headings
    held it in one turn, and the other tenant's POST /documents got 504). A note not
    compiled (the request timed out or was dropped) stays in raw/ for the next rescan."""
    timeout = service.settings.serve.reindex_timeout_s
    documents: list[dict[str, Any]] = []
    try:
        for turn in batch.turns:
            documents += await lanes.admin.run(
                functools.partial(service.compile_uploaded, view, batch, turn), timeout,
                "serve.reindex_timeout_s")
        return documents
    finally:
        service.uploaded(batch)


@contextlib.asynccontextmanager
async def _read_upload(request: Request, serve: Any
                       ) -> AsyncIterator[tuple[list[tuple[str, Any]], str | None, str | None]]:
    """The files (name, spooled file) and options of a multipart upload; the spooled files
    are removed when the block ends."""
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise AppError(415, "Unsupported Media Type",
                       "Send the files as multipart/form-data (field 'files').")
    try:
        form = await request.form(max_files=serve.upload_max_files, max_fields=10)
    except (MultiPartException, HTTPException) as exc:
        text = str(getattr(exc, "detail", None) or getattr(exc, "message", exc))
        if isinstance(exc, HTTPException) and exc.status_code != 400:
            raise                           # the Guard's 408 / 413
        raise AppError(413 if "Too many files" in text else 400, "BadUpload",
                       f"{text} An upload takes at most {serve.upload_max_files} files "
                       f"(serve.upload_max_files) in the multipart field 'files'.") from None
    try:
        parts = form.getlist("files")
        if not parts or not all(isinstance(p, UploadFile) for p in parts):
            raise AppError(422, "ValidationError",
                           "files: send at least one file in the multipart field 'files'.")
        options = {}
        for key in ("scope", "team"):
            value = form.get(key)
            if value is not None and not isinstance(value, str):
                raise AppError(422, "ValidationError", f"{key}: a text field, not a file.")
            options[key] = value or None
        if options["scope"] not in (None, "personal", "team", "shared"):
            raise AppError(422, "ValidationError",
                           "scope: one of personal, team, shared.")
        yield [(p.filename or "", p.file) for p in parts], options["scope"], options["team"]
    finally:
        await form.close()


async def _events(service: DocumentService, view: Any, max_s: float):
    """SSE: the caller's status now and at each change, until nothing of it runs."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_s
    seen = -1
    while True:
        version = service.jobs.version
        if version != seen:
            seen = version
            snapshot = service.status(view)
            yield f"event: status\ndata: {json.dumps(snapshot, separators=(',', ':'))}\n\n"
            if not snapshot["busy"]:
                yield "event: idle\ndata: {}\n\n"
                return
        if loop.time() > deadline:
            return
        await asyncio.sleep(SSE_POLL_S)


__all__ = ["add_document_routes", "upload_rule"]
