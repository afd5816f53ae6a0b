"""Build and incrementally update the knowledge graph of a wiki.

One node per page, identified by its vault-relative path (two ``Index.md`` in different folders
are two nodes). Explicit links are edges, kept in plain dictionaries (out- and in-edges per
page); shared tags are a tag → pages index (graph/tags.py) whose edges are computed on demand,
never materialised as a clique per tag. ``edges()`` yields both kinds as
``(source, target, key, attributes)``; ``graph`` builds the same as a ``networkx.MultiDiGraph``
for the few callers that need NetworkX (lazily: reading the graph needs no NetworkX).

- EXTRACTED (``kind="extracted"``): page → page for resolved links (wikilinks, embeds, markdown
  links, frontmatter typed links). One edge per (source, target, relation), the edge key being
  the relation; ``sources`` lists every link behind it (line, syntax, section, heading, the
  resolution rule). Confidence 1.0, or 0.9 when the target was chosen as the nearest of several
  pages with the same name.
- INFERRED (``kind="inferred"``, key ``"shared_tag"``): between two pages that share a tag,
  given once from the smaller path to the larger one (it has no direction). A tag on more than
  ``generic_tag_share`` of the pages (and on more than GENERIC_MIN_PAGES pages) is generic and
  makes no edges. A tag on more than ``tag_fanout_cap + 1`` pages does not make a clique: its
  pages, in path order, form a ring where each page links to its ``cap // 2`` next pages, so
  every page gets at most ``cap`` edges from one tag. Confidence grows with the number of
  shared tags: 0.5, 0.75, then 0.9 at most (always below an extracted link). Its ``label``
  names the tags (``"tags: #a, #b"``).

- INFERRED (``kind="inferred"``, key ``"inferred:<kind>"``): page → page for the links
  ``mindgraph enrich`` found (``inferred_links:`` in the page's frontmatter, mindgraph/enrich/):
  ``kind`` is the relation the model judged (reference, depends_on, ...), or ``related`` with
  ``typed`` false when similarity alone made it (no LLM); ``score`` is the pages' cosine and
  ``judge`` the model. Confidence is the cosine capped at INFERRED_LINK_CAP, below every
  extracted link; a pair a person or the frontmatter already links makes no inferred edge.

Unresolved links (missing or ambiguous targets) are not edges; they are kept as BrokenLink
records. ``apply`` updates the graph from a change set without re-reading other pages: only
the changed pages, the pages whose links may now resolve differently (same file name as an
added or removed page), and the tags whose members or generic status changed are recomputed.
The result always equals a fresh ``build`` of the same pages (tested on random edit sequences).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping


from ..config import GraphSettings
from ..page.cache import paused_gc, read_state
from ..statefile import write_state
from ..page.model import Link, Page
from ..page.resolve import LinkResolver, link_keys, page_key

from .edge_data import EdgeData
from .tags import (GENERIC_MIN_PAGES, INFERRED, SHARED_TAG, TagIndex, inferred_confidence,
                   shared_tag_data)

if TYPE_CHECKING:     # built only for the callers that ask for ``graph``
    import networkx as nx

__all__ = ["EXTRACTED", "INFERRED", "SHARED_TAG", "GENERIC_MIN_PAGES", "BrokenLink",
           "KnowledgeGraph", "inferred_confidence", "link_keys", "open_graph", "page_key"]

EXTRACTED = "extracted"
# 2: shared-tag edges name their tags in "label"; 3: enrichment's edges; 4: no NetworkX in the
# file, shared tags as a tag index (a version 3 file is rebuilt from the wiki); 5: link edges'
# attributes as EdgeData (edge_data.py; a version 4 file is rebuilt); 6: no page links and no
# link-key index in the file (the page cache holds the links: ``open_graph`` shares them)
STATE_VERSION = 6
INFERRED_LINK_CAP = 0.85   # an inferred link's confidence: below any extracted link (0.9, 1.0)
ENRICHED_PREFIX = "inferred:"


@dataclass(frozen=True)
class BrokenLink:
    """A page link that does not resolve to exactly one page."""

    source: str
    target: str
    status: str            # missing | ambiguous
    line: int
    syntax: str
    relation: str
    candidates: tuple[str, ...] = ()   # the pages an ambiguous link could mean


Edge = tuple[str, str, str, dict[str, Any]]    # source, target, key, attributes


class KnowledgeGraph:
    """The graph of a set of pages plus what is needed to update it incrementally."""

    def __init__(self, settings: GraphSettings = GraphSettings()):
        self.settings = settings
        self.nodes: dict[str, dict[str, Any]] = {}     # path → {"title", "tags"}
        self._out: dict[str, dict[tuple[str, str], EdgeData]] = {}  # (target, key) → data
        self._in: dict[str, set[tuple[str, str]]] = {}                     # {(source, key)}
        self.hashes: dict[str, str] = {}            # path → content hash of the indexed page
        self.broken: dict[str, list[BrokenLink]] = {}
        self._links: dict[str, tuple[Link, ...]] = {}
        self._aliases: dict[str, tuple[str, ...]] = {}
        # page key → linking pages: for adding and removing pages only, so not saved; made
        # from the links when a page is first added or removed (``None`` until then: an edit
        # needs no index; at 100,000 notes making it takes ~1.8 s of CPU)
        self._dependents: defaultdict[str, set[str]] | None = defaultdict(set)
        self.tags = TagIndex(settings.tag_fanout_cap, settings.generic_tag_share)
        self.resolver = LinkResolver(())
        self._communities: Any = None   # cache filled by communities.detect_communities
        self._nx: Any = None            # the NetworkX copy, built when asked for

    def __getstate__(self) -> dict[str, Any]:
        # Neither the pages' links nor the link-key index are saved: the links are the page
        # cache's (``share_links``), ~280 MB of Link objects at 100,000 notes that a saved copy
        # would load a second time, and the index is made from them when an update needs it.
        state = dict(self.__dict__)
        state.update(_nx=None, _links={}, _dependents=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def share_links(self, pages: Mapping[str, Page]) -> None:
        """Take each page's links (and title) from ``pages``, the page cache's, for every page
        whose content hash is the one this graph indexed: a loaded graph holds no links of its
        own. A page with another hash is changed: ``sync`` reads its new links."""
        for path, content_hash in self.hashes.items():
            page = pages.get(path)
            if page is None or page.content_hash != content_hash:
                continue
            self._links[path] = page.page_links
            node = self.nodes.get(path)
            if node is not None and node.get("title") == page.title:
                node["title"] = page.title       # one string, not an equal copy

    def _link_keys_index(self) -> defaultdict[str, set[str]]:
        """page key → the pages whose links carry it (made from the links on first use)."""
        if self._dependents is None:
            dependents: defaultdict[str, set[str]] = defaultdict(set)
            for path, links in self._links.items():
                for link in links:
                    for key in link_keys(link.target, path):
                        dependents[key].add(path)
            self._dependents = dependents
        return self._dependents

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def build(cls, pages: Mapping[str, Page], settings: GraphSettings = GraphSettings()
              ) -> "KnowledgeGraph":
        """The graph of ``pages`` (keyed by path), from scratch."""
        graph = cls(settings)
        graph.apply(pages, added=pages.keys())
        return graph

    def sync(self, pages: Mapping[str, Page]) -> tuple[set[str], set[str], set[str]]:
        """Bring the graph up to date with ``pages`` by content hash; returns the change set."""
        added = {p for p in pages if p not in self.hashes}
        removed = {p for p in self.hashes if p not in pages}
        changed = {p for p in pages if p in self.hashes
                   and self.hashes[p] != pages[p].content_hash}
        if added or removed or changed:
            self.apply(pages, added, changed, removed)
        return added, changed, removed

    def apply(self, pages: Mapping[str, Page], added: Iterable[str] = (),
              changed: Iterable[str] = (), removed: Iterable[str] = ()) -> None:
        """Apply a change set; ``pages`` holds at least every added and changed page."""
        with paused_gc():
            self._apply(pages, added, changed, removed)

    def _apply(self, pages: Mapping[str, Page], added: Iterable[str],
               changed: Iterable[str], removed: Iterable[str]) -> None:
        upserts = set(added) | set(changed)
        added = {p for p in upserts if p not in self.hashes}
        changed = upserts - added
        removed = {p for p in removed if p in self.hashes} - upserts
        touched = added | changed | removed
        if not touched:
            return
        self._communities = None
        self._nx = None
        for path in sorted(changed | removed):
            self._drop_links(path)
            self.tags.drop(path)
        for path in sorted(removed):
            self._remove_node(path)
            self.hashes.pop(path, None)
            self._links.pop(path, None)
            self._aliases.pop(path, None)
        for path in sorted(added | changed):
            page = pages[path]
            self.hashes[path] = page.content_hash
            self._links[path] = page.page_links
            self._aliases[path] = page.aliases
            tags = frozenset(t.lower() for t in page.tags)
            self.tags.put(path, tags)
            self.nodes[path] = {"title": page.title, "tags": sorted(tags)}
        relink = set(added | changed)
        if added or removed:
            self.resolver = LinkResolver(self.hashes.keys())
            dependents = self._link_keys_index()
            for path in added | removed:
                relink |= dependents.get(page_key(path), set())
            relink -= removed
            for path in relink - added - changed:
                self._drop_links(path)
        for path in sorted(relink):
            self._add_links(path)
        self.tags.refresh_generic(len(self.hashes))

    # -- extracted edges ------------------------------------------------------------------
    def _add_edge(self, source: str, target: str, key: str, data: dict[str, Any]) -> None:
        self._out.setdefault(source, {})[(target, key)] = EdgeData.of(data)
        self._in.setdefault(target, set()).add((source, key))

    def _remove_node(self, path: str) -> None:
        for source, key in self._in.pop(path, set()):
            self._out.get(source, {}).pop((path, key), None)
        self.nodes.pop(path, None)

    def _drop_links(self, path: str) -> None:
        for target, key in self._out.pop(path, {}):
            self._in.get(target, set()).discard((path, key))
        if self._dependents is not None:      # else made from the links when needed
            for link in self._links.get(path, ()):
                for key in link_keys(link.target, path):
                    self._dependents[key].discard(path)
        self.broken.pop(path, None)

    def _add_links(self, path: str) -> None:
        edges: dict[tuple[str, str], dict[str, Any]] = {}
        inferred: dict[tuple[str, str], Link] = {}
        broken: list[BrokenLink] = []
        for link in self._links[path]:
            if self._dependents is not None:
                for key in link_keys(link.target, path):
                    self._dependents[key].add(path)
            res = self.resolver.resolve(link, path)
            if res.status == "resolved" and res.target is not None:
                if res.target == path:
                    continue  # a page naming itself is not a relation
                if link.syntax == "inferred":
                    inferred[(res.target, link.relation)] = link
                    continue
                edge = edges.setdefault((res.target, link.relation),
                                        {"confidence": 0.0, "sources": []})
                edge["confidence"] = max(edge["confidence"], 0.9 if res.rule == "nearest" else 1.0)
                edge["sources"].append({"line": link.line, "syntax": link.syntax,
                                        "section": link.section_id, "heading": link.heading,
                                        "target": link.target, "rule": res.rule})
            elif res.status in ("missing", "ambiguous"):
                broken.append(BrokenLink(path, link.target, res.status, link.line, link.syntax,
                                         link.relation,
                                         res.candidates if res.status == "ambiguous" else ()))
        for (target, relation), edge in sorted(edges.items()):
            sources = sorted(edge["sources"], key=lambda s: (s["line"], s["syntax"], s["target"]))
            self._add_edge(path, target, relation, {
                "kind": EXTRACTED, "relation": relation, "confidence": edge["confidence"],
                "sources": sources, "count": len(sources)})
        linked = {target for target, _ in edges}
        for (target, relation), link in sorted(inferred.items()):
            if target in linked:
                continue     # the page's own link (a person's, the frontmatter's) says more
            score = float(link.score or 0.0)
            typed = not (link.judge or "").startswith("similarity:")
            self._add_edge(path, target, ENRICHED_PREFIX + relation, {
                "kind": INFERRED, "relation": relation,
                "confidence": round(min(INFERRED_LINK_CAP, score), 4), "score": score,
                "judge": link.judge, "typed": typed,
                "label": f"{'inferred' if typed else 'similar'}: {relation} "
                         f"({link.judge}, cosine {score:.2f})"})
        if broken:
            self.broken[path] = broken

    # -- views ----------------------------------------------------------------------------
    def __contains__(self, path: object) -> bool:
        return path in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def generic_tags(self) -> frozenset[str]:
        """Tags on so many pages that they make no edges."""
        return frozenset(self.tags.generic)

    def title(self, path: str) -> str:
        """The title of a page in the graph."""
        return str(self.nodes[path].get("title", path))

    def out_links(self, path: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(target, key, attributes) of the explicit links from ``path`` (extracted and
        enrichment's inferred links; not shared tags)."""
        for (target, key), data in self._out.get(path, {}).items():
            yield target, key, data

    def in_links(self, path: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(source, key, attributes) of the explicit links to ``path``."""
        for source, key in self._in.get(path, ()):
            yield source, key, self._out[source][(path, key)]

    def link_edges(self) -> Iterator[Edge]:
        """Every explicit link edge, in no particular order."""
        for source, edges in self._out.items():
            for (target, key), data in edges.items():
                yield source, target, key, data

    def tag_neighbours(self, path: str) -> dict[str, list[str]]:
        """Pages related to ``path`` by shared tags, each with the sorted tags they share."""
        return self.tags.neighbours(path)

    def shared_tag_edges(self, path: str) -> Iterator[Edge]:
        """The shared-tag edges at ``path``, each given from the smaller path to the larger."""
        for other, names in self.tag_neighbours(path).items():
            u, v = (path, other) if path < other else (other, path)
            yield u, v, SHARED_TAG, shared_tag_data(names)

    def neighbours(self, path: str) -> set[str]:
        """Every page one edge away from ``path``, any kind and direction."""
        return ({t for t, _, _ in self.out_links(path)} | {s for s, _ in self._in.get(path, ())}
                | set(self.tag_neighbours(path)))

    def degree(self, path: str) -> int:
        """Edges at ``path`` (links out and in, shared-tag edges), as NetworkX counts them."""
        return (len(self._out.get(path, ())) + len(self._in.get(path, ()))
                + len(self.tag_neighbours(path)))

    def edges(self) -> Iterator[Edge]:
        """Every edge: the explicit links, then each shared-tag edge once."""
        yield from self.link_edges()
        for u, v, names in self.tags.pairs():
            yield u, v, SHARED_TAG, shared_tag_data(names)

    def number_of_edges(self) -> int:
        """Explicit link edges plus shared-tag edges."""
        return sum(len(e) for e in self._out.values()) + self.tags.pair_count()

    @property
    def graph(self) -> "nx.MultiDiGraph":
        """The whole graph as a ``networkx.MultiDiGraph`` (built on first use after a change:
        for export and tests; every query of ours reads the graph without NetworkX)."""
        if self._nx is None:
            import networkx as nx

            graph = nx.MultiDiGraph()
            graph.add_nodes_from(self.nodes.items())
            graph.add_edges_from((u, v, k, d) for u, v, k, d in self.edges())
            self._nx = graph
        return self._nx

    def aliases(self, path: str) -> tuple[str, ...]:
        """The aliases of a page in the graph."""
        return self._aliases.get(path, ())

    def broken_links(self) -> list[BrokenLink]:
        """Every unresolved page link, by source page and line."""
        return [b for path in sorted(self.broken) for b in self.broken[path]]

    def missing_hints(self, link: BrokenLink) -> tuple[str, ...]:
        """Pages that have the missing target as an alias (Obsidian does not resolve those)."""
        wanted = link.target.strip().lower().removesuffix(".md")
        return tuple(sorted(p for p, names in self._aliases.items()
                            if any(n.lower() == wanted for n in names)))

    def signature(self) -> tuple:
        """A canonical, order-free description of nodes and edges (for equality checks)."""
        nodes = tuple(sorted((n, d["title"], tuple(d["tags"])) for n, d in self.nodes.items()))
        edges = tuple(sorted((u, v, k, repr(sorted(d.items()))) for u, v, k, d in self.edges()))
        broken = tuple(self.broken_links())
        return nodes, edges, broken

    # -- persistence ----------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the graph and its update state atomically (a pickle of plain dictionaries
        and our own classes: loading it imports no NetworkX)."""
        write_state(path, "graph", STATE_VERSION, {"graph": self})

    @classmethod
    def load(cls, path: Path, settings: GraphSettings) -> "KnowledgeGraph | None":
        """The saved graph, or None when absent, unreadable, old, or built with other settings.
        It holds no page links until ``share_links`` (``open_graph`` calls it): give it the
        pages before updating it."""
        state = read_state(path, "graph", STATE_VERSION)
        if state is None:
            return None
        graph = state.get("graph")
        if not isinstance(graph, cls) or graph.settings != settings:
            return None
        return graph


def open_graph(pages: Mapping[str, Page], state_file: Path,
               settings: GraphSettings = GraphSettings(), save: bool = True) -> KnowledgeGraph:
    """The persisted graph brought up to date with ``pages`` (built when there is none),
    saved when it changed unless ``save`` is false (a caller that saves it itself later:
    at 100,000 notes one save is seconds)."""
    graph = KnowledgeGraph.load(state_file, settings)
    if graph is None:
        graph = KnowledgeGraph.build(pages, settings)
        if save:
            graph.save(state_file)
        return graph
    graph.share_links(pages)
    added, changed, removed = graph.sync(pages)
    if save and (added or changed or removed):
        graph.save(state_file)
    return graph
