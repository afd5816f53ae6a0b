"""A copied workspace (cp -r: new folder, new mtimes) reuses its state files: nothing is
compiled or parsed again, and it answers as the original does (issue 20)."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.page import cache as cache_module


def _run(*args):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_a_copied_workspace_parses_no_page_and_answers_the_same(tmp_path, monkeypatch):
    base = tmp_path / "kb"
    _run("init", str(base))
    (base / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    for i in range(5):
        (base / "raw" / f"Note {i}.md").write_text(f"# Note {i}\n\nAbout sync and topic {i}; "
                                                   f"see Note {(i + 1) % 5}.\n")
    _run("ingest", "-C", str(base))
    before = json.loads(_run("search", "sync topic", "-C", str(base), "--json").output)
    copy = tmp_path / "copy"
    shutil.copytree(base, copy, copy_function=shutil.copy)       # new mtimes, as cp -r
    parsed: list[str] = []
    real = cache_module.read_page

    def counting(root, file, *limits):
        parsed.append(file.name)
        return real(root, file, *limits)

    monkeypatch.setattr(cache_module, "read_page", counting)
    ingest = json.loads(_run("ingest", "-C", str(copy), "--json").output)
    assert ingest["ingested"] == 0 and ingest["skipped"] == 5
    after = json.loads(_run("search", "sync topic", "-C", str(copy), "--json").output)
    assert parsed == []                 # every page hashed, none parsed again
    assert after["results"] == before["results"]
    (copy / "wiki" / "Note 3.md").write_text("# Note 3\n\nEdited in the copy: sync.\n")
    _run("search", "sync topic", "-C", str(copy), "--json")
    assert parsed == ["Note 3.md"]
