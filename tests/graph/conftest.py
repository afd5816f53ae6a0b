"""Fixtures for graph tests: small vaults written to disk and parsed."""

from __future__ import annotations

from pathlib import Path

import pytest

from mindgraph.page.vault import load_vault


def write_vault(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path → text) under ``root``."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


SMALL_VAULT = {
    "Home.md": "# Home\n\nStart at [[Alpha]] and [[Beta|the beta page]].\n\n![[Gamma]]\n",
    "Alpha.md": ("---\ntags: [topic, shared]\nrelated: ['[[Gamma]]']\ndepends_on: Beta\n---\n"
                 "# Alpha\n\nSee [Beta](Beta.md) and [[Missing page]].\n\n## Details\n\n"
                 "Back to [[Home#Start]].\n"),
    "Beta.md": "# Beta\n\n#topic\n\nNothing else. [[Index]]\n",
    "Gamma.md": "# Gamma\n\n#shared\n\nA leaf page linking to itself: [[Gamma]].\n",
    "Lonely.md": "# Lonely\n\nNo links at all.\n",
    "a/Index.md": "# Index A\n\n[[Alpha]]\n",
    "b/Index.md": "# Index B\n\n[[Beta]]\n",
}


@pytest.fixture
def small_vault(tmp_path: Path) -> Path:
    """A folder with seven pages: links of every syntax, tags, two Index.md, a broken link."""
    return write_vault(tmp_path / "wiki", SMALL_VAULT)


@pytest.fixture
def small_pages(small_vault: Path):
    """The parsed pages of ``small_vault`` keyed by path."""
    return load_vault(small_vault).pages
