"""Incremental updates always equal a full rebuild (property test on random edit sequences)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindgraph.config import GraphSettings
from mindgraph.graph import build as graph_build
from mindgraph.graph.build import KnowledgeGraph
from mindgraph.graph.communities import detect_communities
from mindgraph.page.cache import PageCache
from mindgraph.page.parse import parse_page
from mindgraph.page.vault import load_vault

# Paths with repeated file names in several folders, so that adding or removing one page
# changes how other pages' links resolve (unique name → ambiguous → nearest, and back).
PATHS = ["Note.md", "a/Note.md", "b/Note.md", "Other.md", "a/Other.md", "c/d/Deep.md",
         "Deep.md", "Index.md", "a/Index.md", "x/y/Index.md"]
TARGETS = ["Note", "a/Note", "Other", "Deep", "d/Deep", "Index", "./Other", "../Note",
           "Missing", "Note.md", "a/Index", "x/y/Index", "other"]
TAGS = ["t1", "t2", "t3", "T1", "t2/sub"]

link = st.tuples(st.sampled_from(["[[{}]]", "![[{}]]", "[[{}|alias]]", "[[{}#Part]]"]),
                 st.sampled_from(TARGETS)).map(lambda pair: pair[0].format(pair[1]))
page_text = st.builds(
    lambda links, tags, related, title: (
        (f"---\nrelated: [{', '.join(repr(r) for r in related)}]\n---\n" if related else "")
        + f"# {title}\n\n" + " ".join(links) + "\n\n" + " ".join("#" + t for t in tags) + "\n"),
    st.lists(link, max_size=4), st.lists(st.sampled_from(TAGS), max_size=3, unique=True),
    st.lists(st.sampled_from(TARGETS), max_size=2), st.sampled_from(["One", "Two"]))
step = st.tuples(st.sampled_from(PATHS), st.one_of(st.none(), page_text))
batches = st.lists(st.lists(step, min_size=1, max_size=3), min_size=1, max_size=8)


def _apply_batch(pages: dict, batch) -> tuple[set, set, set]:
    added, changed, removed = set(), set(), set()
    for path, text in batch:
        if text is None:
            if path in pages:
                del pages[path]
                removed.add(path)
                added.discard(path)
                changed.discard(path)
            continue
        new = parse_page(text, path)
        if path in pages:
            if pages[path].content_hash == new.content_hash:
                continue
            (changed if path not in added else added).add(path)
        else:
            if path in removed:
                removed.discard(path)
                changed.add(path)
            else:
                added.add(path)
        pages[path] = new
    return added, changed, removed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches)
def test_incremental_updates_equal_a_full_rebuild(batches):
    options = GraphSettings(generic_tag_share=0.5, tag_fanout_cap=2, seed=3)
    with pytest.MonkeyPatch.context() as mp:
        # Let tags turn generic (and back) in vaults of ten pages.
        mp.setattr(graph_build, "GENERIC_MIN_PAGES", 1)
        pages: dict = {}
        kg = KnowledgeGraph(options)
        for batch in batches:
            added, changed, removed = _apply_batch(pages, batch)
            kg.apply(pages, added, changed, removed)
            fresh = KnowledgeGraph.build(dict(pages), options)
            assert kg.signature() == fresh.signature()
            assert kg.generic_tags == fresh.generic_tags
        assert ([c.members for c in detect_communities(kg)]
                == [c.members for c in detect_communities(KnowledgeGraph.build(pages, options))])


def test_sync_by_content_hash_after_edits_on_disk(small_vault):
    cache = PageCache.open(small_vault, None)
    cache.refresh()
    kg = KnowledgeGraph.build(cache.pages)
    (small_vault / "Beta.md").write_text("# Beta\n\n[[a/Index]] [[Lonely]] #shared\n")
    (small_vault / "Gamma.md").unlink()
    (small_vault / "c").mkdir()
    (small_vault / "c" / "Index.md").write_text("# Index C\n\n[[Home]]\n")
    changes = cache.refresh()
    assert changes.changed == ("Beta.md",) and changes.removed == ("Gamma.md",)
    assert changes.added == ("c/Index.md",)
    kg.apply(cache.pages, changes.added, changes.changed, changes.removed)
    assert kg.signature() == KnowledgeGraph.build(load_vault(small_vault).pages).signature()
    assert kg.graph.has_edge("Beta.md", "a/Index.md")
    # Home's embed of Gamma is now a broken link, and the edge is gone.
    assert not kg.graph.has_edge("Home.md", "Gamma.md")
    assert any(b.source == "Home.md" and b.target == "Gamma" for b in kg.broken_links())
    assert kg.sync(cache.pages) == (set(), set(), set())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batches)
def test_a_saved_graph_updated_from_the_page_links_equals_a_full_rebuild(tmp_path_factory,
                                                                          batches):
    """The state file holds neither the pages' links nor the link-key index (the page cache
    holds the links; the index is made from them): a graph saved after each batch, loaded
    with the next batch's pages and synced by hash, still equals a fresh build, and its
    link-key index equals that of a graph that never left memory."""
    options = GraphSettings(generic_tag_share=0.5, tag_fanout_cap=2, seed=3)
    state = tmp_path_factory.mktemp("graph") / "graph.pickle"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(graph_build, "GENERIC_MIN_PAGES", 1)
        pages: dict = {}
        in_memory = KnowledgeGraph(options)
        kept = None      # loaded once, then updated in memory (its index made on the way)
        for batch in batches:
            added, changed, removed = _apply_batch(pages, batch)
            in_memory.apply(pages, added, changed, removed)
            if kept is not None:
                kept.apply(pages, added, changed, removed)
            kg = graph_build.open_graph(dict(pages), state, options)
            kept = kept or kg
            fresh = KnowledgeGraph.build(dict(pages), options).signature()
            assert kg.signature() == fresh and kept.signature() == fresh
            assert all(kg._links[p] == pages[p].page_links for p in pages)
            index = {k: v for k, v in in_memory._link_keys_index().items() if v}
            assert {k: v for k, v in kg._link_keys_index().items() if v} == index
            if kept._dependents is not None:
                assert {k: v for k, v in kept._dependents.items() if v} == index


def test_a_loaded_graph_holds_the_page_caches_links_not_copies(small_vault):
    """Loading graph.pickle gives no Link objects of its own: each unchanged page's links are
    the page cache's objects, and its title the page's string."""
    cache = PageCache.open(small_vault, None)
    cache.refresh()
    state = small_vault.parent / "graph-state" / "graph.pickle"
    graph_build.open_graph(cache.pages, state)
    loaded = KnowledgeGraph.load(state, GraphSettings())
    assert loaded is not None and loaded._links == {} and loaded._dependents is None
    kg = graph_build.open_graph(cache.pages, state)
    for path, page in cache.pages.items():
        assert all(a is b for a, b in zip(kg._links[path], page.page_links, strict=True))
        assert kg.nodes[path]["title"] is page.title
    (small_vault / "Beta.md").write_text("# Beta\n\n[[a/Index]] [[Lonely]] #shared\n")
    cache.refresh()
    kg = graph_build.open_graph(cache.pages, state)
    assert kg.signature() == KnowledgeGraph.build(load_vault(small_vault).pages).signature()
