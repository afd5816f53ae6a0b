"""Why a workspace's wiki has no pages, with what fixes it: a query answered from an empty
wiki ("No page matches", "0 pages") otherwise reads as if the notes did not say it, when they
were only never compiled (`init`, then `search` before `ingest`) — or when raw/ holds no
notes at all, where "run ingest" sent people to compile nothing."""

from __future__ import annotations

from ..config import Settings
from .scan import has_notes
from .state import STATE_FILENAME

COMPILED_NONE, NEVER_COMPILED, NO_NOTES = "compiled none", "never compiled", "no notes"
NOTE_SUFFIXES_SAID = ".md, .markdown or .txt"


def no_pages_cause(settings: Settings) -> str:
    """COMPILED_NONE (the last ingest compiled no page), NEVER_COMPILED (raw/ holds notes no
    ingest has seen) or NO_NOTES (raw/ holds none)."""
    if (settings.state_dir / STATE_FILENAME).is_file():
        return COMPILED_NONE
    return NEVER_COMPILED if has_notes(settings.raw_dir) else NO_NOTES


def why_no_pages(settings: Settings) -> str:
    """One sentence for a wiki with no pages, naming the raw folder: its notes were never
    compiled (run ingest), it holds no notes (put some there), or the last ingest compiled
    none (it says why)."""
    raw = settings.raw_dir
    cause = no_pages_cause(settings)
    if cause == COMPILED_NONE:
        return ("The wiki has no pages: the last ingest compiled none; `mindgraph ingest` "
                "lists why.")
    if cause == NEVER_COMPILED:
        return (f"The wiki has no pages yet: the notes in {raw} were never compiled. "
                f"Run `mindgraph ingest` first.")
    return (f"The wiki has no pages yet: {raw} holds no notes. Put Markdown files there "
            f"({NOTE_SUFFIXES_SAID}), then run `mindgraph ingest`.")


__all__ = ["no_pages_cause", "why_no_pages"]
