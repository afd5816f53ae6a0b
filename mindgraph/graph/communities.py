"""Communities of the knowledge graph (Leiden, modularity), deterministic for a fixed seed.

We use igraph's ``community_leiden`` (C, modularity objective, two iterations)
rather than NetworkX's ``louvain_communities`` or python-louvain: on the 100,000-note
benchmark vault it takes seconds where NetworkX took minutes, and it finds communities of
higher modularity than either (bench/bench_graph_scale.py prints all of them side by side;
Leiden also never returns a community that falls apart into unconnected pieces, which Louvain
can). igraph draws its random numbers from the Python generator it is given: we hand it one
seeded with ``graph.seed`` for the call (under a lock, since that generator is global to
igraph) and feed it the graph in a canonical order (pages and page pairs sorted), so the same
pages always give the same communities, and an incrementally updated graph gives what a fresh
build gives. ``method="networkx"`` and ``method="python-louvain"`` remain for comparison.

Edge weights: every edge (either direction, any relation) adds its confidence to the weight
between its two pages. Each community is named after its most central page: the member with
the largest weighted degree inside the community (ties broken by path).
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .build import KnowledgeGraph

if TYPE_CHECKING:     # imported when communities are asked for, not by a keyword search
    import networkx as nx

Method = Literal["leiden", "networkx", "python-louvain"]
_IGRAPH_RNG = threading.Lock()     # igraph's random generator is process-wide
LEIDEN_ITERATIONS = 2    # igraph's default; until stable (-1) gained 0.7 % modularity for 5x time
MIN_COMMUNITY_SIZE = 2   # what CLI, REST and MCP list by default: a page with no links is one


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


@dataclass(frozen=True)
class WeightedPairs:
    """The graph as community detection sees it: sorted pages, and each linked pair of pages
    (indices into ``nodes``, smaller first, pairs sorted) with its summed confidence."""

    nodes: list[str]
    pairs: list[tuple[int, int]]
    weights: list[float]


def weighted_pairs(kg: KnowledgeGraph) -> WeightedPairs:
    """Undirected page pairs with summed confidences, in canonical (sorted) order.

    Computed with NumPy from the explicit links and the tag index (graph/tags.py): the
    shared-tag pairs, millions at 100,000 notes, are never Python objects.
    """
    import numpy as np

    nodes = sorted(kg.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    n = len(nodes)
    codes: list[int] = []
    confidences: list[float] = []
    for u, v, _, data in kg.link_edges():
        a, b = index[u], index[v]
        if a != b:
            codes.append(min(a, b) * n + max(a, b))
            confidences.append(float(data.get("confidence") or 1.0))
    tag_codes, shared = kg.tags.pair_codes(index)
    tag_weights = np.minimum(0.9, 1.0 - 0.5 ** shared.astype(np.float64))
    every = np.concatenate([np.asarray(codes, np.int64), tag_codes])
    unique, where = np.unique(every, return_inverse=True)
    weights = np.bincount(where, weights=np.concatenate(
        [np.asarray(confidences, np.float64), tag_weights]), minlength=len(unique))
    pairs = np.stack([unique // max(n, 1), unique % max(n, 1)], axis=1)
    return WeightedPairs(nodes, [tuple(p) for p in pairs.tolist()], weights.tolist())


def detect_communities(kg: KnowledgeGraph, method: Method = "leiden",
                       resolution: float = 1.0) -> list[Community]:
    """Communities of the graph, largest first; cached on the graph until it changes."""
    cache_key = (method, resolution, kg.settings.seed)
    cached = kg._communities
    if cached is not None and cached[0] == cache_key:
        return list(cached[1])
    data = weighted_pairs(kg)
    if not data.nodes:
        return []
    membership = partition(data, method, resolution, kg.settings.seed)
    strength = [0.0] * len(data.nodes)
    for (a, b), weight in zip(data.pairs, data.weights):
        if membership[a] == membership[b]:
            strength[a] += weight
            strength[b] += weight
    groups: dict[int, list[int]] = {}
    for node, label in enumerate(membership):
        groups.setdefault(label, []).append(node)
    communities = []
    for members in groups.values():
        ordered = tuple(data.nodes[i] for i in sorted(members, key=lambda i: (-strength[i], i)))
        communities.append((ordered, kg.title(ordered[0])))
    communities.sort(key=lambda c: (-len(c[0]), c[0][0]))
    result = [Community(i, name, ordered[0], ordered)
              for i, (ordered, name) in enumerate(communities)]
    kg._communities = (cache_key, tuple(result))
    return result


def partition(data: WeightedPairs, method: Method, resolution: float, seed: int) -> list[int]:
    """A community label for each page of ``data`` (by index), deterministic for ``seed``."""
    if method == "leiden":
        return _leiden(data, resolution, seed)
    labels: dict[str, int] = {}
    graph = _networkx(data)
    if method == "python-louvain":
        import community as community_louvain  # python-louvain, only for comparison

        labels = community_louvain.best_partition(graph, weight="weight",
                                                  resolution=resolution, random_state=seed)
    else:
        import networkx as nx

        for label, members in enumerate(nx.community.louvain_communities(
                graph, weight="weight", resolution=resolution, seed=seed)):
            labels.update(dict.fromkeys(members, label))
    return [labels[node] for node in data.nodes]


def _leiden(data: WeightedPairs, resolution: float, seed: int) -> list[int]:
    import igraph

    graph = igraph.Graph(n=len(data.nodes), edges=data.pairs)
    with _IGRAPH_RNG:
        igraph.set_random_number_generator(random.Random(seed))
        try:
            found = graph.community_leiden(objective_function="modularity",
                                           weights=data.weights, resolution=resolution,
                                           n_iterations=LEIDEN_ITERATIONS)
        finally:
            igraph.set_random_number_generator(random)
    return list(found.membership)


def _networkx(data: WeightedPairs) -> nx.Graph:
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(data.nodes)
    graph.add_weighted_edges_from((data.nodes[a], data.nodes[b], w)
                                  for (a, b), w in zip(data.pairs, data.weights))
    return graph


def modularity(data: WeightedPairs, membership: list[int], resolution: float = 1.0) -> float:
    """Newman's weighted modularity of a partition (the quality Louvain and Leiden maximise)."""
    import igraph

    graph = igraph.Graph(n=len(data.nodes), edges=data.pairs)
    return float(graph.modularity(membership, weights=data.weights, resolution=resolution))


def community_of(kg: KnowledgeGraph, path: str) -> Community | None:
    """The community a page belongs to."""
    for community in detect_communities(kg):
        if path in community.members:
            return community
    return None
