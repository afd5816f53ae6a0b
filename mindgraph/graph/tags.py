"""Shared-tag relations kept as a tag → pages index, never as a clique of edges per tag.

Two pages that share a tag are related (an INFERRED edge keyed ``shared_tag``), but a tag on
thousands of pages would make millions of edges: at 100,000 notes 2.3 million of them took
most of the graph's build time and memory. ``TagIndex`` keeps only who carries which tag and
answers a page's tag neighbours on demand, with the same rule the edges followed: a generic
tag (on more than ``generic_tag_share`` of the pages and more than GENERIC_MIN_PAGES pages)
relates nobody; a tag on at most ``cap + 1`` pages relates all of them; a larger one puts its
pages, in path order, on a ring where each page is related to its ``cap // 2`` next and
previous pages. ``pair_codes`` gives every related pair at once (NumPy) for community
detection.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Iterator

GENERIC_MIN_PAGES = 5   # in a tiny vault a tag on 3 of 5 pages still says something
INFERRED = "inferred"
SHARED_TAG = "shared_tag"


def inferred_confidence(shared_tags: int) -> float:
    """Confidence of a shared-tag edge: 0.5 for one tag, 0.75 for two, at most 0.9."""
    return min(0.9, 1.0 - 0.5 ** shared_tags)


def shared_tag_data(names: list[str]) -> dict[str, Any]:
    """The attributes of the shared-tag edge between two pages sharing the tags ``names``."""
    return {"kind": INFERRED, "relation": SHARED_TAG,
            "confidence": inferred_confidence(len(names)), "tags": names,
            "label": "tags: " + ", ".join("#" + t for t in names)}


class TagIndex:
    """Which page carries which (lower-case) tag, and the shared-tag relations that follow."""

    def __init__(self, cap: int, generic_share: float):
        self.cap = cap
        self.generic_share = generic_share
        self.tags: dict[str, frozenset[str]] = {}                # page → tags
        self.members: dict[str, set[str]] = defaultdict(set)     # tag → pages
        self.generic: set[str] = set()
        self._order: dict[str, tuple[list[str], dict[str, int]]] = {}   # ring tags, sorted

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_order"] = {}       # rebuilt on demand: cheaper than pickling it
        state["members"] = dict(self.members)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.members = defaultdict(set, self.members)

    def drop(self, path: str) -> set[str]:
        """Forget the tags of ``path``; returns them."""
        dropped = set(self.tags.pop(path, ()))
        for tag in dropped:
            self.members[tag].discard(path)
            if not self.members[tag]:
                del self.members[tag]
            self._order.pop(tag, None)
        return dropped

    def put(self, path: str, tags: frozenset[str]) -> None:
        """Record the tags of a page that has none recorded."""
        self.tags[path] = tags
        for tag in tags:
            self.members[tag].add(path)
            self._order.pop(tag, None)

    def refresh_generic(self, n_pages: int) -> None:
        """Recompute which tags are generic for a graph of ``n_pages`` pages."""
        limit = max(self.generic_share * n_pages, GENERIC_MIN_PAGES)
        self.generic = {tag for tag, members in self.members.items() if len(members) > limit}

    def _relating(self, tag: str) -> bool:
        return tag not in self.generic and len(self.members.get(tag, ())) >= 2

    def _ring(self, tag: str) -> tuple[list[str], dict[str, int]]:
        found = self._order.get(tag)
        if found is None:
            ordered = sorted(self.members[tag])
            found = self._order[tag] = (ordered, {p: i for i, p in enumerate(ordered)})
        return found

    def _tag_neighbours(self, tag: str, path: str) -> Iterable[str]:
        members = self.members[tag]
        n = len(members)
        if n - 1 <= self.cap:
            return (p for p in members if p != path)
        ordered, position = self._ring(tag)
        i = position[path]
        reach = max(1, self.cap // 2)
        return [ordered[(i + s) % n] for s in range(1, reach + 1)] + \
               [ordered[(i - s) % n] for s in range(1, reach + 1)]

    def neighbours(self, path: str) -> dict[str, list[str]]:
        """The pages related to ``path`` by shared tags, each with the (sorted) tags shared."""
        found: dict[str, list[str]] = {}
        for tag in sorted(self.tags.get(path, ())):
            if not self._relating(tag):
                continue
            for other in self._tag_neighbours(tag, path):
                found.setdefault(other, []).append(tag)
        return found

    def pairs(self) -> Iterator[tuple[str, str, list[str]]]:
        """Every related pair once (smaller path first) with its shared tags, in no order."""
        for path in self.tags:
            for other, names in self.neighbours(path).items():
                if path < other:
                    yield path, other, names

    def pair_count(self) -> int:
        """How many pairs of pages share a (relating) tag."""
        return sum(1 for path in self.tags for other in self.neighbours(path) if path < other)

    def pair_codes(self, index: dict[str, int]) -> tuple[Any, Any]:
        """Every related pair as ``a * n + b`` (a < b, page indices from ``index``; sorted,
        unique) and the number of tags each pair shares, as NumPy arrays."""
        import numpy as np

        n = len(index)
        chunks = []
        reach = max(1, self.cap // 2)
        for tag, members in self.members.items():
            if not self._relating(tag):
                continue
            # sorted ids are the members in path order: ``index`` numbers sorted paths
            ids = np.sort(np.fromiter((index[p] for p in members), np.int64, len(members)))
            m = len(ids)
            if m - 1 <= self.cap:
                a, b = np.triu_indices(m, 1)
                left, right = ids[a], ids[b]
            else:
                base = np.repeat(np.arange(m), reach)
                step = np.tile(np.arange(1, reach + 1), m)
                left, right = ids[base], ids[(base + step) % m]
            lo, hi = np.minimum(left, right), np.maximum(left, right)
            chunks.append(np.unique(lo * n + hi))    # one tag counts once per pair
        if not chunks:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.unique(np.concatenate(chunks), return_counts=True)
