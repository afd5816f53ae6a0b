"""The shape every compiled page shares, whichever compiler wrote it.

::

    ---
    title, type, tags, aliases       what the page is about
    ...                              the raw note's other frontmatter keys, kept as written
    created, updated, date_source    real dates only (mindgraph.page.dates): the raw note's
                                     frontmatter, a date written in it, its file name or its
                                     git history, and which of those; none of the three keys
                                     when nothing is dated (never the file's modification time)
    provenance:                      who wrote it, from what (mindgraph/trust/record.py):
      origin                         ai_generated (an LLM) or compiled_offline
      generator                      provider, model and prompt version (or offline:vN)
      sources: [{path, sha256}]      the raw note(s) it was compiled from
    ---

Pages written before the provenance record carry ``sources`` and ``compiler`` at the top
level instead; every reader takes either (``provenance_sources``).
    > [!summary]
    > A short summary.

    The body: sections normalised, wikilinks added.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Mapping

from ..page.dates import CREATED_KEYS, UPDATED_KEYS, NoteDates, note_dates, unreadable_date
from .frontmatter_yaml import dump

# Keys the compiler writes itself; a raw note's own values for them are not copied over.
OWN_KEYS = frozenset({"title", "type", "tags", "tag", "aliases", "alias", "created", "updated",
                      "date_source", "updated_source", "sources", "compiler", "source_deleted",
                      "summary", "provenance", "verification", "evidence",  # trust: never copied
                      "manual_links", "inferred_links", "summary_by"})   # the links API, enrich


@dataclass(frozen=True)
class NoteInput:
    """A raw note ready to compile: where it is, its text, hash, mtime and parsed page, and
    its git history (first, last commit date) when raw/ is in git."""

    path: str            # raw-relative path
    wiki_path: str       # wiki-relative path of the page to write
    text: str            # decoded, LF line endings
    sha256: str          # SHA-256 of the raw bytes
    mtime: float
    page: Any            # mindgraph.page.model.Page of the raw text
    history: tuple[dt.date, dt.date] | None = None

    def dates(self) -> NoteDates | None:
        """The note's real dates, or None when nothing dates it (the mtime never does)."""
        return note_dates(self.page.frontmatter, self.page.body, self.path, self.history)


@dataclass(frozen=True)
class CompiledPage:
    """A page ready to write."""

    wiki_path: str
    text: str


def page_frontmatter(note: NoteInput, *, title: str, type_: str, tags: list[str],
                     aliases: list[str], dates: NoteDates | None, compiler: str,
                     origin: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The frontmatter mapping in its fixed key order."""
    meta: dict[str, Any] = {"title": title, "type": type_, "tags": dedupe(tags),
                            "aliases": dedupe(aliases)}
    for key, value in (note.page.frontmatter or {}).items():
        if key not in OWN_KEYS and key not in meta and not _unreadable_date(key, value):
            meta[key] = value
    for key, value in (extra or {}).items():
        meta[key] = value
    if dates is not None:
        meta["created"] = dates.created.isoformat()
        meta["updated"] = dates.updated.isoformat()
        meta["date_source"] = dates.source
        if dates.updated_source != dates.source:
            meta["updated_source"] = dates.updated_source
    meta["provenance"] = {"origin": origin, "generator": compiler,
                          "sources": [{"path": note.path, "sha256": note.sha256}]}
    return meta


def _unreadable_date(key: str, value: Any) -> bool:
    """A date key (``date``, ``published``, …) whose value no reader takes for a date: not
    copied, so no page claims a date the timeline says it does not have (the ingest warns,
    ingest/frontmatter_warnings.py)."""
    lowered = key.lower()
    return (lowered in CREATED_KEYS or lowered in UPDATED_KEYS) and unreadable_date(value)


def render_page(meta: Mapping[str, Any], summary: str, body: str) -> str:
    """The page text: YAML frontmatter, the summary callout, then the body."""
    head = dump(meta)       # as yaml.dump writes it (frontmatter_yaml.py)
    parts = [f"---\n{head}---\n"]
    if summary:
        quoted = "\n".join(f"> {line}".rstrip() for line in summary.strip().split("\n"))
        parts.append(f"> [!summary]\n{quoted}\n")
    if body.strip():
        parts.append(body.strip("\n") + "\n")
    return "\n".join(parts)


def dedupe(items: list[str]) -> list[str]:
    """Drop empty and case-insensitively repeated strings, keeping the first spelling."""
    seen: set[str] = set()
    out = []
    for item in items:
        item = str(item).strip()
        if item and item.lower() not in seen:
            seen.add(item.lower())
            out.append(item)
    return out
