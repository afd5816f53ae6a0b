"""The API's overlays and manual links, applied to a page when it is compiled.

Ingest asks ``CompileOverlay`` two things per note: a digest of what the API set for its page
(part of the compile key, so setting a title or adding a link recompiles that one note, and
a recompile without a change costs nothing), and the compiled text with that applied: title,
tags and type replaced in the frontmatter, manual links written as ``manual_links`` (read
back by page/links.py as links of syntax "manual"). ``mindgraph enrich``'s summaries and
inferred links (enrich/records.py) are applied the same way. raw/ is never touched. A page
that moves (``follow``) takes its overlay and its manual links along, in this run and in the
records.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path

import yaml

from ..enrich.records import EnrichRecords, apply_to_page
from ..fsutil import sha256_text
from ..page.links import MANUAL_LINKS_KEY
from .records import DocumentRecords, ManualLink, Overlay, move_records

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class CompileOverlay:
    """What the API set, by page, as read once at the start of an ingest run."""

    def __init__(self, overlays: dict[str, Overlay], links: list[ManualLink],
                 records: DocumentRecords | None = None,
                 enriched: EnrichRecords | None = None):
        self.records = records
        self.enriched = enriched
        self._set(overlays, links)

    def _set(self, overlays: dict[str, Overlay], links: list[ManualLink]) -> None:
        self.overlays = overlays
        self._all = list(links)
        self.links: dict[str, list[ManualLink]] = defaultdict(list)
        for link in sorted(links, key=lambda x: (x.source, x.target, x.kind)):
            self.links[link.source].append(link)

    @classmethod
    def load(cls, state_dir: Path) -> "CompileOverlay":
        """The overlays and links stored under ``state_dir`` (none: an overlay that does
        nothing)."""
        records = DocumentRecords(state_dir)
        return cls(records.overlays(), list(records.links().values()), records,
                   EnrichRecords(state_dir))

    def follow(self, old: str, new: str, save: bool) -> None:
        """Page ``old`` moved to ``new``: what the API set for it (and links to it) now
        belongs to ``new`` for this run's compile keys and texts, and with ``save`` in the
        stored records too (a dry run saves nothing)."""
        if old not in self.overlays and not any(old in (x.source, x.target)
                                                for x in self._all):
            return
        if save and self.records is not None:
            self.records.move_page(old, new)
        overlays, links = move_records({p: o.to_json() for p, o in self.overlays.items()},
                                       {x.id: asdict(x) for x in self._all}, old, new)
        self._set({p: Overlay(**{**o, "tags": None if o.get("tags") is None
                                 else tuple(o["tags"])}) for p, o in overlays.items()},
                  [ManualLink(**x) for x in links.values()])

    def digest(self, page: str) -> str:
        """"" when the API set nothing for ``page``, else a digest of what it set."""
        overlay, links = self.overlays.get(page), self._link_entries(page)
        enriched = self.enriched.of(page) if self.enriched else {}
        if (overlay is None or overlay.is_empty()) and not links and not enriched:
            return ""
        found = {"overlay": overlay.to_json() if overlay else {}, "links": links}
        if enriched:
            found["enriched"] = enriched
        return sha256_text(json.dumps(found, sort_keys=True))

    def apply(self, page: str, text: str) -> str:
        """``text`` (a compiled page) with the overlay and manual links of ``page``."""
        overlay, links = self.overlays.get(page), self._link_entries(page)
        enriched = self.enriched.of(page) if self.enriched else {}
        if (overlay is None or overlay.is_empty()) and not links and not enriched:
            return text
        if not text.startswith("---\n"):
            text = "---\n---\n" + text
        end = text.find("\n---\n", 3)
        if end == -1:
            return text         # not our shape: leave it (compilers always write one)
        head = yaml.load(text[4:end + 1], Loader=_LOADER) or {}
        if not isinstance(head, dict):
            return text
        if overlay is not None:
            head.update(overlay.to_json())
        if links:
            head[MANUAL_LINKS_KEY] = links
        added, body = apply_to_page(text[end + 5:], enriched)
        head.update(added)
        dumped = yaml.dump(head, Dumper=_DUMPER, sort_keys=False, allow_unicode=True,
                           default_flow_style=False, width=10_000)
        return f"---\n{dumped}---\n" + body

    def _link_entries(self, page: str) -> list[dict[str, str]]:
        return [{"to": x.target, "kind": x.kind, "context": x.context, "id": x.id}
                for x in self.links.get(page, ())]


__all__ = ["CompileOverlay"]
