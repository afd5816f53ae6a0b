"""The shape every compiled page shares, whichever compiler wrote it.

::

    ---
    title, type, tags, aliases       what the page is about
    ...                              the raw note's other frontmatter keys, kept as written
    created, updated                 ISO dates (raw frontmatter, else a date in the file name,
                                     else the raw file's modification time)
    sources: [{path, sha256}]        the raw note(s) it was compiled from
    compiler                         provider, model and prompt version (or offline:vN)
    ---
    > [!summary]
    > A short summary.

    The body: sections normalised, wikilinks added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import yaml

# libyaml's emitter when present (5x faster); its output matches the pure-Python one here.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

# Keys the compiler writes itself; a raw note's own values for them are not copied over.
OWN_KEYS = frozenset({"title", "type", "tags", "tag", "aliases", "alias", "created", "updated",
                      "sources", "compiler", "source_deleted", "summary"})


@dataclass(frozen=True)
class NoteInput:
    """A raw note ready to compile: where it is, its text, hash, mtime and parsed page."""

    path: str            # raw-relative path
    wiki_path: str       # wiki-relative path of the page to write
    text: str            # decoded, LF line endings
    sha256: str          # SHA-256 of the raw bytes
    mtime: float
    page: Any            # mindgraph.page.model.Page of the raw text


@dataclass(frozen=True)
class CompiledPage:
    """A page ready to write."""

    wiki_path: str
    text: str


def page_frontmatter(note: NoteInput, *, title: str, type_: str, tags: list[str],
                     aliases: list[str], created: str, updated: str, compiler: str,
                     extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The frontmatter mapping in its fixed key order."""
    meta: dict[str, Any] = {"title": title, "type": type_, "tags": dedupe(tags),
                            "aliases": dedupe(aliases)}
    for key, value in (note.page.frontmatter or {}).items():
        if key not in OWN_KEYS and key not in meta:
            meta[key] = value
    for key, value in (extra or {}).items():
        meta[key] = value
    meta["created"] = created
    meta["updated"] = updated
    meta["sources"] = [{"path": note.path, "sha256": note.sha256}]
    meta["compiler"] = compiler
    return meta


def render_page(meta: Mapping[str, Any], summary: str, body: str) -> str:
    """The page text: YAML frontmatter, the summary callout, then the body."""
    head = yaml.dump(dict(meta), Dumper=_DUMPER, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=10_000)
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
