"""Graph queries, communities and export on small vaults and the real Obsidian Help vault."""

from __future__ import annotations

import io
import json
import random

import networkx as nx
import pytest

from mindgraph.errors import NotFoundError
from mindgraph.graph.build import EXTRACTED, KnowledgeGraph
from mindgraph.graph.communities import detect_communities
from mindgraph.graph.export import to_json, write_graphml
from mindgraph.graph.query import backlinks, hubs, neighbors, orphans, shortest_path
from mindgraph.page.parse import parse_page
from mindgraph.page.vault import load_vault


@pytest.fixture
def small_graph(small_pages) -> KnowledgeGraph:
    """The knowledge graph of the small test vault."""
    return KnowledgeGraph.build(small_pages)


def test_neighbors_by_depth_and_direction(small_graph):
    one = neighbors(small_graph, "a/Index.md", depth=1, direction="out")
    assert [(n.path, n.distance, n.direction) for n in one] == [("Alpha.md", 1, "out")]
    two = neighbors(small_graph, "a/Index.md", depth=2, direction="out", kinds=(EXTRACTED,))
    assert {n.path for n in two if n.distance == 2} == {"Beta.md", "Gamma.md", "Home.md"}
    into = neighbors(small_graph, "Alpha.md", depth=1, direction="in", kinds=(EXTRACTED,))
    assert {n.path for n in into} == {"Home.md", "a/Index.md"}
    # a/Index.md only links in; Alpha and Home link each other: "both" whatever was asked.
    assert {n.path: n.direction for n in into} == {"Home.md": "both", "a/Index.md": "in"}
    # A shared tag is a neighbour whatever the direction asked for.
    tagged = neighbors(small_graph, "Beta.md", depth=1, direction="out")
    assert ("Alpha.md", "shared_tag", "both") in {(n.path, n.relation, n.direction)
                                                   for n in tagged}


def test_backlinks_list_sources_with_lines(small_graph):
    found = backlinks(small_graph, "Beta.md")
    assert [(b.source, b.relation) for b in found] == [
        ("Alpha.md", "depends_on"), ("Alpha.md", "wikilink"), ("Home.md", "wikilink"),
        ("b/Index.md", "wikilink")]
    assert found[1].syntaxes == ("markdown",) and found[1].lines == (8,)


def test_shortest_path_undirected_and_directed(small_graph):
    assert shortest_path(small_graph, "b/Index.md", "a/Index.md") == [
        "b/Index.md", "Beta.md", "Alpha.md", "a/Index.md"]
    with pytest.raises(NotFoundError, match="No path"):
        shortest_path(small_graph, "Lonely.md", "Home.md")
    with pytest.raises(NotFoundError, match="following link direction"):
        shortest_path(small_graph, "Gamma.md", "b/Index.md", directed=True,
                      kinds=(EXTRACTED,))


def test_hubs_and_orphans(small_graph):
    top = hubs(small_graph, 2)
    assert top[0].path == "Alpha.md" and top[0].backlinks == 2
    assert orphans(small_graph) == ["Lonely.md"]
    assert set(orphans(small_graph, no_backlinks=True)) == {"Lonely.md", "a/Index.md",
                                                            "b/Index.md"}


def _two_cliques() -> dict:
    texts = {}
    for group in ("a", "b"):
        names = [f"{group}{i}" for i in range(5)]
        for name in names:
            links = " ".join(f"[[{o}]]" for o in names if o != name)
            texts[f"{name}.md"] = f"# {name.upper()}\n\n{links}\n"
    texts["a0.md"] += "[[b0]]\n"  # one bridge
    texts["a1.md"] += "[[a0]] [[a0]]\n"
    return {p: parse_page(t, p) for p, t in texts.items()}


def test_communities_are_named_by_their_most_central_page_and_deterministic():
    pages = _two_cliques()
    kg = KnowledgeGraph.build(pages)
    found = detect_communities(kg)
    assert sorted(sorted(c.members) for c in found) == [
        [f"a{i}.md" for i in range(5)], [f"b{i}.md" for i in range(5)]]
    a = next(c for c in found if "a0.md" in c.members)
    assert a.center == "a0.md" and a.name == "A0" and a.members[0] == "a0.md"
    # Another insertion order gives the same communities.
    shuffled = list(pages.items())
    random.Random(5).shuffle(shuffled)
    other = detect_communities(KnowledgeGraph.build(dict(shuffled)))
    assert [c.members for c in other] == [c.members for c in found]
    legacy = detect_communities(kg, method="python-louvain")
    assert sorted(sorted(c.members) for c in legacy) == sorted(sorted(c.members) for c in found)


def test_json_and_graphml_export(small_graph):
    data = to_json(small_graph)
    assert {n["id"] for n in data["nodes"]} == set(small_graph.graph.nodes)
    assert len(data["edges"]) == small_graph.graph.number_of_edges()
    assert all(n["community"] is not None for n in data["nodes"])
    assert data["broken_links"][0]["status"] in {"missing", "ambiguous"}
    json.dumps(data)  # serialisable as is
    buffer = io.BytesIO()
    write_graphml(small_graph, buffer)
    read = nx.read_graphml(io.BytesIO(buffer.getvalue()), force_multigraph=True)
    assert set(read.nodes) == set(small_graph.graph.nodes)
    assert read.number_of_edges() == small_graph.graph.number_of_edges()
    edge = next(d for u, v, d in read.edges(data=True) if u == "Home.md" and v == "Gamma.md")
    assert json.loads(edge["sources"])[0]["syntax"] == "embed"


@pytest.mark.slow
def test_real_vault_graph(corpora):
    vault = load_vault(corpora / "obsidian-help")
    kg = KnowledgeGraph.build(vault.pages)
    assert kg.graph.number_of_nodes() == len(vault.pages) == 883
    resolved = sum(1 for page, link, res in vault.resolved_links()
                   if res.status == "resolved" and res.target != page.path
                   and not link.is_self)
    assert sum(d["count"] for *_, d in kg.graph.edges(data=True)
               if d["kind"] == EXTRACTED) == resolved
    statuses = {b.status for b in kg.broken_links()}
    assert statuses <= {"missing", "ambiguous"}
    # The Settings page is a hub in each language.
    top = {h.path for h in hubs(kg, 3)}
    assert "en/User interface/Settings.md" in top
    found = detect_communities(kg)
    again = detect_communities(KnowledgeGraph.build(dict(reversed(list(vault.pages.items())))))
    assert [c.members for c in found] == [c.members for c in again]
    # en, ja and zh pages link within their language, so the big communities stay in one.
    for community in found[:3]:
        langs = {m.split("/")[0] for m in community.members} & {"en", "ja", "zh"}
        assert len(langs) == 1, community.name
