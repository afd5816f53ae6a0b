"""Capture-time relevance and triage against the person's Trunk Catalog.

catalog.py reads the catalog (an agent-data note, ``type: trunk-catalog``); relevance.py
writes the instruction block an agent gets with a new item; score.py scores completed items
0–3 against the trunks (LLM, batched; offline by similarity); service.py runs them over a
workspace.
"""

from .catalog import CATALOG_TYPE, Catalog, Trunk
from .relevance import relevance_instructions
from .score import TriageReport
from .service import catalog_of, relevance_for, triage

__all__ = ["CATALOG_TYPE", "Catalog", "TriageReport", "Trunk", "catalog_of",
           "relevance_for", "relevance_instructions", "triage"]
