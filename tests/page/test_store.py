"""The page cache keeps page texts in its file, not in memory: pages read back from the file
are equal to freshly parsed ones, answers do not change, and an edit on disk is never answered
with the old text, even while another process rewrites the file."""

from __future__ import annotations

import copy
import gc
import dataclasses
import json
import os
import pickle
import time

import pytest
from click.testing import CliRunner

from mindgraph.cli import cli
from mindgraph.page.cache import CACHE_VERSION, PageCache, open_pages
from mindgraph.page.model import Page
from mindgraph.page.store import StoredPage, forget_decoded
from mindgraph.page.vault import load_vault
from mindgraph.statefile import write_state


def _wiki(root):
    (root / "sub").mkdir(parents=True)
    (root / "One.md").write_text("---\ntags: [alpha]\n---\n# One\n\nLead about zeppelins.\n\n"
                                 "## Lift\n\nHydrogen lifts [[Two]].\n\n### Deeper\n\nMore.\n")
    (root / "sub" / "Two.md").write_text("# Two\n\nSubmarines dive. 日本語のテキスト。\n")
    return root


def _aged(root, seconds=3600):
    for file in root.rglob("*.md"):
        st = file.stat()
        os.utime(file, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def test_pages_read_back_from_the_file_equal_parsed_pages_and_hold_no_text(tmp_path):
    wiki = _wiki(tmp_path / "wiki")
    open_pages(wiki, tmp_path / "state")
    cache = PageCache.open(wiki, tmp_path / "state" / "pages.pickle")
    parsed = load_vault(wiki).pages
    assert set(cache.pages) == set(parsed)
    for path, page in cache.pages.items():
        assert isinstance(page, StoredPage)
        assert "body" not in page.__dict__ and "sections" not in page.__dict__
        assert page == parsed[path] and parsed[path] == page
        assert page.body == parsed[path].body and page.sections == parsed[path].sections
        assert hash(page) == hash(parsed[path])
        # what travels (pickles, copies) is a plain page with the texts
        for plain in (pickle.loads(pickle.dumps(page)), copy.copy(page)):
            assert type(plain) is Page and plain == parsed[path]
        other = dataclasses.replace(page, title="Other")
        assert other.title == "Other" and other.body == page.body
        assert other.sections == page.sections and "body" in other.__dict__


def test_an_edit_on_disk_is_read_again_and_unchanged_pages_keep_their_text(tmp_path):
    wiki = _wiki(tmp_path / "wiki")
    _aged(wiki)
    open_pages(wiki, tmp_path / "state")
    cache, changes = open_pages(wiki, tmp_path / "state")
    assert not changes
    two = cache.pages["sub/Two.md"]
    (wiki / "One.md").write_text("# One\n\nNow about balloons.\n")
    assert cache.refresh().changed == ("One.md",)
    assert cache.pages["One.md"] == load_vault(wiki).pages["One.md"]
    assert "balloons" in cache.pages["One.md"].sections[0].text
    # the save moved every page to the new file; one kept from before still reads its text
    assert cache.pages["sub/Two.md"] is two and "Submarines" in two.body
    assert PageCache.open(wiki, tmp_path / "state" / "pages.pickle").pages == \
        load_vault(wiki).pages


def test_another_process_rewriting_the_file_does_not_change_what_this_one_reads(tmp_path):
    wiki = _wiki(tmp_path / "wiki")
    _aged(wiki)
    open_pages(wiki, tmp_path / "state")
    first, _ = open_pages(wiki, tmp_path / "state")
    second, _ = open_pages(wiki, tmp_path / "state")
    before = load_vault(wiki).pages
    (wiki / "sub" / "Two.md").write_text("# Two\n\nA much longer text now: " + "words " * 500)
    (wiki / "Three.md").write_text("# Three\n\nNew page.\n")
    second.refresh()                        # rewrites pages.pickle with other offsets
    assert first.pages == before            # its mapping is the file it opened
    changes = first.refresh()
    assert changes.changed == ("sub/Two.md",) and changes.added == ("Three.md",)
    assert first.pages == load_vault(wiki).pages == second.pages


def test_a_page_cache_of_the_old_format_is_rebuilt_not_trusted(tmp_path):
    wiki = _wiki(tmp_path / "wiki")
    state = tmp_path / "state"
    state.mkdir()
    old = Page(path="One.md", title="Stale", aliases=(), tags=(), sections=(), links=(),
               body="stale text", content_hash="x")
    write_state(state / "pages.pickle", "pages", 1,
                {"version": 1, "root": str(wiki.resolve()), "entries": {"One.md": old}})
    assert CACHE_VERSION != 1
    cache, changes = open_pages(wiki, state)
    assert changes.added == ("One.md", "sub/Two.md")
    assert cache.pages == load_vault(wiki).pages


def test_search_answers_are_the_same_from_the_file_as_from_a_fresh_parse(tmp_path):
    wiki = _wiki(tmp_path / "wiki")
    (tmp_path / "mindgraph.yml").write_text("embedding:\n  provider: hashing\n  dimension: 32\n")

    def search(*words):
        result = CliRunner().invoke(cli, ["-C", str(tmp_path), "search", *words, "--json"],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["results"]     # not the seconds nor the sync

    queries = [("hydrogen", "lift"), ("submarines",), ("日本語",), ("zeppelins", "more")]
    first = [search(*q) for q in queries]         # parsed now, the state files written
    state = tmp_path / ".mindgraph"
    assert (state / "pages.pickle").is_file()
    again = [search(*q) for q in queries]         # pages read from the file
    assert again == first and all(first)
    (state / "pages.pickle").unlink()
    (state / "keyword.pickle").unlink()
    assert [search(*q) for q in queries] == first


@pytest.mark.slow
def test_vault_answers_from_the_file_equal_answers_from_parsed_pages(corpora, tmp_path):
    from mindgraph.retrieval.explain import explain
    from mindgraph.retrieval.keyword import KeywordIndex

    vault = corpora / "obsidian-help"
    open_pages(vault, tmp_path / "state")
    stored = PageCache.open(vault, tmp_path / "state" / "pages.pickle").pages
    parsed = load_vault(vault).pages
    assert len(stored) == 883 and all(isinstance(p, StoredPage) for p in stored.values())
    questions = [json.loads(line)["query"] for line in
                 (corpora / "obsidian-help-queries.dev.jsonl").read_text().splitlines()]

    def answers(pages):
        index = KeywordIndex.build(pages[p] for p in sorted(pages))
        return [[explain(hit, pages[hit.path], q).to_dict() for hit in index.search(q, 10)]
                for q in questions + ["同期", "插件", "canvas"]]

    assert answers(stored) == answers(parsed)


def test_a_save_lets_go_of_the_file_it_replaced(tmp_path):
    wiki = _wiki(tmp_path / "wiki")
    _aged(wiki)
    open_pages(wiki, tmp_path / "state")
    cache, _ = open_pages(wiki, tmp_path / "state")
    assert "Submarines" in cache.pages["sub/Two.md"].body     # a blob decoded and kept

    def deleted_state_files():
        gc.collect()
        links = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
                 if os.path.exists(f"/proc/self/fd/{fd}")]
        return [link for link in links if link.startswith(str(tmp_path))   # not other tests'
                and "pages.pickle" in link and "(deleted)" in link]

    (wiki / "One.md").write_text("# One\n\nEdited.\n")
    assert cache.refresh().changed == ("One.md",)
    assert "Submarines" in cache.pages["sub/Two.md"].body
    assert deleted_state_files() == []      # the replaced file is not held open


def test_closed_workspaces_leave_no_state_file_open(tmp_path):
    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph

    wiki = _wiki(tmp_path / "wiki")
    _aged(wiki)

    def open_state_files():
        gc.collect()
        return [fd for fd in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{fd}")
                and os.readlink(f"/proc/self/fd/{fd}").startswith(str(tmp_path))]

    for round in range(3):
        mg = Mindgraph(settings_from_dict({}, base_dir=tmp_path))
        assert mg.search("submarines", 3)          # decodes a page's text from the file
        (wiki / "One.md").write_text(f"# One\n\nEdited {round}.\n")
        time.sleep(0.01)
        mg.search("submarines", 3)                 # a refresh saves: a new file
        mg.close()
        del mg
    assert open_state_files() == []


def test_a_blob_cut_short_or_written_over_is_parsed_again_from_the_wiki(tmp_path):
    """The page cache's file truncated in place, or a same-size edit inside it (disk damage,
    another program): the page's text is parsed again from its wiki file, never served from
    the damaged bytes, and the next refresh writes a whole file."""
    wiki = _wiki(tmp_path / "wiki")
    _aged(wiki)
    open_pages(wiki, tmp_path / "state")
    state = tmp_path / "state" / "pages.pickle"
    data = state.read_bytes()
    at = data.index("Submarines".encode())
    state.write_bytes(data[:at] + b"Torpedoes!" + data[at + 10:])     # same size, in place
    cache, _ = open_pages(wiki, tmp_path / "state")
    assert "Submarines dive" in cache.pages["sub/Two.md"].body
    assert "Torpedoes" not in cache.pages["sub/Two.md"].body
    assert all("Torpedoes" not in s.text for s in cache.pages["sub/Two.md"].sections)
    assert cache._texts.damaged          # loaded from the file, the blob refused and repaired
    cache.refresh()
    assert b"Torpedoes" not in state.read_bytes()          # saved whole again
    with open(state, "r+b") as handle:                      # cut short under a reader
        handle.truncate(state.stat().st_size // 2)
    forget_decoded()
    assert "Lead about zeppelins" in cache.pages["One.md"].body
    assert "Submarines dive" in cache.pages["sub/Two.md"].body
