"""A view's vector search over the embedded store's HNSW graph (stores/ann.py): each identity
still gets only, and as many as it asks of, the chunks it may see."""

from __future__ import annotations

import pytest

from mindgraph.stores import ann, embedded

from scopes_support import VISIBLE, embedded_core, leaks


@pytest.fixture
def mg(tmp_path, monkeypatch):
    """The two-tenant workspace, embedded, with the graph in use from the first row."""
    monkeypatch.setattr(embedded, "EXACT_BELOW", 1)
    monkeypatch.setattr(ann, "EXACT_BELOW", 1)
    core = embedded_core(tmp_path, monkeypatch)
    yield core
    core.close()


def test_every_view_gets_its_own_chunks_from_the_graph(mg):
    store, provider = mg.vector_store(), mg.embedding_provider()
    store.flush()
    assert store._tables[provider.model_version].ann is not None
    q = provider.embed_queries(["narwhal service restart"])[0]
    for name in ("alice", "bob", "dave", "carol", "erin"):
        view = mg.as_identity(mg.scopes.identity(name))
        visible = frozenset(VISIBLE[name])
        chunks = [h for h in store.query(q, 10_000, provider.model_version)
                  if h.page in visible]
        hits = store.query(q, 3, provider.model_version, pages=visible)
        assert [h.page for h in hits] == [h.page for h in chunks[:3]]
        answer = view.smart_search("narwhal service restart", 10)
        assert {r.page for r in answer.results} <= VISIBLE[name]
        assert leaks(name, [r.snippet for r in answer.results]) == []
