"""Communities by Leiden (igraph): the planted groups, modularity no worse than NetworkX's
Louvain, and the same answer every time, from any thread, without touching ``random``."""

from __future__ import annotations

import random
import threading

from mindgraph.config import GraphSettings
from mindgraph.graph.build import KnowledgeGraph
from mindgraph.graph.communities import detect_communities, modularity, partition, weighted_pairs
from mindgraph.page.parse import parse_page

GROUPS, SIZE = 8, 20


def _planted(seed: int = 3) -> dict:
    """GROUPS groups of SIZE pages, each page linking to 4 pages of its group and, one page
    in five, to a page of another group."""
    rng = random.Random(seed)
    texts = {}
    for g in range(GROUPS):
        for i in range(SIZE):
            own = rng.sample([j for j in range(SIZE) if j != i], 4)
            links = [f"[[g{g}p{j}]]" for j in own]
            if rng.random() < 0.2:
                links.append(f"[[g{(g + 1 + rng.randrange(GROUPS - 1)) % GROUPS}p"
                             f"{rng.randrange(SIZE)}]]")
            texts[f"g{g}/g{g}p{i}.md"] = f"# G{g} P{i}\n\n{' '.join(links)}\n"
    return {p: parse_page(t, p) for p, t in texts.items()}


def _membership(found, nodes):
    label = {m: c.id for c in found for m in c.members}
    return [label[n] for n in nodes]


def test_leiden_finds_the_planted_groups_with_modularity_no_worse_than_louvain():
    kg = KnowledgeGraph.build(_planted())
    found = detect_communities(kg)
    assert sorted(sorted(c.members) for c in found) == sorted(
        sorted(f"g{g}/g{g}p{i}.md" for i in range(SIZE)) for g in range(GROUPS))
    data = weighted_pairs(kg)
    ours = modularity(data, _membership(found, data.nodes))
    louvain = modularity(data, partition(data, "networkx", 1.0, kg.settings.seed))
    legacy = modularity(data, partition(data, "python-louvain", 1.0, kg.settings.seed))
    assert ours >= max(louvain, legacy) - 1e-9 and ours > 0.6


def test_communities_are_the_same_every_time_from_any_thread_and_leave_random_alone():
    pages = _planted(5)
    expected = [c.members for c in detect_communities(KnowledgeGraph.build(pages))]
    random.seed(11)
    before = [random.random() for _ in range(3)]
    random.seed(11)
    again = [c.members for c in detect_communities(KnowledgeGraph.build(pages))]
    assert [random.random() for _ in range(3)] == before     # igraph got its own generator
    assert again == expected
    results: list = []

    def run() -> None:
        results.append([c.members for c in detect_communities(KnowledgeGraph.build(pages))])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4


def test_the_seed_is_the_configured_one():
    pages = _planted(7)
    kg = KnowledgeGraph.build(pages, GraphSettings(seed=42))
    data = weighted_pairs(kg)
    found = detect_communities(kg)
    assert _membership(found, data.nodes) == _relabel(partition(data, "leiden", 1.0, 42),
                                                      found, data.nodes)


def _relabel(labels, found, nodes):
    """``labels`` renamed to the ids of ``found`` (the same partition gives the same list)."""
    index = {n: i for i, n in enumerate(nodes)}
    rename = {labels[index[c.members[0]]]: c.id for c in found}
    return [rename.get(label, -1) for label in labels]
