"""What ``mindgraph enrich`` found, kept under the state folder and written into pages when
they are compiled.

``enrich.json`` holds, by page: the summary a model wrote (with the model), the inferred links
(target, kind, cosine, judge), and a bounded memory of judged pairs keyed by the judge and both
pages' source hashes, so a re-run on unchanged pages asks the model nothing. Ingest applies
summaries and links to the compiled text like the documents API's overlays
(documents/overlay.py): the summary becomes the page's ``> [!summary]`` callout (``get`` and
search show it) with ``summary_by:`` in the frontmatter, the links ``inferred_links:``
(read back by page/links.py). raw/ is never touched, and a recompile keeps them.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write_json, sha256_text
from ..page.links import INFERRED_LINKS_KEY
from ..page.model import Page

FILENAME = "enrich.json"
VERSION = 1
SUMMARY_BY_KEY = "summary_by"


@dataclass(frozen=True)
class InferredLink:
    """One link enrichment found: ``source`` → ``target`` of ``kind``."""

    source: str
    target: str
    kind: str
    score: float
    judge: str

    def to_json(self) -> dict[str, Any]:
        """The frontmatter entry."""
        return {"to": self.target, "kind": self.kind, "score": round(self.score, 4),
                "judge": self.judge}


def source_hash(page: Page) -> str:
    """The hash a page's enrichment depends on: its raw note's (enrichment rewrites the page,
    not the note), else the page file's."""
    sources = (page.frontmatter.get("provenance") or {}).get("sources") \
        if isinstance(page.frontmatter.get("provenance"), dict) else None
    if isinstance(sources, list) and sources and isinstance(sources[0], dict) \
            and sources[0].get("sha256"):
        return str(sources[0]["sha256"])
    return page.content_hash


def pair_key(judge: str, a: Page, b: Page) -> str:
    """The memory key of a judged pair: the judge and both pages' source hashes, in order."""
    first, second = sorted([(a.path, source_hash(a)), (b.path, source_hash(b))])
    return sha256_text(json.dumps([judge, first, second]))[:32]


class EnrichRecords:
    """``enrich.json`` under the state folder: summaries, links and the judged-pair memory."""

    def __init__(self, state_dir: Path, memory: int = 50_000):
        self.path = Path(state_dir) / FILENAME
        self.memory = memory
        self.summaries: dict[str, dict[str, str]] = {}
        self.links: dict[str, list[dict[str, Any]]] = {}
        self.judged: OrderedDict[str, dict[str, Any]] = OrderedDict()
        if self.path.is_file():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = {}           # unreadable: enrichment is derived state, found again
            if isinstance(data, dict) and data.get("version") == VERSION:
                self.summaries = dict(data.get("summaries") or {})
                self.links = dict(data.get("links") or {})
                self.judged = OrderedDict(data.get("judged") or {})

    def remember(self, key: str, verdict: dict[str, Any]) -> None:
        """Keep a pair's verdict, forgetting the oldest beyond ``memory`` pairs."""
        self.judged[key] = verdict
        self.judged.move_to_end(key)
        while len(self.judged) > self.memory:
            self.judged.popitem(last=False)

    def recall(self, key: str) -> dict[str, Any] | None:
        """A remembered verdict (and mark it recently used), or None."""
        verdict = self.judged.get(key)
        if verdict is not None:
            self.judged.move_to_end(key)
        return verdict

    def set_links(self, source: str, links: list[InferredLink]) -> bool:
        """Replace the inferred links of ``source``; True when they changed."""
        entries = sorted((link.to_json() for link in links), key=lambda e: (e["to"], e["kind"]))
        if self.links.get(source, []) == entries:
            return False
        if entries:
            self.links[source] = entries
        else:
            self.links.pop(source, None)
        return True

    def save(self) -> None:
        """Write the records atomically."""
        atomic_write_json(self.path, {"version": VERSION, "summaries": self.summaries,
                                      "links": self.links, "judged": dict(self.judged)})

    # -- what ingest writes into a page ------------------------------------------------------
    def of(self, page: str) -> dict[str, Any]:
        """What enrichment sets for ``page`` ({} when nothing)."""
        out: dict[str, Any] = {}
        if page in self.summaries:
            out["summary"] = self.summaries[page]
        if self.links.get(page):
            out["links"] = self.links[page]
        return out


def apply_to_page(text: str, found: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(frontmatter additions, body) for a compiled page body ``text`` given what enrichment
    found for it (``EnrichRecords.of``): the summary callout replaced or added."""
    head: dict[str, Any] = {}
    summary = found.get("summary")
    if summary:
        head[SUMMARY_BY_KEY] = summary["model"]
        text = _with_summary(text, summary["text"])
    if found.get("links"):
        head[INFERRED_LINKS_KEY] = found["links"]
    return head, text


def without_summary(body: str) -> str:
    """``body`` without its leading ``> [!summary]`` callout."""
    return _with_summary(body, "")


def _with_summary(body: str, summary: str) -> str:
    """``body`` opening with ``> [!summary]`` holding ``summary`` (a leading callout of the
    compiler's replaced); none when ``summary`` is empty."""
    lines = body.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    end = start
    if start < len(lines) and lines[start].lstrip().lower().startswith("> [!summary]"):
        end = start + 1
        while end < len(lines) and lines[end].startswith(">"):
            end += 1
    quoted = "\n".join(f"> {line}".rstrip() for line in summary.strip().split("\n"))
    rest = "\n".join(lines[end:]).lstrip("\n")
    if not summary:
        return rest
    return "\n" + f"> [!summary]\n{quoted}\n" + ("\n" + rest if rest else "")


__all__ = ["EnrichRecords", "InferredLink", "apply_to_page", "pair_key", "source_hash"]
