"""A no-op `mindgraph embed` chunks no page again (issue 20: no-op embed <= 0.5 s)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.vectors.chunking import Chunker

HASHING = "embedding:\n  provider: hashing\n  dimension: 64\n"


def _workspace(tmp_path: Path) -> Path:
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    for name in ("Sync", "Canvas", "Home"):
        (wiki / f"{name}.md").write_text(f"# {name}\n\nAbout {name.lower()}.\n\n## More\n"
                                         f"Details of {name.lower()}.\n", encoding="utf-8")
    (tmp_path / "mindgraph.yml").write_text(HASHING, encoding="utf-8")
    return tmp_path


def test_a_rerun_chunks_only_changed_pages_and_stays_right(tmp_path, monkeypatch):
    workspace = _workspace(tmp_path)
    chunked: list[str] = []
    real = Chunker.chunk_page

    def counting(self, page):
        chunked.append(page.path)
        return real(self, page)

    monkeypatch.setattr(Chunker, "chunk_page", counting)

    def embed() -> dict:
        result = CliRunner().invoke(cli, ["embed", "-C", str(workspace), "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    first = embed()
    assert first["embedded"] == 6 and sorted(chunked) == ["Canvas.md", "Home.md", "Sync.md"]
    chunked.clear()
    again = embed()
    # every page was chunked (and, with the local model, tokenized) again to find nothing
    assert chunked == [] and (again["embedded"], again["unchanged"], again["chunks"]) == (0, 6, 6)
    (workspace / "wiki" / "Home.md").write_text("# Home\n\nStart here instead.\n",
                                                encoding="utf-8")
    changed = embed()
    assert chunked == ["Home.md"] and changed["embedded"] == 1 and changed["deleted_chunks"] == 1
    # a lost or foreign memo costs only speed
    chunked.clear()
    for memo in (workspace / ".mindgraph").glob("chunks-*.json"):
        memo.write_text('{"version": 0}', encoding="utf-8")
    lost = embed()
    assert sorted(chunked) == ["Canvas.md", "Home.md", "Sync.md"] and lost["embedded"] == 0
