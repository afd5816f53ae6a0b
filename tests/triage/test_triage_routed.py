"""Offline triage under the routed default (MiniLM for English, use-multilingual-v3 for
Japanese and Chinese), with the real models on real notes through the CLI: an item is compared
with the trunks embedded by its own model and banded by that model's scale. A Japanese item
against English trunks used to score 0 (the trunks were embedded by MiniLM alone, and a cosine
between two models' blocks is 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli

pytestmark = pytest.mark.slow

SYNC = "Obsidian Sync"
# The trunks: Sync in the vault's own English words (en/Obsidian Sync/Version history.md's
# description), and a project the notes have nothing to do with.
CATALOG = """---
type: trunk-catalog
---
# Trunk Catalog

```json
[{"name": "Sync", "description": "Obsidian Sync keeps a record of all changes made to your notes and regularly checks for updates and creates new versions of your notes."},
 {"name": "Garden", "description": "vegetable garden beds, tomato seedlings, compost, watering"}]
```
"""
ITEMS = {"en": "Version history.md", "ja": "バージョン履歴.md", "zh": "版本历史.md"}


def completed(note: Path, when: str) -> str:
    """The note with ``completed: when`` added to its frontmatter."""
    text = note.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return f"---\ncompleted: '{when}'\n" + text[4:]


@pytest.fixture(scope="module")
def workspace(corpora, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("triage-routed")
    (root / "raw").mkdir()
    (root / "raw" / "Trunk Catalog.md").write_text(CATALOG, encoding="utf-8")
    for lang, name in ITEMS.items():
        (root / "raw" / lang).mkdir()
        (root / "raw" / lang / name).write_text(
            completed(corpora / "obsidian-help" / lang / SYNC / name, "2026-12-01T09:00:00Z"),
            encoding="utf-8")
    (root / "mindgraph.yml").write_text("{}\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["-C", str(root), "ingest"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return root


def test_items_of_every_language_score_against_english_trunks(workspace):
    result = CliRunner().invoke(cli, ["-C", str(workspace), "triage", "--since", "2026-11-30",
                                      "--judge", "offline", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    items = {i["id"].split("/")[0]: i for g in data["trunks"] for i in g["items"]}
    assert set(items) == {"en", "ja", "zh"}
    for lang, item in items.items():
        assert item["trunk"] == "Sync" and item["score"] >= 2, (lang, item)
        assert item["judge"].startswith("similarity:local:routed(")
