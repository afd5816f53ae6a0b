"""The import direction that keeps the architecture visible (see STYLE.md).

cli → serve → core → ingest, retrieval, graph, vectors → page, stores, providers, adapters
→ config, text → errors, fsutil. A module may import its own package and anything of a lower rank,
never a higher one; ``page`` imports nothing of ours but errors and fsutil.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mindgraph"
RANK = {
    "errors": 0, "fsutil": 0, "version": 0, "httputil": 0, "yamlfile": 0, "local_models": 0,
    "filenames": 0, "notes_home": 0,
    "config": 1, "usage": 1, "text": 1, "statefile": 1,
    "page": 2, "stores": 2, "providers": 2, "adapters": 2,
    "ingest": 3, "retrieval": 3, "graph": 3, "vectors": 3, "coverage": 3, "timeline": 3,
    "trust": 3, "lint": 3, "calibrate": 3, "propagate": 3, "scopes": 3, "documents": 3,
    "quotas": 3,
    "dashboard": 3, "enrich": 3, "triage": 3,
    "core": 4,
    "sync": 5,     # drives the core: ingest, sync, embed
    "serve": 5, "bench": 5,
    "cli": 6,  # the CLI also starts the servers (`mindgraph serve`, `mindgraph mcp`)
    "__main__": 7, "__init__": 7,
}


def component(module_path: Path) -> str:
    rel = module_path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def imported_components(file: Path) -> set[str]:
    tree = ast.parse(file.read_text(encoding="utf-8"))
    found = set()
    depth = len(file.relative_to(PACKAGE).parts) - 1
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module and node.module.split(".")[0] == "mindgraph":
                    parts = node.module.split(".")[1:]
                    found.add(parts[0] if parts else (node.names[0].name))
            elif node.level > depth:
                # Relative import that climbs to the package root: "from ..x import y".
                found.add(node.module.split(".")[0] if node.module else node.names[0].name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "mindgraph" and len(parts) > 1:
                    found.add(parts[1])
    return found


FILES = sorted(p for p in PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("file", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_upward_imports(file):
    own = component(file)
    assert own in RANK, f"{own} has no rank in tests/test_architecture.py; add it"
    for other in imported_components(file):
        if other == own:
            continue
        assert other in RANK, f"{file.name} imports unknown component {other}"
        assert RANK[other] < RANK[own] or (RANK[other] == RANK[own] and RANK[own] == 3), (
            f"{file.relative_to(PACKAGE)} ({own}, rank {RANK[own]}) imports {other} "
            f"(rank {RANK[other]}): lower layers must not import higher or sibling ones")
        if own == "page":
            assert other in {"errors", "fsutil", "statefile"}, f"page/ must not import {other}"
