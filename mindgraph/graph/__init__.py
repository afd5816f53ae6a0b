"""The knowledge graph: pages as nodes, extracted link edges and inferred shared-tag edges.

    build        KnowledgeGraph (build, incremental apply, persistence), open_graph
    query        neighbors, backlinks, shortest_path, hubs, orphans, broken_links
    communities  Leiden communities named by their most central page
    export       JSON and GraphML
"""

from .build import EXTRACTED, INFERRED, BrokenLink, KnowledgeGraph, open_graph
from .communities import Community, detect_communities
from .export import to_json, write_graphml
from .query import (Backlink, Hub, Neighbor, backlinks, broken_links, hubs,
                    neighbors, orphans, shortest_path)

__all__ = ["EXTRACTED", "INFERRED", "Backlink", "BrokenLink", "Community", "Hub",
           "KnowledgeGraph", "Neighbor", "backlinks", "broken_links", "detect_communities",
           "hubs", "neighbors", "open_graph", "orphans", "shortest_path",
           "to_json", "write_graphml"]
