"""`stats`: what the workspace holds — pages, sections, links by kind and resolution, tags,
and the raw notes by ingest state."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Callable

from ..page.vault import Vault
from .scan import has_notes
from .state import STATE_FILENAME, IngestState


def workspace_stats(vault: Vault, state_dir: Path,
                    raw_visible: Callable[[str], bool] | None = None,
                    trust: Any = None, raw_dir: Path | None = None) -> dict[str, Any]:
    """The counts of ``vault`` and of the raw notes in the ingest state (only those
    ``raw_visible`` accepts, when given: a scoped view counts what it sees), with ``trust``,
    the pages' trust mix. ``raw.ingested`` says whether an ingest ever ran; with no note
    recorded and ``raw_dir`` given (not to a scoped view), ``raw.has_notes`` whether raw/
    holds any note at all."""
    pages = vault.pages
    links: Counter[str] = Counter()
    resolution: Counter[str] = Counter()
    for _, link, result in vault.resolved_links():
        links[link.syntax if link.relation == "wikilink" else link.relation] += 1
        resolution[result.status] += 1
    tags: Counter[str] = Counter(t.lower() for p in pages.values() for t in p.tags)
    state = IngestState.load(state_dir / STATE_FILENAME)
    files = {path: record for path, record in state.files.items()
             if raw_visible is None or raw_visible(path)}
    raw_states = Counter(record.status for record in files.values())
    raw: dict[str, Any] = {"files": len(files), "by_state": dict(raw_states.most_common()),
                           "ingested": (state_dir / STATE_FILENAME).is_file()}
    if not files and raw_dir is not None and raw_visible is None:
        raw |= {"folder": str(raw_dir), "has_notes": has_notes(raw_dir)}
    return {"wiki": str(vault.root), "pages": len(pages),
            "sections": sum(len(p.sections) for p in pages.values()),
            "links": {"total": sum(links.values()), "by_kind": dict(links.most_common()),
                      "by_resolution": dict(resolution.most_common())},
            "tags": {"distinct": len(tags),
                     "top": [{"tag": t, "pages": n} for t, n in tags.most_common(10)]},
            "problems": len(vault.problems), "trust": trust,
            "raw": raw}
