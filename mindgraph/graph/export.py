"""Export the knowledge graph as JSON (nodes, edges, communities, broken links) or GraphML.

GraphML attributes must be scalars, so lists (tags, link sources) are written as JSON strings
there; the JSON export keeps them as lists.
"""

from __future__ import annotations

import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any


from .build import KnowledgeGraph
from .communities import detect_communities

if TYPE_CHECKING:     # imported when a graph is built or read, not by a keyword search
    import networkx as nx


def to_json(kg: KnowledgeGraph) -> dict[str, Any]:
    """Nodes, edges, communities and broken links as plain JSON-serialisable data."""
    communities = detect_communities(kg)
    member_of = {m: c.id for c in communities for m in c.members}
    nodes = [{"id": n, "title": d.get("title", n), "tags": list(d.get("tags", [])),
              "community": member_of.get(n)} for n, d in sorted(kg.nodes.items())]
    edges = []
    for u, v, key, data in sorted(kg.edges(), key=lambda e: (e[0], e[1], e[2])):
        edge = {k: _plain(val) for k, val in sorted(data.items())}
        # The endpoints are the edge: no attribute may stand in for them.
        edge.update({"source": u, "target": v, "key": key})
        edges.append(edge)
    return {
        "nodes": nodes,
        "edges": edges,
        "communities": [{"id": c.id, "name": c.name, "center": c.center, "size": c.size,
                         "members": list(c.members)} for c in communities],
        "broken_links": [asdict(b) for b in kg.broken_links()],
    }


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value


def graphml_graph(kg: KnowledgeGraph) -> nx.MultiDiGraph:
    """A copy of the graph with GraphML-safe (scalar) attributes and community ids."""
    member_of = {m: c.id for c in detect_communities(kg) for m in c.members}
    import networkx as nx

    out = nx.MultiDiGraph()
    for node, data in sorted(kg.nodes.items()):
        out.add_node(node, title=str(data.get("title", node)),
                     tags=" ".join(data.get("tags", [])), community=member_of.get(node, -1))
    for u, v, key, data in sorted(kg.edges(), key=lambda e: (e[0], e[1], e[2])):
        attrs = {k: (val if isinstance(val, (str, int, float, bool)) else
                     json.dumps(val, ensure_ascii=False, sort_keys=True))
                 for k, val in data.items() if val is not None}
        out.add_edge(u, v, key=key, **attrs)
    return out


def write_graphml(kg: KnowledgeGraph, target: str | Path | IO[bytes]) -> None:
    """Write the graph as GraphML to a path or a binary stream."""
    import networkx as nx

    nx.write_graphml(graphml_graph(kg), target, encoding="utf-8")


def graphml_text(kg: KnowledgeGraph) -> str:
    """The GraphML document as text."""
    buffer = io.BytesIO()
    write_graphml(kg, buffer)
    return buffer.getvalue().decode("utf-8")


def write_json(kg: KnowledgeGraph, target: str | Path) -> None:
    """Write the JSON export to a file."""
    Path(target).write_text(json.dumps(to_json(kg), indent=1, ensure_ascii=False) + "\n",
                            encoding="utf-8")
