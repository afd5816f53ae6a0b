"""The composition root: one object that wires settings, stores, providers and engines.

Only the entry points (CLI, REST, MCP) build a ``Mindgraph``; everything below receives what
it needs through arguments. The object keeps derived state warm between calls (a server
holds one for its lifetime) and refreshes it from disk when wiki files change, under a lock,
so concurrent requests never see a half-updated index.

``Mindgraph`` is put together from one module per concern, each only wiring a package's
functions to the warm state (none holds an algorithm of its own):

    indexes     the lock, the page cache, and the vault, keyword index and graph kept in sync
    queries     pages, sections, links, keyword search, graph queries and trust of results
    vectors     the embedding model and vector store, `embed`, hybrid search and context
    services    ingest, stats, check, lint, coverage, timeline, calibration, propagation
    workspace   the class itself: settings, scopes and views, close

Each engine is imported where it is first used, so a command loads only what it runs
(a keyword `search` never loads the graph, the hybrid retriever or the compiler;
tests/cli/test_start_imports.py).
"""

from .workspace import Mindgraph, ScopedMindgraph

__all__ = ["Mindgraph", "ScopedMindgraph"]
