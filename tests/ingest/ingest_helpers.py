"""Helpers shared by the ingest tests (imported by name: tests are not a package)."""

from __future__ import annotations

import os
from pathlib import Path

from mindgraph.fsutil import sha256_bytes


def tree_hashes(root: Path) -> dict[str, str]:
    """Every file under ``root`` (symlinks as their target text) → its SHA-256."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            out[rel] = sha256_bytes(path.read_bytes())
    return out


def read_wiki(workspace: Path, rel: str) -> str:
    """A wiki page's text."""
    return (workspace / "wiki" / rel).read_text(encoding="utf-8")
