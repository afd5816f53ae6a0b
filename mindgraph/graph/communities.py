"""Louvain communities of the knowledge graph, deterministic for a fixed seed.

We use NetworkX's built-in ``louvain_communities`` rather than python-louvain: on the
10,000-page benchmark graph it is faster (see bench/bench_issue3.py, which times both), it is
maintained with NetworkX itself, and it takes the same seed. Louvain shuffles nodes with the
seeded generator, so the result also depends on the order in which nodes and edges were
inserted: we therefore run it on a canonical undirected copy (nodes and edges in sorted order),
so an incrementally updated graph and a fresh build give the same communities.

Edge weights: every edge (either direction, any relation) adds its confidence to the weight
between its two pages. Each community is named after its most central page: the member with
the largest weighted degree inside the community (ties broken by path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal


from .build import KnowledgeGraph

if TYPE_CHECKING:     # imported when a graph is built or read, not by a keyword search
    import networkx as nx

Method = Literal["networkx", "python-louvain"]


@dataclass(frozen=True)
class Community:
    """A group of densely connected pages, named after its most central page."""

    id: int
    name: str                 # title of the central page
    center: str               # path of the central page
    members: tuple[str, ...]  # paths, most central first

    @property
    def size(self) -> int:
        """Number of pages in the community."""
        return len(self.members)


def weighted_graph(kg: KnowledgeGraph) -> nx.Graph:
    """Undirected graph with summed confidences as weights, nodes and edges in sorted order."""
    weights: dict[tuple[str, str], float] = {}
    for u, v, confidence in kg.graph.edges(data="confidence"):
        if u == v:
            continue
        pair = (u, v) if u < v else (v, u)
        weights[pair] = weights.get(pair, 0.0) + float(confidence or 1.0)
    import networkx as nx

    canonical = nx.Graph()
    canonical.add_nodes_from(sorted(kg.graph.nodes))
    canonical.add_weighted_edges_from((u, v, w) for (u, v), w in sorted(weights.items()))
    return canonical


def detect_communities(kg: KnowledgeGraph, method: Method = "networkx",
                       resolution: float = 1.0) -> list[Community]:
    """Communities of the graph, largest first; cached on the graph until it changes."""
    cache_key = (method, resolution, kg.settings.seed)
    cached = kg._communities
    if cached is not None and cached[0] == cache_key:
        return list(cached[1])
    graph = weighted_graph(kg)
    if graph.number_of_nodes() == 0:
        return []
    groups = _partition(graph, method, resolution, kg.settings.seed)
    communities = []
    for members in groups:
        strength = dict(graph.subgraph(members).degree(weight="weight"))
        ordered = tuple(sorted(members, key=lambda m: (-strength[m], m)))
        communities.append((ordered, kg.title(ordered[0])))
    communities.sort(key=lambda c: (-len(c[0]), c[0][0]))
    result = [Community(i, name, ordered[0], ordered)
              for i, (ordered, name) in enumerate(communities)]
    kg._communities = (cache_key, tuple(result))
    return result


def _partition(graph: nx.Graph, method: Method, resolution: float, seed: int
               ) -> list[set[str]]:
    if method == "python-louvain":
        import community as community_louvain  # python-louvain, only for comparison

        labels = community_louvain.best_partition(graph, weight="weight",
                                                  resolution=resolution, random_state=seed)
        groups: dict[int, set[str]] = {}
        for node, label in labels.items():
            groups.setdefault(label, set()).add(node)
        return list(groups.values())
    import networkx as nx

    return [set(c) for c in nx.community.louvain_communities(
        graph, weight="weight", resolution=resolution, seed=seed)]


def community_of(kg: KnowledgeGraph, path: str) -> Community | None:
    """The community a page belongs to."""
    for community in detect_communities(kg):
        if path in community.members:
            return community
    return None
