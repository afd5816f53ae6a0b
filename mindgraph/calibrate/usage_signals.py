"""What the usage log says was useful: the pages read after each query.

A query line (``kind`` "query") is followed, in the same interface, by lookups that read a
page (``get_page``, ``get_section``, ``list_sections``, ``extract``, or the CLI's and REST's
page reads): those pages answered it. A query asked again (same words, case and spacing
aside) is one query: what was read after any of its askings counts. Lookups more than
FOLLOW_UP_S after the query, or after another query, are not about it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterable

READS = frozenset({"get_page", "get_section", "list_sections", "extract", "get", "page",
                   "section"})
FOLLOW_UP_S = 600


@dataclass
class UsedQuery:
    """A logged query and the pages read after it."""

    query: str
    asked: int = 0
    used: set[str] = field(default_factory=set)
    top: tuple[str, ...] = ()       # what the last asking answered (first five)


def used_queries(lines: Iterable[dict[str, Any]]) -> list[UsedQuery]:
    """The logged queries with at least one page read after them, in first-asked order."""
    found: dict[str, UsedQuery] = {}
    last: dict[str, tuple[UsedQuery, dt.datetime | None]] = {}   # interface → latest query
    for line in lines:
        interface = str(line.get("interface", ""))
        when = _time(line.get("time"))
        kind = line.get("kind", "query")
        if kind == "query" and not line.get("error"):
            key = " ".join(str(line.get("query", "")).lower().split())
            if not key:
                continue
            entry = found.setdefault(key, UsedQuery(str(line["query"]).strip()))
            entry.asked += 1
            entry.top = tuple(str(p) for p in line.get("top") or ())[:5]
            last[interface] = (entry, when)
        elif kind == "lookup" and line.get("intent") in READS and interface in last:
            entry, asked_at = last[interface]
            if when and asked_at and (when - asked_at).total_seconds() > FOLLOW_UP_S:
                continue
            entry.used.update(str(p) for p in line.get("top") or ())
    return [q for q in found.values() if q.used]


def _time(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.strptime(value, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None
