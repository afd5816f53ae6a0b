"""The documents and links API: every operation as a method taking the caller's view.

A document is a wiki page, addressed by a stable id (``records.document_id`` of its path);
what a caller gets is always filtered by its view (``view.sees(page)``), and a document it
cannot see is "no document with id X", the same words as one that does not exist. Changes
go through the compiler, never around it:

- a new note (POST /documents, POST /upload) is a new raw file in the caller's scope folder
  (files.py), then compiled (ingest of that file) and so indexed;
- metadata (PUT) and manual links (POST /links) are records under the state folder
  (records.py), written into the page when it is compiled (overlay.py): the page's raw note
  is recompiled, raw/ itself is untouched;
- DELETE removes only a raw note the API created, still as it wrote it, in a scope the caller
  may write to; anything else is Refused with the reason. A note whose compile failed has no
  page; its id (returned by the upload) still finds it in the records, so it can go too.
- a note is refused at upload when it is larger than ``compile.max_note_bytes`` (it could
  never be compiled), not stored to fail later;
- a server's identity creates at most ``limits.documents_per_day`` documents, and a write
  that compiles with the LLM takes one of its ``limits.llm_calls_per_hour`` per note
  before it writes (quotas/reserve.py: given back if the compile did not call the LLM):
  past either, QuotaExceeded before anything is written.

``workspace`` is the core (``Mindgraph``): its ``vault()``, ``ingest()``, ``embed()`` and
``settings``; this package does not import it (it sits below the core).
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Iterable

import yaml

from ..errors import IngestBusy, InputError, MindgraphError, NotFoundError, for_agents
from ..fsutil import sha256_file
from ..page.links import RELATIONS
from ..page.lookup import find_page
from ..page.markdown import heading_lines
from ..page.model import Page
from ..page.rawlines import raw_source
from ..ingest.scan import too_many_headings
from ..quotas import (give_back, llm_calls_reserved, require_llm_call, reserve_llm_calls,
                      spending, take_documents)
from .access import link_refused, may_change, tenant_folders, write_folder
from .errors import Refused, UploadTooLarge
from .files import check_text, note_source, safe_name, slug, write_new
from .jobs import Jobs
from .records import (Created, DocumentRecords, ManualLink, Overlay, as_json, document_id,
                      link_id, now_iso)

ID_PATTERN = r"^[0-9a-f]{16}$"
_ORIGINS = {"manual": "manual", "inferred": "inferred"}   # by link syntax; else "extracted"
# How long a write's compile waits for another ingest to finish (_in_turn): a few notes'
# compiles, not a whole-workspace ingest
WRITE_COMPILE_WAIT_S = 60.0


#: what one turn of the write lane compiles of an upload, in bytes of prose: a heading costs
#: every pass of a compile ~0.15 ms, as much as ~100 bytes of prose (a note of 90,000
#: headings took 13× the time of the same bytes of prose), so a note weighs its bytes plus
#: 100 a heading line; ~1.4 s of compile. Notes are grouped up to it: a turn for each heavy
#: note, one for many small ones (fifty of a line each took 5× as long one per turn)
COMPILE_TURN_WEIGHT = 1_000_000
HEADING_WEIGHT = 100


@dataclass(frozen=True)
class UploadBatch:
    """The notes one upload wrote, in the groups compiled a turn each, and the LLM calls
    reserved for them (None: offline, or nobody charged)."""

    folder: str
    turns: list[list[Created]]
    reserved: Any = None


class DocumentService:
    """The API over one workspace (one per server process)."""

    def __init__(self, workspace: Any, jobs: Jobs | None = None):
        self.mg = workspace
        self.settings = workspace.settings
        self.records = DocumentRecords(self.settings.state_dir)
        self.jobs = jobs or Jobs()

    # -- reading ------------------------------------------------------------------------
    def list(self, view: Any, *, scope: str | None = None, type: str | None = None,
             tag: str | None = None, team: str | None = None, offset: int = 0,
             limit: int = 50) -> dict[str, Any]:
        """The documents ``view`` sees that pass the filters, in path order, one page of
        them; ``total`` counts only what the caller sees."""
        pages = self._visible(view)
        created = self._created_pages()
        overlays = self.records.overlays()
        hits = []
        for page in pages:
            place = view.scope_of(page)
            if scope and (place is None or place.kind != scope):
                continue
            if team and (place is None or place.kind != "team" or place.owner != team):
                continue
            if type and str(page.frontmatter.get("type", "")).lower() != type.lower():
                continue
            if tag and tag.lower().lstrip("#") not in (t.lower() for t in page.tags):
                continue
            hits.append(page)
        return {"total": len(hits), "offset": offset, "limit": limit,
                "documents": [self._summary(view, p, created, overlays)
                              for p in hits[offset:offset + limit]]}

    def get(self, view: Any, doc_id: str) -> dict[str, Any]:
        """One document with its text and sections."""
        page = self._page(view, doc_id)
        summary = self._summary(view, page, self._created_pages(), self.records.overlays())
        return {**summary, "text": page.body,
                "sections": [{"id": s.id, "heading": s.heading, "level": s.level}
                             for s in page.sections]}

    def links(self, view: Any, doc_id: str) -> dict[str, Any]:
        """Outbound links and backlinks of a document, each with its kind, as the caller's
        view resolves them: a link to a page it cannot see is "missing", as one to no page
        is; backlinks from such pages are left out."""
        return self.links_of(view, [doc_id])[doc_id]

    def links_of(self, view: Any, doc_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """``links`` of many documents at once (one pass over the view's links)."""
        vault = self.mg.as_identity(view.identity).vault()  # resolves among the view's pages
        wanted = {doc_id: self._page(view, doc_id) for doc_id in dict.fromkeys(doc_ids)}
        by_path = {page.path: doc_id for doc_id, page in wanted.items()}
        result = {doc_id: {"id": doc_id, "page": page.path, "outbound": [], "backlinks": []}
                  for doc_id, page in wanted.items()}
        for source, link, res in vault.resolved_links():
            if link.is_attachment or link.is_self:
                continue
            target = res.target if res.status == "resolved" else None
            entry = {"kind": link.relation, "syntax": link.syntax, "line": link.line,
                     "section": link.section_id, "context": link.context,
                     "link_id": link.link_id,
                     "origin": _ORIGINS.get(link.syntax, "extracted")}
            if link.syntax == "inferred":
                entry.update(score=link.score, judge=link.judge)
            if source.path in by_path:
                result[by_path[source.path]]["outbound"].append(
                    {**entry, "target": link.target, "status": res.status,
                     "page": target, "id": document_id(target) if target else None})
            if target in by_path and target != source.path:
                result[by_path[target]]["backlinks"].append(
                    {**entry, "page": source.path, "id": document_id(source.path)})
        return result

    def search(self, view: Any, query: str, *, scope: str | None = None,
               types: Iterable[str] = (), max_results: int = 10) -> dict[str, Any]:
        """Hybrid search (keywords, meaning, graph; keywords alone when no vectors) over the
        documents ``view`` sees, of one scope kind and of the given types when asked."""
        wanted = {t.lower() for t in types}
        core = self.mg.as_identity(view.identity)   # searches only what the view sees
        pages = core.vault().pages
        answer = core.smart_search(query, min(100, max(max_results * 5, 20)))
        results = []
        for hit in answer.results:
            page = pages.get(hit.page)
            if page is None or not view.sees(page):
                continue
            place = view.scope_of(page)
            if scope and (place is None or place.kind != scope):
                continue
            kind = str(page.frontmatter.get("type") or "")
            if wanted and kind.lower() not in wanted:
                continue
            results.append({"id": document_id(page.path), "page": page.path,
                            "title": page.title, "type": kind or None,
                            "scope": place.describe() if place is not None else None,
                            "section_id": hit.section_id, "heading": hit.heading,
                            "snippet": hit.snippet, "score": round(hit.score, 4),
                            "retrievers": sorted(hit.sources)})
            if len(results) == max_results:
                break
        return {"query": query, "count": len(results), "results": results,
                "degradation": list(answer.degradation)}

    # -- notes --------------------------------------------------------------------------
    def create(self, view: Any, *, title: str, text: str, tags: Iterable[str] = (),
               type: str | None = None, scope: str | None = None,
               team: str | None = None) -> dict[str, Any]:
        """Write a new raw note in the caller's scope folder, compile it, and say whether
        (and since when) it is searchable."""
        folder, place = write_folder(view, scope, team)
        head = {"title": title, **({"type": type} if type else {}),
                **({"tags": list(tags)} if tags else {})}
        data = ("---\n" + yaml.safe_dump(head, allow_unicode=True, sort_keys=False)
                + "---\n" + text.rstrip("\n") + "\n").encode("utf-8")
        self._compilable(slug(title) + ".md", len(data))
        self._not_too_many_headings(slug(title) + ".md", data)
        with self._compiling(1):
            created = self._write(view, place, folder, [(slug(title) + ".md", data)],
                                  "documents")
            return self._compiled(view, created, "create")[0]

    def upload(self, view: Any, files: list[tuple[str, BinaryIO]], *,
               scope: str | None = None, team: str | None = None) -> UploadBatch:
        """Write uploaded files as new raw notes — all or none: every name, type, size,
        encoding and heading count is checked (and, with an LLM, one call per note reserved)
        before the first is written. Each is then compiled by ``compile_uploaded`` in a turn
        of its own, so one upload of heavy notes does not hold the write lane for another
        tenant's write; ``uploaded`` ends the batch."""
        folder, place = write_folder(view, scope, team)
        limits = self.settings.serve
        if len(files) > limits.upload_max_files:
            raise UploadTooLarge(f"{len(files)} files in one upload; at most "
                                 f"{limits.upload_max_files} (serve.upload_max_files).")
        named = [(safe_name(name), stream) for name, stream in files]
        cap = self.settings.compile.max_note_bytes
        for name, stream in named:
            if cap < limits.upload_max_file_bytes:
                check_text(name, stream, cap, _compile_limit(limits.upload_max_file_bytes))
            else:
                check_text(name, stream, limits.upload_max_file_bytes)
        notes = [note_source(name, stream) for name, stream in named]
        for (name, _), (_, data) in zip(named, notes):
            if isinstance(data, bytes):             # a data file wrapped in a note
                self._compilable(name, len(data))
            self._not_too_many_headings(name, data)
        weights = [_weight(data) for _, data in notes]
        reserved = self._reserving(len(notes))
        try:
            created = self._write(view, place, folder, notes, "upload")
        except BaseException:
            give_back(reserved)
            raise
        return UploadBatch(folder, _turns(created, weights), reserved)

    def compile_uploaded(self, view: Any, batch: UploadBatch,
                         turn: list[Created]) -> list[dict[str, Any]]:
        """Compile one turn's notes of an upload (its reserved LLM calls spent first)."""
        with spending(batch.reserved):
            return self._compiled(view, turn, "upload")

    @staticmethod
    def uploaded(batch: UploadBatch) -> None:
        """The upload's notes are compiled (or abandoned: a rescan compiles them): its
        reserved LLM calls not spent are given back."""
        give_back(batch.reserved)

    def update(self, view: Any, doc_id: str, changes: dict[str, Any]) -> dict[str, Any]:
        """Set (or, with null, clear) the title, tags and type of a document: kept as an
        overlay, applied when its raw note is recompiled (now)."""
        page = self._page(view, doc_id)
        raw = self._raw_of(page, "metadata")
        with self._compiling(1):
            with self.records.change() as data:
                current = data["overlays"].get(page.path, {})
                for key in ("title", "tags", "type"):
                    if key in changes:
                        if changes[key] is None:
                            current.pop(key, None)
                        else:
                            current[key] = list(changes[key]) if key == "tags" \
                                else changes[key]
                if current:
                    data["overlays"][page.path] = current
                else:
                    data["overlays"].pop(page.path, None)
            self._recompile([raw])
        return self.get(view, doc_id)

    def delete(self, view: Any, doc_id: str) -> dict[str, Any]:
        """Delete a note the API created in a scope the caller may write to (Refused
        otherwise, with the reason); its overlay and manual links go with it. A note whose
        compile failed (no page) is found by its id in the records."""
        record = self.records.created().get(doc_id)
        try:
            found = self._page(view, doc_id)
        except NotFoundError:
            if record is None or not self._uncompiled(view, record):
                raise
            page, scope = record.page, view.mapping.scope_of(record.raw)
        else:
            page, scope = found.path, view.scope_of(found)
        if record is None:
            raise Refused(f"{page} was not created through the API, so the API does not "
                          f"delete it: its raw note came from elsewhere and mindgraph never "
                          f"changes those. Remove the raw note at its source.")
        why = may_change(view, scope)
        if why:
            raise Refused(f"{page} cannot be deleted by you: {why}.")
        path = self.settings.raw_dir / record.raw
        if path.exists() and sha256_file(path) != record.sha256:
            raise Refused(f"raw/{record.raw} was changed after the API wrote it, so it is no "
                          f"longer only the API's; delete it yourself if it should go.")
        touching = [x for x in self.records.links().values()
                    if page in (x.source, x.target)]
        with self._compiling(1):
            with self.records.change() as data:
                data["created"].pop(doc_id, None)
                data["overlays"].pop(page, None)
                for link in touching:
                    data["links"].pop(link.id, None)
            path.unlink(missing_ok=True)
            sources = {self._raw_of(self.mg.vault().pages[x.source], "links")
                       for x in touching if x.source != page
                       and x.source in self.mg.vault().pages}
            # the caller deleted it: its page goes even if it was the last (ingest/guard.py)
            self._recompile([record.raw, *sorted(sources)], allow_removals=True)
        return {"id": doc_id, "page": page, "deleted": True,
                "links_removed": len(touching)}

    # -- manual links ---------------------------------------------------------------------
    def add_link(self, view: Any, source: str, target: str, kind: str,
                 context: str = "") -> dict[str, Any]:
        """A manual typed link between two documents the caller sees (the same triple
        again replaces its context); the source page is recompiled with it."""
        if kind not in RELATIONS:
            raise InputError(f"kind must be one of {', '.join(RELATIONS)}, not {kind!r}.")
        src, dst = self._page(view, source), self._page(view, target)
        if src.path == dst.path:
            raise InputError("a link needs two different documents ('from' and 'to' are the "
                             "same).")
        why = link_refused(view.scope_of(src), view.scope_of(dst))
        if why:
            raise Refused(f"no link from {src.path} to {dst.path}: {why}.")
        raw = self._raw_of(src, "links")
        who = view.identity
        link = ManualLink(link_id(src.path, dst.path, kind), src.path, dst.path, kind,
                          context, who.tenant, who.agent or who.name, now_iso())
        with self._compiling(1):
            with self.records.change() as data:
                data["links"][link.id] = as_json(link)
            self._recompile([raw])
        return self._link_json(link)

    def delete_link(self, view: Any, link: str) -> dict[str, Any]:
        """Remove a manual link whose source the caller sees (extracted links live in the
        notes themselves: edit the note)."""
        found = self.records.links().get(link)
        pages = self.mg.vault().pages
        source = pages.get(found.source) if found else None
        if found is None or (source is not None and not view.sees(source)) or \
                (source is None and not view.identity.is_local):
            raise NotFoundError(f"no manual link with id {link!r}. GET "
                                f"/documents/{{id}}/links lists a document's links and ids.")
        why = may_change(view, view.scope_of(source)) if source is not None else None
        if why:
            raise Refused(f"the link from {found.source} cannot be removed by you: {why}.")
        with self._compiling(1):
            with self.records.change() as data:
                data["links"].pop(link, None)
            if source is not None:
                self._recompile([self._raw_of(source, "links")])
        return {**self._link_json(found), "deleted": True}

    # -- work -----------------------------------------------------------------------------
    def rescan(self, view: Any, *, embed: bool = True, job: Any = None) -> dict[str, Any]:
        """Compile the caller's tenant's changed raw notes (all of raw/ for the local
        identity), then embed; ``job`` (from ``start_rescan``) reports the progress."""
        job = job or self.start_rescan(view)
        try:
            raw = self.settings.raw_dir
            paths = [p.relative_to(raw).as_posix() for p in raw.rglob("*") if p.is_file()] \
                if raw.is_dir() else []
            folders = tenant_folders(view, paths)
            report = None
            if folders != []:
                report = self.mg.ingest(only=tuple(folders or ()),
                                        progress=self.jobs.progress(job, "compiling")).to_dict()
            embedded = None
            if embed:
                self.jobs.update(job, phase="embedding", done=0, total=0, current="")
                counter = self.jobs.progress(job, "embedding")
                seen = [0]

                def step(n: int) -> None:
                    seen[0] += n
                    counter(seen[0], 0)
                embedded = self.mg.embed(progress=step)[0].as_dict()
            if embedded is not None and not view.identity.is_local:
                # the embed ran over the whole workspace: its counts and paths are every
                # tenant's, so an agent learns only that it finished and how long it took
                embedded = {"done": True, "seconds": embedded.get("seconds")}
            outcome = {"ingest": _brief_ingest(report), "embed": embedded}
        except Exception as exc:
            self.jobs.finish(job, error=job_error(exc))
            raise
        self.jobs.finish(job, outcome)
        return {"job": job.to_json()}

    def start_rescan(self, view: Any) -> Any:
        """Register a rescan of the caller's tenant (Busy while one runs)."""
        self._may_compile()
        return self.jobs.start("rescan", view.identity.tenant, exclusive=True)

    def status(self, view: Any) -> dict[str, Any]:
        """What is being compiled or embedded for the caller's tenant."""
        who = view.identity
        if who.is_local:
            return self.jobs.snapshot(None)
        return self.jobs.snapshot(who.tenant, view.sees_path)

    # -- helpers --------------------------------------------------------------------------
    def _visible(self, view: Any) -> list[Page]:
        pages = self.mg.vault().pages
        return [pages[p] for p in sorted(pages) if view.sees(pages[p])]

    def _page(self, view: Any, doc_id: str) -> Page:
        """The document with this id (or, from MCP, this page path, title or alias) that
        ``view`` sees; NotFoundError in the same words whether it exists elsewhere or not."""
        pages = self.mg.vault().pages
        for page in pages.values():
            if document_id(page.path) == doc_id and view.sees(page):
                return page
        if not re.fullmatch(ID_PATTERN, doc_id):
            with contextlib.suppress(NotFoundError):
                return find_page({p: page for p, page in pages.items() if view.sees(page)},
                                 doc_id)
        raise NotFoundError(f"no document with id {doc_id[:40]!r}. GET /documents (or the "
                            f"search_documents tool) lists the documents you can see, with "
                            f"their ids.")

    def _uncompiled(self, view: Any, record: Created) -> bool:
        """Is ``record`` a note of the API with no page (its compile failed) that ``view``
        may see by its raw path?"""
        return record.page not in self.mg.vault().pages and view.sees_path(record.raw)

    def _compilable(self, name: str, size: int) -> None:
        """UploadTooLarge when a note of ``size`` bytes could never be compiled."""
        cap = self.settings.compile.max_note_bytes
        if size > cap:
            raise UploadTooLarge(f"{name}: {size} bytes as a note, larger than "
                                 f"{_compile_limit(self.settings.serve.upload_max_file_bytes)}"
                                 f" ({cap} bytes); split it.")

    def _created_pages(self) -> dict[str, Created]:
        return {r.page: r for r in self.records.created().values()}

    def _summary(self, view: Any, page: Page, created: dict[str, Created],
                 overlays: dict[str, Overlay]) -> dict[str, Any]:
        place = view.scope_of(page)
        overlay = overlays.get(page.path)
        return {"id": document_id(page.path), "page": page.path, "title": page.title,
                "type": page.frontmatter.get("type"), "tags": list(page.tags),
                "scope": None if place is None else {"tenant": place.tenant, "kind": place.kind,
                                                     "owner": place.owner or None},
                "source": _source(page), "created_via_api": page.path in created,
                "overlay": overlay.to_json() if overlay else None}

    def _raw_of(self, page: Page, what: str) -> str:
        source = _source(page)
        if source is None or not (self.settings.raw_dir / source).is_file():
            raise Refused(f"{page.path} has no raw note in raw/ to compile it from, and "
                          f"{what} set through the API are applied when a note is compiled. "
                          f"Only compiled documents take them.")
        return source

    def _write(self, view: Any, place: Any, folder: str,
               notes: list[tuple[str, bytes | BinaryIO]], via: str) -> list[Created]:
        from ..ingest.pipeline import wiki_path_for

        take_documents(len(notes))      # the caller's daily quota: all of them, or none
        who = view.identity
        out = []
        for name, data in notes:
            raw = write_new(self.settings.raw_dir, folder, name, data)
            page = wiki_path_for(raw)
            record = Created(document_id(page), raw, page,
                             sha256_file(self.settings.raw_dir / raw), who.tenant,
                             who.agent or who.name, place.kind if place else "",
                             place.owner if place is not None and place.kind == "team"
                             else None, now_iso(), via)
            with self.records.change() as records:
                records["created"][record.id] = as_json(record)
            out.append(record)
        return out

    def _may_compile(self) -> None:
        """Before a rescan that compiles with the LLM: QuotaExceeded when the caller (a
        server's identity) has no LLM call left (quotas/)."""
        if self.settings.compile.provider != "offline":
            require_llm_call()

    def _reserving(self, notes: int) -> Any:
        """``_compiling``'s calls taken now for compiles in turns of their own (None:
        offline, or no charged identity)."""
        if self.settings.compile.provider == "offline":
            return None
        return reserve_llm_calls(notes)

    def _not_too_many_headings(self, name: str, data: bytes | BinaryIO) -> None:
        """UploadTooLarge when the note has more headings than compile.max_note_headings."""
        if isinstance(data, bytes):
            text = data.decode("utf-8")
        else:
            text = data.read().decode("utf-8")
            data.seek(0)
        refused = too_many_headings(name, text, self.settings.compile.max_note_headings)
        if refused:
            raise UploadTooLarge(refused.replace("the note was not compiled",
                                                 "the upload was refused, nothing written"))

    def _compiling(self, notes: int) -> Any:
        """Around a write and its compile with the LLM: one call per note taken first
        (QuotaExceeded, nothing written, when they do not fit), the unused given back after
        (quotas/reserve.py)."""
        if self.settings.compile.provider == "offline":
            return contextlib.nullcontext()
        return llm_calls_reserved(notes)

    def _compiled(self, view: Any, created: list[Created], kind: str) -> list[dict[str, Any]]:
        job = self.jobs.start(kind, view.identity.tenant)
        try:
            report = self._recompile([c.raw for c in created],
                                     self.jobs.progress(job, "compiling"))
        except Exception as exc:
            self.jobs.finish(job, error=job_error(exc))
            raise
        outcomes = {o.path: o for o in report.files} if report is not None else {}
        self.jobs.finish(job, _brief_ingest(report.to_dict() if report is not None else None))
        when = now_iso()
        out = []
        for c in created:
            outcome = outcomes.get(c.raw)
            ok = outcome is not None and outcome.status == "ingested"
            out.append({"id": c.id, "page": c.page, "raw": c.raw, "searchable": ok,
                        "searchable_since": when if ok else None,
                        "compile": {"status": outcome.status if outcome else "skipped",
                                    "reason": outcome.reason if outcome else ""}})
        return out

    def _recompile(self, raw_paths: list[str], progress: Any = None,
                   allow_removals: bool = False) -> Any:
        """Compile these raw notes (a path gone from raw/ and from the ingest state is
        left out: there is nothing left to do for it); ``allow_removals`` for a deletion."""
        from ..ingest.state import STATE_FILENAME, IngestState

        known = IngestState.load(self.settings.state_dir / STATE_FILENAME).files
        paths = tuple(p for p in dict.fromkeys(raw_paths)
                      if p in known or (self.settings.raw_dir / p).is_file())
        report = _in_turn(lambda: self.mg.ingest(only=paths, progress=progress,
                                                 allow_removals=allow_removals)) \
            if paths else None
        self.mg.refresh()
        return report

    @staticmethod
    def _link_json(link: ManualLink) -> dict[str, Any]:
        return {"id": link.id, "from": document_id(link.source), "to": document_id(link.target),
                "from_page": link.source, "to_page": link.target, "kind": link.kind,
                "context": link.context, "origin": "manual", "created_at": link.created_at}


def _in_turn(ingest: Callable[[], Any], wait_s: float = WRITE_COMPILE_WAIT_S) -> Any:
    """``ingest()``, waiting its turn while another ingest holds the workspace's lock (the
    write of another worker of `serve --workers N`, or of MCP next to REST): the note is
    already stored, and refusing its compile (409) left it unsearchable. IngestBusy after
    ``wait_s`` (a whole-workspace ingest still running)."""
    deadline = time.monotonic() + wait_s
    pause = 0.02
    while True:
        try:
            return ingest()
        except IngestBusy:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


def _weight(data: bytes | BinaryIO) -> int:
    """What compiling a note costs, in bytes of prose (see COMPILE_TURN_WEIGHT)."""
    if isinstance(data, bytes):
        text = data.decode("utf-8")
    else:
        text = data.read().decode("utf-8")
        data.seek(0)
    return len(text) + HEADING_WEIGHT * heading_lines(text)


def _turns(created: list[Created], weights: list[int]) -> list[list[Created]]:
    """The notes in upload order, grouped up to COMPILE_TURN_WEIGHT (a heavier note alone)."""
    turns: list[list[Created]] = []
    held = COMPILE_TURN_WEIGHT
    for note, weight in zip(created, weights):
        if held + weight > COMPILE_TURN_WEIGHT:
            turns.append([])
            held = 0
        turns[-1].append(note)
        held += weight
    return turns


def _compile_limit(upload_max: int) -> str:
    return (f"compile.max_note_bytes, the most a note may have to be compiled (an upload may "
            f"be up to serve.upload_max_file_bytes, {upload_max}, but a larger note would be "
            f"stored and never compiled)")


def _source(page: Page) -> str | None:
    return raw_source(page) or None


def _brief_ingest(report: dict[str, Any] | None) -> dict[str, Any] | None:
    if report is None:
        return None
    return {k: report.get(k) for k in ("ingested", "unchanged", "skipped", "failed", "removed",
                                       "seconds")}


_LOG = logging.getLogger("mindgraph.documents")


def job_error(exc: BaseException) -> str:
    """What a failed job tells the agents who read it (errors.for_agents); the whole error
    goes to the server's log."""
    _LOG.warning("a document job failed: %s: %s", type(exc).__name__, exc,
                 exc_info=not isinstance(exc, MindgraphError))
    return for_agents(exc)


__all__ = ["DocumentService", "ID_PATTERN"]
