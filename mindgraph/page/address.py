"""Stable addresses for pages: a file URI, or an obsidian:// deep link inside an Obsidian vault."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote


def page_url(vault_root: Path, page_path: str) -> str:
    """obsidian://open?vault=...&file=... when the wiki is an Obsidian vault, else file://."""
    root = Path(vault_root).resolve()
    vault_dir = next((d for d in (root, *root.parents) if (d / ".obsidian").is_dir()), None)
    if vault_dir is not None:
        rel = (root / page_path).relative_to(vault_dir).as_posix().removesuffix(".md")
        return f"obsidian://open?vault={quote(vault_dir.name, safe='')}&file={quote(rel, safe='')}"
    return (root / page_path).as_uri()
