"""Graph construction: nodes, extracted and inferred edges, broken links, persistence."""

from __future__ import annotations

import pytest

from mindgraph.config import GraphSettings
from mindgraph.graph.build import (EXTRACTED, INFERRED, SHARED_TAG, STATE_VERSION,
                                   KnowledgeGraph, link_keys, open_graph, page_key)
from mindgraph.page.parse import parse_page


def _edges(kg, u, v):
    return {k: d for _, target, k, d in kg.graph.out_edges(u, keys=True, data=True)
            if target == v}


def test_one_node_per_page_path_even_with_the_same_file_name(small_pages):
    kg = KnowledgeGraph.build(small_pages)
    assert sorted(kg.graph.nodes) == sorted(small_pages)
    assert "a/Index.md" in kg.graph and "b/Index.md" in kg.graph
    assert kg.title("a/Index.md") == "Index A"


def test_extracted_edges_keep_relation_syntax_and_source_line(small_pages):
    kg = KnowledgeGraph.build(small_pages)
    home = _edges(kg, "Home.md", "Gamma.md")
    assert home["wikilink"]["kind"] == EXTRACTED
    assert home["wikilink"]["sources"][0]["syntax"] == "embed"
    assert home["wikilink"]["sources"][0]["line"] == 5
    alpha_beta = _edges(kg, "Alpha.md", "Beta.md")
    assert set(alpha_beta) == {"wikilink", "depends_on", SHARED_TAG}
    assert alpha_beta["wikilink"]["sources"][0]["syntax"] == "markdown"
    assert alpha_beta["depends_on"]["sources"][0]["syntax"] == "frontmatter"
    assert _edges(kg, "Alpha.md", "Gamma.md")["related"]["confidence"] == 1.0
    # The aliased link [[Beta|the beta page]] is an ordinary link to Beta.
    assert "wikilink" in _edges(kg, "Home.md", "Beta.md")


def test_backlinks_are_in_edges_and_self_links_are_not_edges(small_pages):
    kg = KnowledgeGraph.build(small_pages)
    sources = {u for u, _, k in kg.graph.in_edges("Alpha.md", data="kind") if k == EXTRACTED}
    assert sources == {"Home.md", "a/Index.md"}
    assert not kg.graph.has_edge("Gamma.md", "Gamma.md")


def test_unresolved_links_are_broken_links_not_edges(small_pages):
    kg = KnowledgeGraph.build(small_pages)
    broken = {(b.source, b.target, b.status) for b in kg.broken_links()}
    assert ("Alpha.md", "Missing page", "missing") in broken
    # [[Index]] from Beta.md: two Index.md pages, none nearer to Beta than the other.
    ambiguous = [b for b in kg.broken_links() if b.status == "ambiguous"]
    assert [(b.source, b.candidates) for b in ambiguous] == [
        ("Beta.md", ("a/Index.md", "b/Index.md"))]
    assert "Missing page" not in kg.graph


def test_shared_tags_make_one_undirected_inferred_edge(small_pages):
    kg = KnowledgeGraph.build(small_pages)
    data = kg.graph.get_edge_data("Alpha.md", "Beta.md", SHARED_TAG)
    assert data["kind"] == INFERRED and data["tags"] == ["topic"]
    assert data["confidence"] == 0.5 and data["label"] == "tags: #topic"
    assert not kg.graph.has_edge("Beta.md", "Alpha.md", SHARED_TAG)
    assert kg.graph.get_edge_data("Alpha.md", "Gamma.md", SHARED_TAG)["tags"] == ["shared"]


def _tagged(n: int, tag: str = "common", untagged: int = 0) -> dict:
    pages = {}
    for i in range(n):
        path = f"p{i:03d}.md"
        pages[path] = parse_page(f"# P{i}\n\n#{tag}\n", path)
    for i in range(untagged):
        path = f"u{i:03d}.md"
        pages[path] = parse_page(f"# U{i}\n\ntext\n", path)
    return pages


def _inferred_degree(kg):
    degree = {n: 0 for n in kg.graph.nodes}
    for u, v, kind in kg.graph.edges(data="kind"):
        if kind == INFERRED:
            degree[u] += 1
            degree[v] += 1
    return degree


def test_a_generic_tag_makes_no_edges():
    # 30 of 100 pages carry the tag: over the 20 % generic share.
    kg = KnowledgeGraph.build(_tagged(30, untagged=70), GraphSettings(generic_tag_share=0.2))
    assert kg.generic_tags == {"common"}
    assert max(_inferred_degree(kg).values()) == 0
    kg = KnowledgeGraph.build(_tagged(30, untagged=70), GraphSettings(generic_tag_share=0.5))
    assert kg.generic_tags == frozenset()
    assert max(_inferred_degree(kg).values()) > 0


def test_tag_fanout_is_capped():
    pages = _tagged(40, untagged=200)
    kg = KnowledgeGraph.build(pages, GraphSettings(tag_fanout_cap=6))
    degrees = [d for n, d in _inferred_degree(kg).items() if n.startswith("p")]
    assert max(degrees) <= 6 and min(degrees) == 6
    # The ring still connects every tagged page to every other one.
    import networkx as nx
    tagged = kg.graph.subgraph([p for p in pages if p.startswith("p")]).to_undirected()
    assert nx.is_connected(tagged)
    small = KnowledgeGraph.build(_tagged(5, untagged=200), GraphSettings(tag_fanout_cap=6))
    assert set(_inferred_degree(small)[f"p{i:03d}.md"] for i in range(5)) == {4}  # a clique


def test_nearest_candidate_gets_lower_confidence():
    pages = {p: parse_page(text, p) for p, text in {
        "en/Canvas.md": "# Canvas\n", "ja/Canvas.md": "# Canvas\n",
        "ja/notes/Home.md": "# Home\n\n[[Canvas]]\n"}.items()}
    kg = KnowledgeGraph.build(pages)
    data = kg.graph.get_edge_data("ja/notes/Home.md", "ja/Canvas.md", "wikilink")
    assert data["confidence"] == 0.9 and data["sources"][0]["rule"] == "nearest"


def test_link_keys_cover_every_resolution_rule():
    assert link_keys("Note", "a/b.md") == {"note"}
    assert link_keys("folder/Note.md", "x.md") == {"note.md", "note"}
    assert link_keys("../Other", "a/b/c.md") >= {"other"}
    assert page_key("Folder/Note.md") == "note"
    assert page_key("Folder/Note.markdown") == "note.markdown"


def test_saved_graph_loads_equal_and_other_settings_rebuild(small_pages, tmp_path):
    state = tmp_path / "state" / "graph.pickle"
    kg = open_graph(small_pages, state)
    assert state.is_file()
    loaded = KnowledgeGraph.load(state, GraphSettings())
    assert loaded is not None and loaded.signature() == kg.signature()
    assert KnowledgeGraph.load(state, GraphSettings(seed=7)) is None
    state.write_bytes(b"not a pickle")
    assert KnowledgeGraph.load(state, GraphSettings()) is None
    assert open_graph(small_pages, state).signature() == kg.signature()


def test_a_format_3_graph_with_networkx_inside_is_rebuilt_not_trusted(small_pages, tmp_path):
    """mindgraph before the tag index pickled a KnowledgeGraph holding a NetworkX graph and a
    clique of shared-tag pairs: such a file is rebuilt from the pages, never unpickled into
    the new class (whose queries would fail on the missing attributes)."""
    import networkx as nx

    from mindgraph.statefile import read_state, write_state

    fresh = KnowledgeGraph.build(small_pages)
    old = object.__new__(KnowledgeGraph)
    old.__dict__.update(settings=GraphSettings(), graph=nx.MultiDiGraph(), hashes=dict(
        fresh.hashes), broken={}, _links={}, _aliases={}, _dependents={}, _tags={}, _members={},
        _generic=set(), _tag_pairs={}, _pair_tags={}, _communities=None)
    state = tmp_path / "graph.pickle"
    write_state(state, "graph", 3, {"graph": old})
    kg = open_graph(small_pages, state)
    assert kg.signature() == fresh.signature() and len(kg) == len(small_pages)
    assert read_state(state, "graph", STATE_VERSION) is not None   # rewritten in today's format


def test_a_format_4_graph_with_dictionary_edges_is_rebuilt_in_compact_form(small_pages,
                                                                            tmp_path):
    """Version 4 kept each link edge's attributes as dictionaries: its file is rebuilt (the
    same graph), and the edges come back as EdgeData that read like those dictionaries."""
    from mindgraph.graph.edge_data import EdgeData
    from mindgraph.statefile import read_state, write_state

    fresh = KnowledgeGraph.build(small_pages)
    old = KnowledgeGraph.build(small_pages)
    old._out = {source: {key: dict(data) for key, data in edges.items()}
                for source, edges in old._out.items()}
    state = tmp_path / "graph.pickle"
    write_state(state, "graph", 4, {"graph": old})
    assert KnowledgeGraph.load(state, GraphSettings()) is None
    kg = open_graph(small_pages, state)
    assert kg.signature() == fresh.signature()
    edges = [data for _, _, _, data in kg.link_edges()]
    assert edges and all(isinstance(data, EdgeData) for data in edges)
    assert read_state(state, "graph", STATE_VERSION) is not None
    data = edges[0]
    as_dict = dict(data)
    assert data == as_dict and as_dict["sources"] == data["sources"]
    assert all(set(source) == {"line", "syntax", "section", "heading", "target", "rule"}
               for source in data["sources"])
    with pytest.raises(KeyError):
        data["no such attribute"]


def test_shared_tag_edges_are_computed_not_stored(small_pages):
    """A tag relates its pages through the tag index: the graph stores no edge for it, yet
    every consumer sees the shared-tag edge (both ways for queries, once in edges())."""
    kg = KnowledgeGraph.build(small_pages)
    assert all(k != SHARED_TAG for *_, k, _ in kg.link_edges())
    assert "Beta.md" in kg.tag_neighbours("Alpha.md")
    assert "Alpha.md" in kg.tag_neighbours("Beta.md")
    shared = [(u, v) for u, v, k, _ in kg.edges() if k == SHARED_TAG]
    assert ("Alpha.md", "Beta.md") in shared and ("Beta.md", "Alpha.md") not in shared
    assert len(shared) == len(set(shared))
    assert kg.number_of_edges() == kg.graph.number_of_edges() == sum(1 for _ in kg.edges())
