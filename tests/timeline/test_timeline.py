"""Timeline: dates in order of trust, concept matching, the real release notes."""

import datetime as dt
import json
import os
import subprocess

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.timeline.build import build_timeline, term_pattern


def test_term_pattern_boundaries_plural_and_cjk():
    pattern = term_pattern(["Bookmarks", "ブックマーク"])
    assert pattern.search("Added a bookmark.")
    assert pattern.search("新しいブックマーク機能")
    assert not pattern.search("bookmarklet")
    assert not term_pattern(["api"]).search("capital")
    # plurals in -es and -ies, both ways; a word ending in one "s" may be singular
    assert term_pattern(["Canvas"]).search("Two canvases side by side")
    assert term_pattern(["canvases"]).search("Open the Canvas")
    assert term_pattern(["library"]).search("shared libraries")
    assert term_pattern(["Libraries"]).search("a library")
    assert term_pattern(["box"]).search("check boxes")
    assert not term_pattern(["Canvas"]).search("canvassing")
    for plural, singular in (("Databases", "database"), ("Caches", "cache"),
                             ("Cookies", "cookie"), ("Releases", "release")):
        assert term_pattern([plural]).search(f"one {singular} here")


def test_bookmarks_timeline_starts_with_the_release_that_added_it(corpora):
    notes = corpora / "obsidian-help" / "Release notes"
    timeline = build_timeline("Bookmarks", [("raw", notes)], use_git=False)
    first = timeline.entries[0]
    assert (first.path, first.date, first.date_source) == ("v1.2.0.md", "2023-03-29", "content")
    assert "Bookmarks" in first.snippet and "core plugin" in first.snippet
    dates = [e.date for e in timeline.entries]
    assert dates == sorted(dates)
    newest = build_timeline("Bookmarks", [("raw", notes)], newest_first=True, limit=3,
                            use_git=False)
    assert [e.date for e in newest.entries] == sorted(dates, reverse=True)[:3]
    window = build_timeline("Bookmarks", [("raw", notes)], since=dt.date(2023, 4, 1),
                            until=dt.date(2023, 4, 30), use_git=False)
    assert window.entries and all("2023-04-01" <= e.date <= "2023-04-30"
                                  for e in window.entries)


def test_raw_and_compiled_page_are_one_entry_and_aliases_count(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "wiki").mkdir()
    (tmp_path / "raw" / "log.md").write_text("---\ndate: 2024-01-05\n---\nTried the KB tool.\n")
    (tmp_path / "wiki" / "log.md").write_text(
        "---\ntitle: Log\ndate: 2024-01-05\nsources:\n  - path: log.md\n---\nTried the KB tool.\n")
    (tmp_path / "wiki" / "Knowledge base.md").write_text(
        "---\ntitle: Knowledge base\naliases: [KB]\ndate: 2023-12-01\n---\nA knowledge base.\n")
    result = CliRunner().invoke(cli, ["timeline", "Knowledge base", "-C", str(tmp_path),
                                      "--json", "--no-git"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["terms"] == ["Knowledge base", "KB"]
    assert [(e["folder"], e["path"], e["page"]) for e in data["entries"]] == [
        ("wiki", "Knowledge base.md", None), ("raw", "log.md", "log.md")]


def test_a_concept_without_words_or_backwards_dates_is_a_usage_error(tmp_path):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Knowledge base.md").write_text(
        "---\ntitle: Knowledge base\ndate: 2023-12-01\n---\nA knowledge base.\n")
    (tmp_path / "wiki" / "Other.md").write_text("---\ndate: 2023-12-02\n---\nNothing here.\n")

    def timeline(*args):
        return CliRunner().invoke(cli, ["timeline", *args, "-C", str(tmp_path), "--no-git",
                                        "--json"])

    for concept in ("/", " ", "../../etc/passwd"[:6]):
        result = timeline(concept)
        assert result.exit_code == 2 and "has no words to look for" in result.output
    backwards = timeline("knowledge", "--since", "2025-01-01", "--until", "2020-01-01")
    assert backwards.exit_code == 2 and "swap them" in backwards.output
    by_path = json.loads(timeline("Knowledge base.md").output)      # a path names the page
    assert [e["path"] for e in by_path["entries"]] == ["Knowledge base.md"]
