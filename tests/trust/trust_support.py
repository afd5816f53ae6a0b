"""Helpers the trust tests import (a conftest cannot be imported by name: tests/serve has one
too)."""

from __future__ import annotations

import json
from pathlib import Path

LOCAL = "http://127.0.0.1:8765"     # the Host a loopback server answers to

NOTES = {
    "Sync.md": "# Sync\n\nSync keeps 12 months of version history.\n\n"
               "- Each vault holds up to 10 GB.\n",
    "日本語/メモ.md": "# メモ\n\nObsidianはノートをローカルに保存します。\n",
    "Plain.md": "# Plain\n\nA plain note about canvases.\n",
}


def plan_of(mg, base: Path, *args: str) -> dict:
    """Run `verify --json` and return its answer."""
    result = mg(base, "verify", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)
