"""Compiled pages carry real dates only, with their source; new date rules or a first commit
recompile. On copies of the real Obsidian vault and release notes."""

from __future__ import annotations

import os
import shutil
import subprocess

import yaml
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.page.markdown import split_frontmatter

OLD = 86_400 * 365 * 10    # 1980: a copy made long ago


def ingest(workspace):
    result = CliRunner().invoke(cli, ["ingest", "-C", str(workspace), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def meta(workspace, rel):
    text = (workspace / "wiki" / rel).read_text(encoding="utf-8")
    return yaml.safe_load(split_frontmatter(text)[0])


def dates(workspace, rel):
    m = meta(workspace, rel)
    return m.get("created"), m.get("updated"), m.get("date_source")


def copy_tree(source, target, mtime):
    shutil.copytree(source, target)
    for path in target.rglob("*.md"):
        os.utime(path, (mtime, mtime))


def test_release_notes_are_dated_by_what_they_say_and_the_help_by_nothing(tmp_path, corpora):
    (tmp_path / "raw").mkdir()
    copy_tree(corpora / "obsidian-help" / "Release notes", tmp_path / "raw" / "Release notes",
              OLD)
    copy_tree(corpora / "obsidian-help" / "en" / "Plugins", tmp_path / "raw" / "Plugins", OLD)
    ingest(tmp_path)
    assert dates(tmp_path, "Release notes/v1.2.0.md") == ("2023-03-29", "2023-03-29", "content")
    assert dates(tmp_path, "Release notes/v0.0.1.md") == ("2020-03-30", "2020-03-30", "content")
    assert dates(tmp_path, "Release notes/v1.10.0.md") == ("2025-10-01", "2025-10-01",
                                                           "frontmatter")
    assert dates(tmp_path, "Plugins/Canvas.md") == (None, None, None)      # undated: no 1980
    assert dates(tmp_path, "Release notes/Mobile/v1.0.0.md") == (None, None, None)
    pages = list((tmp_path / "wiki").rglob("*.md"))
    assert not any("1980-" in p.read_text(encoding="utf-8") for p in pages)


def git(repo, *args, date="2021-06-07"):
    env = {**os.environ, "GIT_AUTHOR_DATE": f"{date}T10:00:00+00:00",
           "GIT_COMMITTER_DATE": f"{date}T10:00:00+00:00"}
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True, env=env)


def test_git_history_dates_a_note_and_a_first_commit_recompiles_it(tmp_path, corpora):
    (tmp_path / "raw").mkdir()
    shutil.copy(corpora / "obsidian-help" / "en" / "Plugins" / "Canvas.md",
                tmp_path / "raw" / "Canvas.md")
    git(tmp_path / "raw", "init", "-q")
    ingest(tmp_path)
    assert dates(tmp_path, "Canvas.md") == (None, None, None)       # not committed yet
    git(tmp_path / "raw", "add", "-A")
    git(tmp_path / "raw", "commit", "-qm", "add canvas", date="2021-06-07")
    assert '"ingested": 1' in ingest(tmp_path)                      # same bytes, new dates
    assert dates(tmp_path, "Canvas.md") == ("2021-06-07", "2021-06-07", "git")
    with open(tmp_path / "raw" / "Canvas.md", "a", encoding="utf-8") as f:
        f.write("\nMore.\n")
    git(tmp_path / "raw", "commit", "-qam", "more", date="2022-02-03")
    ingest(tmp_path)
    assert dates(tmp_path, "Canvas.md") == ("2021-06-07", "2022-02-03", "git")
    assert '"skipped": 1' in ingest(tmp_path)


def test_new_date_rules_recompile_every_page(tmp_path, corpora, monkeypatch):
    (tmp_path / "raw").mkdir()
    shutil.copy(corpora / "obsidian-help" / "Release notes" / "v1.2.0.md",
                tmp_path / "raw" / "v1.2.0.md")
    ingest(tmp_path)
    assert '"skipped": 1' in ingest(tmp_path)
    monkeypatch.setattr("mindgraph.page.dates.DATES_VERSION", "next")
    assert '"ingested": 1' in ingest(tmp_path)
