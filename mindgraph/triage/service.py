"""Triage over a workspace: the live catalog, the completed items, their scores.

``workspace`` is the core (``Mindgraph``): its ``vault()``, ``embedding_provider()`` and
``settings`` (this package sits below the core and does not import it).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterable

from ..errors import MindgraphError, NotFoundError
from .catalog import Catalog, find_catalog
from .relevance import relevance_instructions
from .score import TriageReport, completed_items, completed_pages, score_llm, score_offline


def catalog_of(workspace: Any) -> Catalog:
    """The workspace's live Trunk Catalog (NotFoundError/InputError saying how to fix it)."""
    return find_catalog(workspace.vault().pages, workspace.settings.raw_dir)


def relevance_for(workspace: Any, item_id: str, title: str) -> str:
    """The instruction block for a newly created item (see relevance.py)."""
    return relevance_instructions(catalog_of(workspace), item_id, title)


def with_relevance(workspace: Any, created: dict[str, Any], *,
                   quiet_when_missing: bool = False) -> dict[str, Any]:
    """``created`` (a note app's answer to create: ``item`` with ``id`` and ``title``) with
    the capture-time instruction block as ``relevance``; a catalog that cannot be read says
    what to fix in ``relevance_error`` (the item is created either way), and a workspace
    without one says nothing when ``quiet_when_missing``."""
    try:
        created["relevance"] = relevance_for(workspace, created["item"]["id"],
                                             created["item"]["title"])
    except NotFoundError as exc:
        if not quiet_when_missing:
            created["relevance_error"] = str(exc)
    except MindgraphError as exc:
        created["relevance_error"] = str(exc)
    return created


def yesterday() -> dt.date:
    """The default first day of a triage: the morning's run scores what was done yesterday."""
    return dt.date.today() - dt.timedelta(days=1)


def triage(workspace: Any, since: dt.date, llm: Any = None,
           items: Iterable[Any] | None = None) -> TriageReport:
    """Items completed since ``since`` (the wiki's, or ``items`` from an adapter) scored
    against the catalog: by ``llm`` when given, else by similarity."""
    catalog = catalog_of(workspace)
    problems: list[str] = []
    found = completed_items(items, since) if items is not None else \
        completed_pages(workspace.vault().pages, since, problems)
    report = TriageReport(since, catalog.page, notes=problems)
    if not found:
        return report

    def offline(left: list) -> list:
        return score_offline(left, catalog, workspace.embedding_provider())

    if llm is None:
        report.scored = offline(found)
    else:
        report.scored, notes = score_llm(found, catalog, llm, offline)
        report.notes.extend(notes)
    return report


__all__ = ["catalog_of", "relevance_for", "triage"]
