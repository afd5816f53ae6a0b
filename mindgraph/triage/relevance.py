"""Capture-time relevance: the instruction block handed to the agent that just created an item.

The agent knows why the person said what they said; mindgraph knows what the person cares
about now (the live Trunk Catalog). The block asks the agent to join the two: pick one trunk
and append one line to the item through ``update`` — so the reason is written while it is
still known, by the one who knows it.
"""

from __future__ import annotations

from .catalog import Catalog

WHY_PREFIX = "why:"


def relevance_instructions(catalog: Catalog, item_id: str, title: str) -> str:
    """The short block telling the calling agent how to file the new item under a trunk."""
    trunks = "\n".join(f"- {t.name}: {t.description}" if t.description else f"- {t.name}"
                       for t in catalog.trunks)
    return (f"Relevance: pick the one trunk below that the new item \"{title}\" serves (the "
            f"person's active projects, from {catalog.page}), then call update on item "
            f"{item_id} to append exactly one line:\n"
            f"{WHY_PREFIX} <trunk> — <one-sentence reason, in the person's words if you have "
            f"them>\n"
            f"If it serves none, append `{WHY_PREFIX} none — <reason>`.\n"
            f"Trunks:\n{trunks}")


__all__ = ["WHY_PREFIX", "relevance_instructions"]
