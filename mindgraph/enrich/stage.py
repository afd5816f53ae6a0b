"""Enrichment as a stage after ingest (``enrich.after_ingest``, off by default): the offline
part (similarity links, no LLM call) or, with ``enrich.llm_after_ingest``, the LLM's too.

`mindgraph ingest` and the watcher call ``enrich_after`` once their run compiled something; a
workspace without vectors yet is skipped (its first `embed` is a deliberate step), said in the
returned note.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from .service import EnrichReport, EnrichService


def enrich_after(workspace: Any) -> tuple[EnrichReport | None, str]:
    """(the report, "") after enriching, or (None, why not)."""
    settings = workspace.settings.enrich
    if not settings.after_ingest:
        return None, ""
    llm = link_llm = None
    if settings.llm_after_ingest:
        from ..providers.llm.factory import make_llm_provider

        llm = make_llm_provider(workspace.settings)
        link_llm = make_llm_provider(workspace.settings, settings.link_temperature)
    try:
        return EnrichService(workspace, llm, link_llm).run(summaries=llm is not None), ""
    except InputError as exc:
        return None, f"enrich skipped: {exc}"


__all__ = ["enrich_after"]
