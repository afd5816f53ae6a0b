"""A note app's own search as one more retriever of hybrid search (``sources.native``).

When a configured adapter offers ``search_by_query(query, limit)`` (adapters/base.py), hybrid
search asks it in parallel with keyword and vector retrieval, and fuses its ranking like
theirs, with ``retrieval.native_weight`` (0.2) beside their weights. The app's items are
found again as pages through the frontmatter `pull` wrote into their raw notes (``app`` and
``item_id``): an item not pulled and compiled yet has no page and is left out. Only the note
`pull` filed for the item counts (its raw path is in that app's pull manifest), or a page
written in wiki/ by hand: any note may carry that frontmatter, and an agent's upload that did
was taken for the owner's item, its rank telling the agent which words the owner's task holds.

A slow app never holds up an answer: its search runs on its own threads, and whatever has not
come back ``retrieval.native_timeout_s`` (1 s) after the search started is dropped, the answer
saying so in ``degradation`` (and, being degraded, it is not kept in the answer cache). An app
that fails is reported the same way. Without such an adapter nothing changes.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from typing import Any, Callable, Collection, Mapping, Sequence

from ..errors import failure_note
from ..page.model import Page
from ..page.rawlines import raw_source

NAME = "native"
_POOL = cf.ThreadPoolExecutor(max_workers=2, thread_name_prefix="mindgraph-native")


def app_url(page: Page) -> str | None:
    """The deep link into the app a page was pulled from (its frontmatter ``url``), if any."""
    url = page.frontmatter.get("url") if page.frontmatter.get("item_id") else None
    return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None


class NativeSearch:
    """The ``search_by_query`` of each adapter (name, adapter) that has one; ``filed(name)``
    gives the raw notes `pull` filed for that app (None: every page with the frontmatter)."""

    def __init__(self, apps: Sequence[tuple[str, Any]], weight: float = 0.2,
                 timeout_s: float = 1.0,
                 filed: Callable[[str], Collection[str]] | None = None):
        self.apps = list(apps)
        self.weight = weight
        self.timeout_s = timeout_s
        self.filed = filed

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
            degradation.append(failure_note(f"native search of {names}", exc,
                                            "results come from the other retrievers"))
            return None
        if not page_of:
            page_of.update(_pages_by_item(pages, self.filed))
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


def _pages_by_item(pages: Mapping[str, Page],
                   filed: Callable[[str], Collection[str]] | None = None
                   ) -> dict[tuple[str, str], str]:
    """(app, item id) → the page of the item: the one compiled from the note `pull` filed
    for it, or one with no raw note (written in wiki/, where agents cannot write)."""
    found: dict[tuple[str, str], str] = {("", ""): ""}     # never empty: built once
    notes: dict[str, Collection[str]] = {}
    for path, page in pages.items():
        item_id = page.frontmatter.get("item_id")
        if item_id is None:
            continue
        app = str(page.frontmatter.get("app", ""))
        source = raw_source(page)
        if filed is not None and source:
            if app not in notes:
                notes[app] = frozenset(filed(app))
            if source not in notes[app]:
                continue      # any note may say item_id: only pull's own note is the item
        found.setdefault((app, str(item_id)), path)
    return found
