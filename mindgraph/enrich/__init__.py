"""Enrichment after compile: summaries for pages that lack one (several pages to one LLM call)
and links between similar pages, typed by an LLM or, offline, marked as similarity alone.

records.py keeps what was found under the state folder and says how ingest writes it into a
page; summaries.py and links.py find it; service.py runs a plan over a workspace.
"""

from .records import EnrichRecords, InferredLink
from .service import EnrichReport, EnrichService

__all__ = ["EnrichRecords", "EnrichReport", "EnrichService", "InferredLink"]
