"""Questions asked of the knowledge graph: neighbours, backlinks, shortest paths, hubs,
orphans and broken links. Pages are named by path here; ``page.lookup.find_page`` turns a
title, alias or file name into a path.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Container, Iterable, Literal


from ..errors import NotFoundError
from .build import EXTRACTED, INFERRED, SHARED_TAG, BrokenLink, KnowledgeGraph

Direction = Literal["out", "in", "both"]
ALL_KINDS = (EXTRACTED, INFERRED)


@dataclass(frozen=True)
class Neighbor:
    """A page reached from another within some distance, and how it was first reached.

    Two pages can be joined by several edges (a link each way, a typed link beside a wikilink,
    a shared tag): they make one neighbour. ``relation`` and ``kind`` are those of the
    strongest edge (an extracted link before an inferred one), ``direction`` joins the link
    directions, and ``also`` names the other relations as extra evidence.
    """

    path: str
    title: str
    distance: int
    via: str            # the page it was reached from
    relation: str       # relation of the strongest edge (e.g. wikilink, depends_on, shared_tag)
    kind: str           # extracted | inferred
    direction: str      # "out" (via links to it), "in" (it links to via), "both" (each links
    #                     the other, or only inferred edges, which have no direction)
    also: tuple[str, ...] = ()   # the other relations between the two pages

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


Step = tuple[str, str, str, str, tuple[str, ...]]   # neighbour, relation, kind, direction, also
EdgeAt = tuple[str, str, str]                        # kind, relation, direction


def _edges(kg: KnowledgeGraph, path: str, kinds: set[str]) -> dict[str, list[EdgeAt]]:
    """neighbour → its (kind, relation, direction) edges at ``path`` of the wanted kinds."""
    edges: dict[str, list[EdgeAt]] = {}
    for way, links in (("out", kg.out_links(path)), ("in", kg.in_links(path))):
        for other, _, data in links:
            if data["kind"] in kinds:
                edges.setdefault(other, []).append(
                    (data["kind"], data["relation"], "both" if data["kind"] == INFERRED else way))
    if INFERRED in kinds:
        for other in kg.tag_neighbours(path):
            edges.setdefault(other, []).append((INFERRED, SHARED_TAG, "both"))
    return edges


def _usable(edge: EdgeAt, direction: Direction) -> bool:
    kind, _, way = edge
    return kind == INFERRED or direction == "both" or way == direction


def _merged(edges: list[EdgeAt], direction: Direction
            ) -> tuple[str, str, str, tuple[str, ...]]:
    """(relation, kind, direction, other relations) of the edges between two pages: the
    strongest edge that may be followed names the relation (extracted before inferred, then
    by name); the direction joins every link of its kind, so a link each way is "both"."""
    if len(edges) == 1:                      # most pairs: one edge, nothing to merge
        kind, relation, way = edges[0]
        return relation, kind, way, ()
    ranked = sorted(set(edges), key=lambda e: (not _usable(e, direction), e[0] != EXTRACTED,
                                               e[1] == SHARED_TAG, e[1]))
    kind, relation, _ = ranked[0]
    ways = {way for k, _, way in ranked if k == kind}
    joined = ways.pop() if len(ways) == 1 else "both"
    also = tuple(dict.fromkeys(r for _, r, _ in ranked if r != relation))
    return relation, kind, joined, also


def _steps(kg: KnowledgeGraph, path: str, direction: Direction, kinds: Iterable[str],
           skip: Container[str] = ()) -> list[Step]:
    """One (neighbour, relation, kind, direction, also) per page one edge from ``path`` and
    not in ``skip``, sorted by neighbour.

    A page is a step when an edge to it may be followed: an extracted link in ``direction``
    or an inferred edge (no direction, always usable).
    """
    steps = []
    for other, edges in sorted(_edges(kg, path, set(kinds)).items()):
        if other not in skip and any(_usable(edge, direction) for edge in edges):
            steps.append((other, *_merged(edges, direction)))
    return steps


def _next_pages(kg: KnowledgeGraph, path: str, direction: Direction, kinds: set[str]
                ) -> list[str]:
    """The pages one usable edge from ``path`` (as ``_steps``, without naming the edges)."""
    found = set()
    for way, links in (("out", kg.out_links(path)), ("in", kg.in_links(path))):
        followed = direction in (way, "both")
        found.update(other for other, _, data in links if data["kind"] in kinds
                     and (followed or data["kind"] == INFERRED))
    if INFERRED in kinds:
        found.update(kg.tag_neighbours(path))
    return sorted(found)


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
        for other, relation, kind, way, also in _steps(kg, node, direction, kinds, seen):
            seen.add(other)
            found.append(Neighbor(other, kg.title(other), dist + 1, node, relation, kind, way,
                                  also))
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
            for other in _next_pages(kg, node, "out" if directed else "both", kinds):
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


def step_directions(kg: KnowledgeGraph, path: list[str],
                    kinds: Iterable[str] = ALL_KINDS) -> list[str]:
    """How each step of ``path`` (as ``shortest_path`` gives it) is joined: "out" (the page
    links the next), "in" (the next links it: an undirected path walks a link backwards),
    "both" (each links the other), or "tag" (they only share a tag)."""
    kinds = set(kinds)
    ways = []
    for here, there in zip(path, path[1:]):
        edges = _edges(kg, here, kinds).get(there, [])
        linked = {way for kind, _, way in edges if kind == EXTRACTED}
        ways.append("tag" if not linked else linked.pop() if len(linked) == 1 else "both")
    return ways


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

