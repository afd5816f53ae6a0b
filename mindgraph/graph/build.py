"""Build and incrementally update the knowledge graph of a wiki.

One node per page, identified by its vault-relative path (two ``Index.md`` in different folders
are two nodes). A ``networkx.MultiDiGraph`` holds two kinds of edges:

- EXTRACTED (``kind="extracted"``): page → page for resolved links (wikilinks, embeds, markdown
  links, frontmatter typed links). One edge per (source, target, relation), the edge key being
  the relation; ``sources`` lists every link behind it (line, syntax, section, heading, the
  resolution rule). Confidence 1.0, or 0.9 when the target was chosen as the nearest of several
  pages with the same name.
- INFERRED (``kind="inferred"``, key ``"shared_tag"``): between two pages that share a tag,
  stored once from the smaller path to the larger one (it has no direction). A tag on more than
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

import posixpath
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping


from ..config import GraphSettings
from ..page.cache import paused_gc, read_state
from ..statefile import write_state
from ..page.model import Link, Page
from ..page.resolve import LinkResolver

if TYPE_CHECKING:     # imported when a graph is built or read, not by a keyword search
    import networkx as nx

EXTRACTED = "extracted"
INFERRED = "inferred"
SHARED_TAG = "shared_tag"
GENERIC_MIN_PAGES = 5   # in a tiny vault a tag on 3 of 5 pages still says something
STATE_VERSION = 3  # 2: shared-tag edges name their tags in "label"; 3: enrichment's edges
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


def page_key(path: str) -> str:
    """The lower-case file name without ".md": what link resolution matches on."""
    name = path.lower().rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name


def link_keys(target: str, source_path: str) -> frozenset[str]:
    """The page keys a link target can resolve to, whatever pages exist.

    Mirrors LinkResolver: every rule probes a path (or path + ".md") whose file name is one
    of these, so adding or removing a page can only change links that carry its key.
    """
    raw = target.strip().replace("\\", "/")
    if "/" not in raw and raw and raw != "." and raw != "..":    # [[Note]]: most links
        key = raw.lower()
        return frozenset((key, key[:-3])) if key.endswith(".md") else frozenset((key,))
    return _path_link_keys(raw, source_path)


def _path_link_keys(raw: str, source_path: str) -> frozenset[str]:
    if not raw.strip("/"):
        return frozenset()
    key = posixpath.normpath(raw.lstrip("/")).lower()
    folder = posixpath.dirname(source_path).lower()
    relative = posixpath.normpath(posixpath.join(folder, raw)).lower() if folder else key
    keys = set()
    for probe in (key, relative):
        last = probe.rsplit("/", 1)[-1]
        keys.add(last)
        if last.endswith(".md"):
            keys.add(last[:-3])
    return frozenset(keys)


def inferred_confidence(shared_tags: int) -> float:
    """Confidence of a shared-tag edge: 0.5 for one tag, 0.75 for two, at most 0.9."""
    return min(0.9, 1.0 - 0.5 ** shared_tags)


class KnowledgeGraph:
    """The graph of a set of pages plus what is needed to update it incrementally."""

    def __init__(self, settings: GraphSettings = GraphSettings()):
        import networkx as nx

        self.settings = settings
        self.graph: nx.MultiDiGraph = nx.MultiDiGraph()
        self.hashes: dict[str, str] = {}            # path → content hash of the indexed page
        self.broken: dict[str, list[BrokenLink]] = {}
        self._links: dict[str, tuple[Link, ...]] = {}
        self._aliases: dict[str, tuple[str, ...]] = {}
        self._dependents: dict[str, set[str]] = defaultdict(set)  # page key → linking pages
        self._tags: dict[str, frozenset[str]] = {}                 # page → normalised tags
        self._members: dict[str, set[str]] = defaultdict(set)      # tag → pages
        self._generic: set[str] = set()
        self._tag_pairs: dict[str, set[tuple[str, str]]] = {}
        self._pair_tags: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.resolver = LinkResolver(())
        self._communities: Any = None   # cache filled by communities.detect_communities

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
        dirty_tags: set[str] = set()
        for path in sorted(changed | removed):
            self._drop_links(path)
            for tag in self._tags.pop(path, ()):
                self._members[tag].discard(path)
                dirty_tags.add(tag)
        for path in sorted(removed):
            if path in self.graph:
                self.graph.remove_node(path)
            self.hashes.pop(path, None)
            self._links.pop(path, None)
            self._aliases.pop(path, None)
        for path in sorted(added | changed):
            page = pages[path]
            self.hashes[path] = page.content_hash
            self._links[path] = page.page_links
            self._aliases[path] = page.aliases
            tags = frozenset(t.lower() for t in page.tags)
            self._tags[path] = tags
            for tag in tags:
                self._members[tag].add(path)
            dirty_tags |= tags
            self.graph.add_node(path, title=page.title, tags=sorted(tags))
        relink = set(added | changed)
        if added or removed:
            self.resolver = LinkResolver(self.hashes.keys())
            for path in added | removed:
                relink |= self._dependents.get(page_key(path), set())
            relink -= removed
            for path in relink - added - changed:
                self._drop_links(path)
        for path in sorted(relink):
            self._add_links(path)
        self._update_tags(dirty_tags)

    # -- extracted edges ------------------------------------------------------------------
    def _drop_links(self, path: str) -> None:
        if path in self.graph:
            doomed = [(u, v, k) for u, v, k, kind in
                      self.graph.out_edges(path, keys=True, data="kind")
                      if kind == EXTRACTED or str(k).startswith(ENRICHED_PREFIX)]
            self.graph.remove_edges_from(doomed)
        for link in self._links.get(path, ()):
            for key in link_keys(link.target, path):
                self._dependents[key].discard(path)
        self.broken.pop(path, None)

    def _add_links(self, path: str) -> None:
        edges: dict[tuple[str, str], dict[str, Any]] = {}
        inferred: dict[tuple[str, str], Link] = {}
        broken: list[BrokenLink] = []
        for link in self._links[path]:
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
            self.graph.add_edge(path, target, key=relation, kind=EXTRACTED, relation=relation,
                                confidence=edge["confidence"], sources=sources,
                                count=len(sources))
        linked = {target for target, _ in edges}
        for (target, relation), link in sorted(inferred.items()):
            if target in linked:
                continue     # the page's own link (a person's, the frontmatter's) says more
            score = float(link.score or 0.0)
            typed = not (link.judge or "").startswith("similarity:")
            self.graph.add_edge(path, target, key=ENRICHED_PREFIX + relation, kind=INFERRED,
                                relation=relation, confidence=round(min(INFERRED_LINK_CAP,
                                                                        score), 4),
                                score=score, judge=link.judge, typed=typed,
                                label=f"{'inferred' if typed else 'similar'}: {relation} "
                                      f"({link.judge}, cosine {score:.2f})")
        if broken:
            self.broken[path] = broken

    # -- inferred edges -------------------------------------------------------------------
    def _update_tags(self, dirty: set[str]) -> None:
        n_pages = len(self.hashes)
        limit = max(self.settings.generic_tag_share * n_pages, GENERIC_MIN_PAGES)
        generic = {tag for tag, members in self._members.items() if len(members) > limit}
        dirty |= generic ^ self._generic
        self._generic = generic
        touched: set[tuple[str, str]] = set()
        for tag in sorted(dirty):
            members = self._members.get(tag, set())
            new = set() if tag in generic else _tag_pairs(sorted(members),
                                                          self.settings.tag_fanout_cap)
            old = self._tag_pairs.pop(tag, set())
            for pair in old - new:
                self._pair_tags[pair].discard(tag)
                touched.add(pair)
            for pair in new - old:
                self._pair_tags[pair].add(tag)
                touched.add(pair)
            if new:
                self._tag_pairs[tag] = new
            if not members:
                self._members.pop(tag, None)
        for pair in sorted(touched):
            tags = self._pair_tags.get(pair)
            u, v = pair
            if not tags:
                self._pair_tags.pop(pair, None)
                if self.graph.has_edge(u, v, SHARED_TAG):
                    self.graph.remove_edge(u, v, SHARED_TAG)
                continue
            names = sorted(tags)
            self.graph.add_edge(u, v, key=SHARED_TAG, kind=INFERRED, relation=SHARED_TAG,
                                confidence=inferred_confidence(len(names)), tags=names,
                                label="tags: " + ", ".join("#" + t for t in names))

    # -- views ----------------------------------------------------------------------------
    @property
    def generic_tags(self) -> frozenset[str]:
        """Tags on so many pages that they make no edges."""
        return frozenset(self._generic)

    def title(self, path: str) -> str:
        """The title of a page in the graph."""
        return str(self.graph.nodes[path].get("title", path))

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
        nodes = tuple(sorted((n, d["title"], tuple(d["tags"]))
                             for n, d in self.graph.nodes(data=True)))
        edges = tuple(sorted((u, v, k, repr(sorted(d.items())))
                             for u, v, k, d in self.graph.edges(keys=True, data=True)))
        broken = tuple(self.broken_links())
        return nodes, edges, broken

    # -- persistence ----------------------------------------------------------------------
    def save(self, path: Path) -> None:
        """Write the graph and its update state atomically (pickle)."""
        write_state(path, "graph", STATE_VERSION, {"graph": self})

    @classmethod
    def load(cls, path: Path, settings: GraphSettings) -> "KnowledgeGraph | None":
        """The saved graph, or None when absent, unreadable, old, or built with other settings."""
        state = read_state(path, "graph", STATE_VERSION)
        if state is None:
            return None
        graph = state.get("graph")
        if not isinstance(graph, cls) or graph.settings != settings:
            return None
        return graph


def _tag_pairs(members: list[str], cap: int) -> set[tuple[str, str]]:
    """Pairs linked by one tag: all pairs, or a ring of cap // 2 neighbours each way."""
    n = len(members)
    if n < 2:
        return set()
    if n - 1 <= cap:
        return {(members[i], members[j]) for i in range(n) for j in range(i + 1, n)}
    reach = max(1, cap // 2)
    pairs = set()
    for i in range(n):
        for step in range(1, reach + 1):
            a, b = members[i], members[(i + step) % n]
            pairs.add((a, b) if a < b else (b, a))
    return pairs


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
    added, changed, removed = graph.sync(pages)
    if save and (added or changed or removed):
        graph.save(state_file)
    return graph
