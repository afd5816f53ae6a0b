"""Enrichment after compile: summaries for pages that lack one (several pages to one LLM call)
and links between similar pages, typed by an LLM or, offline, marked as similarity alone.

records.py keeps what was found under the state folder and says how ingest writes it into a
page; summaries.py and links.py find it; service.py runs a plan over a workspace.
"""


from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["EnrichRecords", "EnrichReport", "EnrichService", "InferredLink"]
_HOME = {"EnrichRecords": "records", "InferredLink": "records", "EnrichReport": "service",
         "EnrichService": "service"}


def __getattr__(name: str) -> Any:
    """Import on first use: ingest reads enrich.records for every run, and importing the
    service with it (the keyword index, SciPy) cost a no-op ingest 0.4 s of its start-up."""
    if name in _HOME:
        return getattr(import_module(f".{_HOME[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
