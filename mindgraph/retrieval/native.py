"""A note app's own search as one more retriever of hybrid search (``sources.native``).

When a configured adapter offers ``search_by_query(query, limit)`` (adapters/base.py), hybrid
search asks it in parallel with keyword and vector retrieval, and fuses its ranking like
theirs, with ``retrieval.native_weight`` (0.2) beside their weights. The app's items are
found again as pages through the frontmatter `pull` wrote into their raw notes (``app`` and
``item_id``): an item not pulled and compiled yet has no page and is left out.

A slow app never holds up an answer: its search runs on its own threads, and whatever has not
come back ``retrieval.native_timeout_s`` (1 s) after the search started is dropped, the answer
saying so in ``degradation`` (and, being degraded, it is not kept in the answer cache). An app
that fails is reported the same way. Without such an adapter nothing changes.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from typing import Any, Mapping, Sequence

from ..page.model import Page

NAME = "native"
_POOL = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="mindgraph-native")


def app_url(page: Page) -> str | None:
    """The deep link into the app a page was pulled from (its frontmatter ``url``), if any."""
    url = page.frontmatter.get("url") if page.frontmatter.get("item_id") else None
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None


class NativeSearch:
    """The ``search_by_query`` of each adapter (name, adapter) that has one."""

    def __init__(self, apps: Sequence[tuple[str, Any]], weight: float = 0.2,
                 timeout_s: float = 1.0):
        self.apps = list(apps)
        self.weight = weight
        self.timeout_s = timeout_s

    def start(self, query: str, limit: int) -> "cf.Future[list[tuple[str, str, float]]]":
        """Ask every app, on the native search's own threads."""
        return _POOL.submit(self._search, query, limit)

    def finish(self, job: "cf.Future[list[tuple[str, str, float]]]", started: float,
               pages: Mapping[str, Page], page_of: dict[tuple[str, str], str],
               degradation: list[str]) -> list[tuple[str, float, None]] | None:
        """The ranking as (page, score, None), or None with a note when the apps were too
        slow or failed. ``page_of`` memoises (app, item id) → page path over ``pages``."""
        left = self.timeout_s - (time.perf_counter() - started)
        names = ", ".join(name for name, _ in self.apps)
        try:
            found = job.result(timeout=max(0.0, left))
        except cf.TimeoutError:
            degradation.append(f"native search of {names} timed out after "
                               f"{self.timeout_s:g} s (retrieval.native_timeout_s); results "
                               f"come from the other retrievers")
            return None
        except Exception as exc:   # an app that fails never fails the search
            degradation.append(f"native search of {names} failed ({type(exc).__name__}: "
                               f"{exc}); results come from the other retrievers")
            return None
        if not page_of:
            page_of.update(_pages_by_item(pages))
        ranking: list[tuple[str, float, None]] = []
        seen: set[str] = set()
        for app, item_id, score in found:
            path = page_of.get((app, item_id))
            if path is not None and path not in seen:
                seen.add(path)
                ranking.append((path, score, None))
        return ranking

    def _search(self, query: str, limit: int) -> list[tuple[str, str, float]]:
        hits = [(name, str(item.id), float(score)) for name, adapter in self.apps
                for item, score in adapter.search_by_query(query, limit)]
        hits.sort(key=lambda hit: -hit[2])
        return hits


def _pages_by_item(pages: Mapping[str, Page]) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {("", ""): ""}     # never empty: built once
    for path, page in pages.items():
        item_id = page.frontmatter.get("item_id")
        if item_id is not None:
            found.setdefault((str(page.frontmatter.get("app", "")), str(item_id)), path)
    return found
