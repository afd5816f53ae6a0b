"""Why a workspace's wiki has no pages (ingest/no_pages.py), and whether it has any."""

from __future__ import annotations

from pathlib import Path

from ..ingest.no_pages import why_no_pages


def has_pages(wiki: Path) -> bool:
    """True as soon as one page is found in ``wiki`` (cheap for a full wiki too)."""
    return next(wiki.rglob("*.md"), None) is not None if wiki.is_dir() else False


__all__ = ["has_pages", "why_no_pages"]
