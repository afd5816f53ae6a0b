"""The usage log: one JSON line per query, in a file that rotates, and its summary.

Each line: time, interface (cli / rest / mcp), kind, query, intent, top results,
result count, latency in ms. ``kind`` is "query" for a search (a query that finds nothing is a
gap in the wiki) and "lookup" for reading or reporting on something named (a page, a path
between two pages, coverage, stats): lookups are not queries in the summary's top and
zero-result lists. Lines without a kind (older logs) are queries. Lines are appended with one ``write`` on a file opened in append mode, so
concurrent writers (threads or processes) never interleave within a line. When the file grows
past ``max_bytes`` it is renamed to ``<name>.1`` (older ones shift up to ``keep``), under a
lock file between processes (``<name>.lock``), so two servers never rotate it twice.
"""

from __future__ import annotations

import io
import json
import os
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from .fsutil import append_private, exclusive_lock, open_regular

_LOCK = threading.Lock()


@dataclass(frozen=True)
class UsageLog:
    """Where usage lines go; a log with an empty path records nothing."""

    path: Path | None
    max_bytes: int = 5_000_000
    keep: int = 3
    identity: str | None = None     # one identity's log (scopes/): its lines, marked so

    def record(self, interface: str, query: str, *, intent: str | None = None,
               kind: str = "query", results: Iterable[str] = (), result_count: int = 0,
               latency_ms: float = 0.0, **extra: Any) -> None:
        """Append one line; never raises (logging must not break a query)."""
        if self.path is None:
            return
        top = list(results)[:5]
        line = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "interface": interface,
                "kind": kind, "query": query, "intent": intent, "top": top,
                "results": result_count, "latency_ms": round(latency_ms, 2), **extra}
        if self.identity is not None:
            line["identity"] = self.identity
        data = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            # the file lock: serve processes sharing a state folder must not both rotate
            with _LOCK, exclusive_lock(self.path.with_name(f"{self.path.name}.lock")):
                self._rotate_if_needed(len(data))
                append_private(self.path, data)     # the queries agents asked: 0600
        except OSError:
            pass

    def _rotate_if_needed(self, incoming: int) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size + incoming <= self.max_bytes:
            return
        for i in range(self.keep - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{i}")
            if older.exists():
                os.replace(older, self.path.with_name(f"{self.path.name}.{i + 1}"))
        os.replace(self.path, self.path.with_name(f"{self.path.name}.1"))

    def lines(self) -> Iterator[dict[str, Any]]:
        """Every recorded line (only ``identity``'s, when set), oldest file first;
        unparsable lines are skipped."""
        if self.path is None:
            return
        files = [self.path.with_name(f"{self.path.name}.{i}") for i in range(self.keep, 0, -1)]
        for file in [*files, self.path]:
            if not file.exists():
                continue
            try:
                handle = io.TextIOWrapper(open_regular(file), encoding="utf-8",
                                          errors="replace")
            except OSError:     # a FIFO or an unreadable file is no usage log
                continue
            with handle:
                for raw in handle:
                    try:
                        item = json.loads(raw)
                    except json.JSONDecodeError:
                        continue
                    if isinstance(item, dict) and "query" in item and (
                            self.identity is None or item.get("identity") == self.identity):
                        yield item


def summarise(lines: Iterable[dict[str, Any]], top: int = 10,
              slow_ms: float = 200.0) -> dict[str, Any]:
    """Top queries, zero-result queries, slow calls, counts per interface and kind, latency
    (top and zero-result over queries only, not lookups)."""
    items = list(lines)
    latencies = [float(i.get("latency_ms") or 0) for i in items]
    searches = [i for i in items if i.get("kind", "query") == "query"]
    queries = Counter(str(i["query"]).strip().lower() for i in searches)
    zero = Counter(str(i["query"]).strip().lower() for i in searches if not i.get("results"))
    slow = sorted((i for i in items if float(i.get("latency_ms") or 0) >= slow_ms),
                  key=lambda i: -float(i.get("latency_ms") or 0))[:top]
    return {
        "queries": len(searches),
        "lookups": len(items) - len(searches),
        "interfaces": dict(Counter(str(i.get("interface")) for i in items).most_common()),
        "kinds": dict(Counter(str(i.get("kind", "query")) for i in items).most_common()),
        "intents": dict(Counter(str(i.get("intent")) for i in items).most_common()),
        "latency_ms": {"median": round(statistics.median(latencies), 2) if latencies else 0,
                       "p95": round(_percentile(latencies, 95), 2) if latencies else 0},
        "top_queries": [{"query": q, "count": n} for q, n in queries.most_common(top)],
        "zero_result_queries": [{"query": q, "count": n} for q, n in zero.most_common(top)],
        "slow_queries": [{"query": i["query"], "latency_ms": i.get("latency_ms"),
                          "interface": i.get("interface"), "time": i.get("time")}
                         for i in slow],
    }


def _percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]
