"""Embedded notes for the keyword index: what each section embeds, and who depends on whom.

A section holding ``![[Note#^id]]`` is indexed with the text the embed shows
(``page.transclude``), the target found by the graph's link resolution (``LinkResolver``:
case-insensitive, the path, relative to the page, then a unique or nearest file name). So the
embedding page's entry is stale whenever its target changes, and when a page is added or
removed whose file name an embed names (the embed may now resolve elsewhere, or at all).
``EmbedLinks`` keeps both indexes: resolved target → embedding pages, and page key → pages
with an embed carrying that key (``page.resolve.link_keys``), so ``KeywordIndex.apply``
re-indexes those dependents too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..page.model import Page
from ..page.resolve import LinkResolver, link_keys, page_key
from ..page.transclude import embedded_text, page_embeds


@dataclass(frozen=True)
class Embedded:
    """The text one embed shows, and where it comes from."""

    target: str          # the embedded page's path
    label: str           # as written: "Security and privacy#^sync-geo-regions"
    text: str

    @property
    def name(self) -> str:
        """The embedded page's file name without ".md" ("Security and privacy")."""
        stem = self.target.rsplit("/", 1)[-1]
        return stem[:-3] if stem.lower().endswith(".md") else stem


class EmbedLinks:
    """Embeds of the indexed pages, resolved; the dependents of a change."""

    def __init__(self, max_chars: int):
        self.max_chars = max_chars
        self.targets: dict[str, frozenset[str]] = {}          # page → pages it embeds
        self._embedders: defaultdict[str, set[str]] = defaultdict(set)
        self._keys: defaultdict[str, set[str]] = defaultdict(set)   # page key → embedders
        self._page_keys: dict[str, frozenset[str]] = {}        # embedder → its keys
        self._resolver: LinkResolver | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_resolver"] = None          # made again from the pages when needed
        return state

    def paths_changed(self) -> None:
        """Pages were added or removed: links resolve anew."""
        self._resolver = None

    def sections(self, page: Page, pages: Mapping[str, Page]
                 ) -> dict[str, list[Embedded]]:
        """Section id → what its embeds show; records the page's dependencies."""
        self.forget(page.path)
        embeds = page_embeds(page)
        if not embeds:
            return {}
        if self._resolver is None:
            self._resolver = LinkResolver(pages.keys())
        out: dict[str, list[Embedded]] = {}
        targets: set[str] = set()
        keys = frozenset(k for link in embeds for k in link_keys(link.target, page.path))
        self._page_keys[page.path] = keys
        for key in keys:
            self._keys[key].add(page.path)
        for link in embeds:
            res = self._resolver.resolve(link, page.path)
            if res.status != "resolved" or res.target is None or res.target == page.path:
                continue
            targets.add(res.target)
            target = pages.get(res.target)
            text = embedded_text(target, link, self.max_chars) if target else None
            if text:
                label = link.target + (f"#^{link.block}" if link.block else
                                       f"#{link.heading}" if link.heading else "")
                out.setdefault(link.section_id, []).append(Embedded(res.target, label, text))
        if targets:
            self.targets[page.path] = frozenset(targets)
            for target in targets:
                self._embedders[target].add(page.path)
        return out

    def forget(self, path: str) -> None:
        """Drop what ``path`` embedded."""
        for target in self.targets.pop(path, ()):
            self._embedders[target].discard(path)
        for key in self._page_keys.pop(path, ()):
            self._keys[key].discard(path)

    def dependents(self, touched: Iterable[str], added_or_removed: Iterable[str]) -> set[str]:
        """Pages whose embedded text may have changed: they embed a touched page, or embed a
        name that an added or removed page carries."""
        out: set[str] = set()
        for path in touched:
            out |= self._embedders.get(path, set())
        for path in added_or_removed:
            out |= self._keys.get(page_key(path), set())
        return out
