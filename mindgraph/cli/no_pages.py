"""Why a workspace's wiki has no pages, with the command that fixes it: a query answered from
an empty wiki ("No page matches", "0 pages") otherwise reads as if the notes did not say it,
when they were only never compiled (`init`, then `search` before `ingest`)."""

from __future__ import annotations

from pathlib import Path

from ..config import Settings
from ..ingest.scan import has_notes
from ..ingest.state import STATE_FILENAME


def why_no_pages(settings: Settings) -> str:
    """One sentence for a wiki with no pages: raw/ holds notes never compiled (run ingest),
    raw/ holds no notes (put some there), or the last ingest compiled none (it says why)."""
    raw = settings.raw_dir
    if (settings.state_dir / STATE_FILENAME).is_file():
        return ("The wiki has no pages: the last ingest compiled none; `mindgraph ingest` "
                "lists why.")
    if has_notes(raw):
        return (f"The wiki has no pages yet: the notes in {raw} were never compiled. "
                f"Run `mindgraph ingest` first.")
    return (f"The wiki has no pages yet: {raw} holds no notes. Put Markdown files there "
            f"(.md, .markdown or .txt), then run `mindgraph ingest`.")


def has_pages(wiki: Path) -> bool:
    """True as soon as one page is found in ``wiki`` (cheap for a full wiki too)."""
    return next(wiki.rglob("*.md"), None) is not None if wiki.is_dir() else False
