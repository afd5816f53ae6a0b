"""Timeline: dates in order of trust, concept matching, the real release notes."""

import datetime as dt
import json
import os
import shutil
import subprocess
from pathlib import Path

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

    backwards = timeline("knowledge", "--since", "2025-01-01", "--until", "2020-01-01")
    assert backwards.exit_code == 2 and "swap them" in backwards.output
    assert not list(tmp_path.rglob("*pages.pickle"))     # refused before reading a note
    for concept in ("/", " ", "../../etc/passwd"[:6]):
        result = timeline(concept)
        assert result.exit_code == 2 and "has no words to look for" in result.output
    by_path = json.loads(timeline("Knowledge base.md").output)      # a path names the page
    assert [e["path"] for e in by_path["entries"]] == ["Knowledge base.md"]


LABELS = Path(__file__).resolve().parents[2] / "bench" / "questions" / "timeline-features.jsonl"
FEATURES = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def release_vault(tmp_path_factory, corpora):
    """The release notes and the English help pages, freshly copied (file times: today)."""
    raw = tmp_path_factory.mktemp("timeline") / "raw"
    for part in ("Release notes", "en"):
        shutil.copytree(corpora / "obsidian-help" / part, raw / part)
    return raw


@pytest.mark.parametrize("label", FEATURES, ids=lambda f: f["concept"])
def test_a_feature_timeline_starts_at_the_release_that_introduced_it(release_vault, label):
    timeline = build_timeline(label["concept"], [("raw", release_vault)], use_git=False)
    notes = [e for e in timeline.entries if e.path.startswith("Release notes/")]
    assert notes[0].path in label["introduced"], (notes[0].path, notes[0].snippet)
    assert all(e.date >= label["date"] and e.date_source != "mtime" for e in notes)


def test_a_feature_is_followed_as_a_name_not_as_a_common_word(release_vault):
    canvas = {e.path: e for e in build_timeline("Canvas", [("raw", release_vault)],
                                                use_git=False).entries}
    assert "Release notes/v0.6.5.md" not in canvas           # "canvas rendering" (graph view)
    assert "Release notes/v1.6.1.md" in canvas               # "canvas cards": after it was named
    properties = build_timeline("Properties", [("raw", release_vault)], use_git=False)
    assert "metadata" not in properties.terms and "front matter" not in properties.terms
    assert not any("style" in e.snippet and "properties" in e.snippet
                   for e in properties.entries)
    bases = build_timeline("Bases", [("raw", release_vault)], use_git=False)
    assert not any(f"**base** {word}" in e.snippet for e in bases.entries
                   for word in ("filename", "font"))


def test_links_count_case_matters_and_undated_notes_are_counted_not_dated(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "canvas-plugin.md").write_text("---\ntitle: Canvas\naliases: [Board]\n---\n"
                                          "Canvas is a core plugin.\n")
    (raw / "a.md").write_text("Released on 2020/01/01.\n\nFaster canvas rendering.\n")
    (raw / "b.md").write_text("Released on 2021/01/01.\n\nSee [[canvas-plugin|the infinite "
                              "board]].\n")
    (raw / "c.md").write_text("Released on 2022/01/01.\n\nThe canvas zooms faster.\n")
    (raw / "d.md").write_text("Undated: the Canvas got groups.\n")
    os.utime(raw / "d.md", (86_400, 86_400))
    timeline = build_timeline("canvas", [("raw", raw)], use_git=False)
    assert timeline.terms == ("Canvas", "Board")
    assert [(e.path, e.matched) for e in timeline.entries] == [
        ("b.md", "the infinite board"), ("c.md", "canvas")]
    assert timeline.undated == 2      # d.md and the Canvas page itself: no 1970 entry
    result = CliRunner().invoke(cli, ["timeline", "canvas", "-C", str(tmp_path), "--no-git"])
    assert "2 undated notes mention it too" in result.output


def test_one_undated_note_is_told_in_the_singular_with_the_places_looked_at(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    # a date in the body, mid-sentence: no dating rule reads it (page/dates.py)
    (raw / "alice.md").write_text("# Alice\n\nAlice met the Zeppelin team on 2024-03-01.\n")
    result = CliRunner().invoke(cli, ["timeline", "Zeppelin", "-C", str(tmp_path), "--no-git"])
    out = " ".join(result.output.split())
    assert "1 undated note mentions it too: no date in its frontmatter (created, date, " \
        "updated, …), its title or first heading, its first 5 lines (a date alone on a line " \
        "or after a word such as 'Released'), its file name; a date anywhere else in a note " \
        "does not date it." in out
    with_git = CliRunner().invoke(cli, ["timeline", "Zeppelin", "-C", str(tmp_path)])
    assert "its file name or git;" in " ".join(with_git.output.split())


def test_code_is_not_a_mention(tmp_path):
    (tmp_path / "Workspaces.md").write_text("Workspaces is a core plugin.\n")
    (tmp_path / "a.md").write_text("Released on 2021/01/01.\n\nThe `Workspace.on()` API.\n")
    assert build_timeline("Workspaces", [("raw", tmp_path)], use_git=False).entries == ()


def test_a_limited_timeline_says_how_many_it_shows_of_how_many(tmp_path):
    import anyio
    from fastapi.testclient import TestClient
    from mcp import Client

    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph
    from mindgraph.serve.mcp import create_mcp_server
    from mindgraph.serve.rest import create_app

    (tmp_path / "wiki").mkdir()
    for day in range(1, 5):
        (tmp_path / "wiki" / f"day{day}.md").write_text(
            f"---\ndate: 2024-01-0{day}\n---\nWorked on the zebra feature.\n")
    cli_args = ["timeline", "zebra", "-C", str(tmp_path), "--no-git"]
    shown = CliRunner().invoke(cli, [*cli_args, "--limit", "2"])
    assert shown.exit_code == 0, shown.output
    assert "showing 2 of 4 notes that mention 'zebra'" in shown.output
    assert "4 notes mention 'zebra'" in CliRunner().invoke(cli, cli_args).output
    data = json.loads(CliRunner().invoke(cli, [*cli_args, "--limit", "2", "--json"]).output)
    assert (data["count"], data["total"]) == (2, 4)
    short = json.loads(CliRunner().invoke(cli, [*cli_args, "-n", "1", "--json"]).stdout)
    assert (short["count"], short["total"]) == (1, 4)        # -n, as `search -n`

    mg = Mindgraph(settings_from_dict({}, base_dir=tmp_path))
    rest = TestClient(create_app(mg), base_url="http://127.0.0.1:8765").get("/timeline", params={"concept": "zebra", "limit": 3})
    assert (rest.json()["count"], rest.json()["total"]) == (3, 4)

    async def ask_mcp():
        async with Client(create_mcp_server(mg)) as client:
            result = await client.call_tool("timeline", {"concept": "zebra", "limit": 1})
            return json.loads(result.content[0].text)
    answer = anyio.run(ask_mcp)
    assert (answer["count"], answer["total"]) == (1, 4)


def test_a_second_timeline_reads_parsed_pages_from_the_cache_and_sees_changes(tmp_path,
                                                                              monkeypatch):
    import mindgraph.page.cache
    import mindgraph.page.vault

    runner = CliRunner()
    assert runner.invoke(cli, ["init", str(tmp_path / "kb")]).exit_code == 0
    raw = tmp_path / "kb" / "raw"
    for day in (1, 2):
        (raw / f"day{day}.md").write_text(f"---\ndate: 2024-01-0{day}\n---\nThe Zebra tool.\n")
    assert runner.invoke(cli, ["ingest", "-C", str(tmp_path / "kb")]).exit_code == 0
    for note in (tmp_path / "kb").glob("*/*.md"):   # older than the cache's racy window
        os.utime(note, (note.stat().st_mtime - 3600,) * 2)
    argv = ["timeline", "Zebra", "-C", str(tmp_path / "kb"), "--no-git", "--json"]
    first = runner.invoke(cli, argv)
    assert first.exit_code == 0, first.output

    parsed = []
    for module in (mindgraph.page.vault, mindgraph.page.cache):
        original = module.read_page
        monkeypatch.setattr(module, "read_page",
                            lambda root, file, *rest, _read=original: parsed.append(file) or
                            _read(root, file, *rest))
    second = runner.invoke(cli, argv)
    assert second.output == first.output and parsed == []      # nothing parsed again
    (raw / "day3.md").write_text("---\ndate: 2024-01-03\n---\nThe Zebra tool again.\n")
    third = json.loads(runner.invoke(cli, argv).output)
    assert [e["path"] for e in third["entries"]] == ["day1.md", "day2.md", "day3.md"]
    assert [p.name for p in parsed] == ["day3.md"]
    library = build_timeline("Zebra", [("raw", raw), ("wiki", tmp_path / "kb" / "wiki")],
                             use_git=False)
    assert third == json.loads(json.dumps(library.to_dict()))


def test_a_term_the_note_already_has_in_bold_is_not_bolded_again(tmp_path, corpora):
    """v1.1.0 says "Introducing the **Canvas** core plugin": the snippet showed
    ****Canvas****; a match inside a bold phrase closed and reopened the note's bold."""
    raw = tmp_path / "raw"
    raw.mkdir()
    shutil.copy(corpora / "obsidian-help" / "Release notes" / "v1.1.0.md", raw / "v1.1.0.md")
    (raw / "mobile.md").write_text("Released on 2023/01/10.\n\nThis adds **Obsidian Canvas** "
                                   "to phones, and __Canvas__ groups.\n")
    (raw / "plain.md").write_text("Released on 2023/02/01.\n\nCanvas cards load faster.\n")
    result = CliRunner().invoke(cli, ["timeline", "Canvas", "-C", str(tmp_path), "--no-git",
                                      "--json"])
    assert result.exit_code == 0, result.output
    snippets = {e["path"]: e["snippet"] for e in json.loads(result.stdout)["entries"]}
    assert "Introducing the **Canvas** core plugin" in snippets["v1.1.0.md"]
    assert "This adds **Obsidian Canvas** to phones" in snippets["mobile.md"]
    assert "**Canvas** cards load faster" in snippets["plain.md"]
    assert not any("****" in s or "** **" in s for s in snippets.values())


def test_text_names_each_note_in_the_raw_folder_the_workspace_reads(tmp_path):
    # with paths.raw elsewhere (init --raw ~/vault) the text said "raw/v1.1.0.md": no file
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "v1.1.0.md").write_text("<small>Released December 5, 2022</small>\n\n"
                                     "Introducing the Canvas core plugin.\n")
    assert CliRunner().invoke(cli, ["init", str(tmp_path / "kb"), "--raw",
                                    str(vault)]).exit_code == 0
    result = CliRunner().invoke(cli, ["timeline", "canvas", "-C", str(tmp_path / "kb"),
                                      "--no-git"])
    assert result.exit_code == 0, result.output
    assert "2022-12-05  [content]  ../vault/v1.1.0.md" in result.output, result.output
    data = json.loads(CliRunner().invoke(cli, ["timeline", "canvas", "-C", str(tmp_path / "kb"),
                                               "--no-git", "--json"]).stdout)
    assert {e["folder"] for e in data["entries"]} == {"raw"}        # JSON keeps the label


def test_a_snippet_shows_the_note_as_read_not_its_markup(tmp_path):
    """The snippet (CLI, REST, the dashboard's timeline list) showed the note's markup:
    "# **Compost** … Mentioned in [[Garden]]. > [!tip]- Smell > A bad smell". Headings,
    link brackets, callout and quote markers go; the match is still marked, inside a link."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "Compost.md").write_text(
        "---\ndate: 2024-03-01\n---\n# Compost\n\nGreens and browns, about 1:3. Mentioned in "
        "[[Garden]] and [[Soil|the soil note]]. ![[pile.png]]\n\n> [!tip]- Smell\n"
        "> A bad smell means too many greens.\n")
    result = CliRunner().invoke(cli, ["timeline", "Compost", "-C", str(tmp_path), "--no-git",
                                      "--json"])
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)["entries"]
    assert entry["snippet"].startswith("**Compost** Greens and browns, about 1:3. Mentioned in "
                                       "Garden and the soil note."), entry
    assert "pil" not in entry["snippet"]            # an embed cut at the edge: taken whole
    garden = CliRunner().invoke(cli, ["timeline", "Garden", "-C", str(tmp_path), "--no-git",
                                      "--json"])
    [entry] = json.loads(garden.stdout)["entries"]
    assert "Mentioned in **Garden** and the soil note. Smell A bad smell" in entry["snippet"]
    assert not any(mark in entry["snippet"] for mark in ("[[", "]]", "[!tip]", "> ", "# "))


def test_a_snippet_shows_a_notes_html_as_its_words_and_no_tag_cut_in_half(tmp_path):
    """Each of the Help vault's release notes begins with ``<small>Released December 5,
    2022</small>``: the timeline of Canvas showed the tags, and ``<img alt="…`` where the
    window cut an image tag. A tag leaves its words (an image its alt text), one cut at the
    window's edge goes; HTML in `code` stays."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "v1.1.0.md").write_text(
        "# Obsidian 1.1.0\n\n<small>Released December 5, 2022</small>\n\nIntroducing the "
        "<b>Canvas</b> core plugin, written `<b>Canvas</b>` in HTML. You can now lay notes "
        "out.<img alt=\"A canvas with cards and arrows between them\" src=\"canvas-"
        "overview-with-many-cards.png\">\n")
    result = CliRunner().invoke(cli, ["timeline", "Canvas", "-C", str(tmp_path), "--no-git",
                                      "--json"])
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)["entries"]
    assert entry["snippet"] == ("Obsidian 1.1.0 Released December 5, 2022 Introducing the "
                                "**Canvas** core "
                                "plugin, written `<b>Canvas</b>` in HTML. You can now lay "
                                "notes out.…"), entry["snippet"]
