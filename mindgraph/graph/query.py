"""Questions asked of the knowledge graph: neighbours, backlinks, shortest paths, hubs,
orphans and broken links. Pages are named by path here; ``page.lookup.find_page`` turns a
title, alias or file name into a path.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Literal


from ..errors import NotFoundError
from .build import EXTRACTED, INFERRED, SHARED_TAG, BrokenLink, KnowledgeGraph

Direction = Literal["out", "in", "both"]
ALL_KINDS = (EXTRACTED, INFERRED)


@dataclass(frozen=True)
class Neighbor:
    """A page reached from another within some distance, and how it was first reached."""

    path: str
    title: str
    distance: int
    via: str            # the page it was reached from
    relation: str       # relation of the edge that reached it (e.g. wikilink, shared_tag)
    kind: str           # extracted | inferred
    direction: str      # "out" (via links to it), "in" (it links to via), "both" (shared tag)


@dataclass(frozen=True)
class Backlink:
    """A page that links to the page asked about."""

    source: str
    title: str
    relation: str
    lines: tuple[int, ...]
    syntaxes: tuple[str, ...]


@dataclass(frozen=True)
class Hub:
    """A well-connected page."""

    path: str
    title: str
    degree: int           # distinct pages connected by any edge
    backlinks: int        # distinct pages linking to it
    outlinks: int         # distinct pages it links to
    inferred: int         # distinct pages connected by shared tags only
    extra: dict = field(default_factory=dict, compare=False)


def _steps(kg: KnowledgeGraph, path: str, direction: Direction, kinds: Iterable[str]
           ) -> list[tuple[str, str, str, str]]:
    """(neighbour, relation, kind, direction) for every edge at ``path``, sorted.

    Extracted links follow ``direction``; a shared-tag edge has no direction ("both") and is
    always usable.
    """
    wanted = set(kinds)
    steps = set()
    for other, _, data in kg.out_links(path):
        if data["kind"] == INFERRED and INFERRED in wanted:
            steps.add((other, data["relation"], INFERRED, "both"))
        elif data["kind"] in wanted and direction in ("out", "both"):
            steps.add((other, data["relation"], data["kind"], "out"))
    for other, _, data in kg.in_links(path):
        if data["kind"] == INFERRED and INFERRED in wanted:
            steps.add((other, data["relation"], INFERRED, "both"))
        elif data["kind"] in wanted and direction in ("in", "both"):
            steps.add((other, data["relation"], data["kind"], "in"))
    if INFERRED in wanted:
        steps.update((other, SHARED_TAG, INFERRED, "both") for other in kg.tag_neighbours(path))
    return sorted(steps)


def neighbors(kg: KnowledgeGraph, path: str, depth: int = 1, direction: Direction = "both",
              kinds: Iterable[str] = ALL_KINDS) -> list[Neighbor]:
    """Pages within ``depth`` edges of ``path`` (breadth-first), nearest first."""
    if depth < 1:
        return []
    kinds = tuple(kinds)
    seen = {path}
    found: list[Neighbor] = []
    frontier = deque([(path, 0)])
    while frontier:
        node, dist = frontier.popleft()
        if dist >= depth:
            continue
        for other, relation, kind, way in _steps(kg, node, direction, kinds):
            if other in seen:
                continue
            seen.add(other)
            found.append(Neighbor(other, kg.title(other), dist + 1, node, relation, kind, way))
            frontier.append((other, dist + 1))
    return sorted(found, key=lambda n: (n.distance, n.path))


def backlinks(kg: KnowledgeGraph, path: str) -> list[Backlink]:
    """Pages that link to ``path`` (extracted links only), by source path and relation."""
    out = []
    for source, _, data in kg.in_links(path):
        if data["kind"] != EXTRACTED:
            continue
        sources = data.get("sources", [])
        out.append(Backlink(source, kg.title(source), data["relation"],
                            tuple(s["line"] for s in sources),
                            tuple(sorted({s["syntax"] for s in sources}))))
    return sorted(out, key=lambda b: (b.source, b.relation))


def shortest_path(kg: KnowledgeGraph, source: str, target: str, directed: bool = False,
                  kinds: Iterable[str] = ALL_KINDS) -> list[str]:
    """The pages on a shortest path from ``source`` to ``target`` (both included).

    Undirected by default (a link connects both ways); with ``directed`` links are followed
    from source to target only (shared tags still count both ways). Breadth-first in path
    order, so the answer is stable. Raises NotFoundError when the pages are not connected.
    """
    kinds = set(kinds)
    if source == target:
        return [source]
    parents: dict[str, str] = {source: ""}
    frontier = [source]
    while frontier and target not in parents:
        nxt = []
        for node in frontier:
            for other, _, _, _ in _steps(kg, node, "out" if directed else "both", kinds):
                if other not in parents:
                    parents[other] = node
                    nxt.append(other)
        frontier = sorted(set(nxt))
    if target not in parents:
        raise NotFoundError(f"No path between '{source}' and '{target}'"
                            + (" following link direction" if directed else "")
                            + ". They are in different parts of the graph; try "
                            + ("without --directed." if directed else "`graph neighbors`."))
    path = [target]
    while path[-1] != source:
        path.append(parents[path[-1]])
    return path[::-1]


def hubs(kg: KnowledgeGraph, limit: int = 10) -> list[Hub]:
    """The most connected pages: most distinct neighbours, then most backlinks, then path."""
    rows = []
    for node in kg.nodes:
        ins = {u for u, _, d in kg.in_links(node) if d["kind"] == EXTRACTED}
        outs = {v for v, _, d in kg.out_links(node) if d["kind"] == EXTRACTED}
        tags = ({u for u, _, d in kg.in_links(node) if d["kind"] == INFERRED}
                | {v for v, _, d in kg.out_links(node) if d["kind"] == INFERRED}
                | kg.tag_neighbours(node).keys())
        everyone = ins | outs | tags
        rows.append(Hub(node, kg.title(node), len(everyone), len(ins), len(outs),
                        len(tags - ins - outs)))
    rows.sort(key=lambda h: (-h.degree, -h.backlinks, h.path))
    return rows[:limit]


def orphans(kg: KnowledgeGraph, no_backlinks: bool = False) -> list[str]:
    """Pages with no links in or out (or, with ``no_backlinks``, no page linking to them)."""
    out = []
    for node in kg.nodes:
        has_in = any(d["kind"] == EXTRACTED for _, _, d in kg.in_links(node))
        if no_backlinks:
            if not has_in:
                out.append(node)
            continue
        has_out = any(d["kind"] == EXTRACTED for _, _, d in kg.out_links(node))
        if not has_in and not has_out:
            out.append(node)
    return sorted(out)


def broken_links(kg: KnowledgeGraph) -> list[BrokenLink]:
    """Page links that resolve to no page (missing) or to several (ambiguous)."""
    return kg.broken_links()

