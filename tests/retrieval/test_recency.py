"""Recency by real dates only, on copies of the real release notes and help pages.

"Latest …" questions rank newer release notes first; an undated page is never moved by the
time its file was copied."""

from __future__ import annotations

import datetime as dt
import os
import shutil

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.core import Mindgraph
from mindgraph.page.dates import note_dates
from mindgraph.page.parse import parse_page
from mindgraph.retrieval.recency import asks_for_recent, subject

OLD, NOW = 86_400 * 365 * 10, 1_790_000_000     # 1980, 2026


def workspace(root, corpora, mtime_of=lambda rel: NOW):
    """Release notes + the English plugin pages under raw/, compiled offline."""
    help_ = corpora / "obsidian-help"
    shutil.copytree(help_ / "Release notes", root / "raw" / "Release notes")
    shutil.copytree(help_ / "en" / "Plugins", root / "raw" / "Plugins")
    for path in (root / "raw").rglob("*.md"):
        mtime = mtime_of(path.relative_to(root / "raw").as_posix())
        os.utime(path, (mtime, mtime))
    (root / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n")
    result = CliRunner().invoke(cli, ["ingest", "-C", str(root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    mg = Mindgraph.open(root)
    mg.embed()
    return mg


def release_dates(corpora) -> dict[str, dt.date]:
    out = {}
    folder = corpora / "obsidian-help" / "Release notes"
    for path in folder.rglob("*.md"):
        rel = "Release notes/" + path.relative_to(folder).as_posix()
        page = parse_page(path.read_text(encoding="utf-8"), rel)
        found = note_dates(page.frontmatter, page.body, rel)
        if found:
            out[rel] = found.created
    return out


@pytest.fixture(scope="module")
def copied(tmp_path_factory, corpora):
    return workspace(tmp_path_factory.mktemp("recency"), corpora)


@pytest.mark.parametrize("query", ["latest release notes", "what changed recently?"])
def test_questions_for_what_is_new_rank_newer_release_notes_first(copied, corpora, query):
    dates = release_dates(corpora)
    newest = sorted(dates.values(), reverse=True)
    response = copied.smart_search(query)
    dated = [r for r in response.results if r.page in dates]
    assert dated, [r.page for r in response.results]
    assert dates[dated[0].page] >= newest[4]              # one of the five newest
    assert "recent" in dated[0].boosts
    assert all(dates[r.page] >= newest[9] for r in dated[:3])   # and so are the next two


def test_what_is_new_in_a_feature_shows_its_recent_release_notes(copied, corpora):
    dates = release_dates(corpora)
    newest = max(dates.values())
    results = copied.smart_search("What is new in Canvas?").results
    assert all(r.page in dates and (newest - dates[r.page]).days <= 120 for r in results[:2])
    canvas = next(r for r in results if r.page == "Plugins/Canvas.md")   # undated: untouched
    assert not {"recent", "recency"} & set(canvas.boosts)


def test_the_newest_notes_on_the_subject_join_the_candidates(copied, corpora):
    dates = release_dates(corpora)
    newest = max(dates.values())
    response = copied.smart_search("recent changes to Bases")
    first = next(r for r in response.results if r.page in dates)
    assert (newest - dates[first.page]).days <= 60, first.page     # 1.13.x, not 1.9.x
    assert response.results.index(first) == 0


def test_recent_query_words():
    for query in ("latest release notes", "What's new in Canvas", "what has changed lately",
                  "最近の変更", "最新版本的新功能"):
        assert asks_for_recent(query), query
    for query in ("how do I create a new note", "release notes of Canvas", "recents tab",
                  "可我的应用已开启自动更新并且显示是最新版。这是怎么回事？"):
        assert not asks_for_recent(query), query
    assert subject("recent changes to Bases") == "to Bases"
    assert subject("latest release notes") == "release notes"


def test_an_undated_page_is_not_moved_by_its_copy_time(tmp_path, corpora):
    fresh = workspace(tmp_path / "fresh", corpora)
    stale = workspace(tmp_path / "stale", corpora,
                      lambda rel: OLD if rel == "Plugins/Canvas.md" else NOW)
    for query in ("how do I use canvas", "latest release notes"):
        ranked = [[r.page for r in mg.smart_search(query).results] for mg in (fresh, stale)]
        assert ranked[0] == ranked[1], query
    top = stale.smart_search("how do I use canvas").results[0]
    assert top.page == "Plugins/Canvas.md" and "recency" not in top.boosts
