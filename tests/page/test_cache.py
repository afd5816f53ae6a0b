"""The persisted page cache: equal to load_vault, re-reads only what changed, never stale."""

from __future__ import annotations

import os
import shutil

import pytest

from mindgraph.page import cache as cache_module
from mindgraph.page.cache import CACHE_VERSION, PageCache, open_pages
from mindgraph.page.store import read_state_with_texts, write_state_with_texts
from mindgraph.statefile import write_state
from mindgraph.page.vault import load_vault


@pytest.fixture
def wiki(tmp_path):
    """A small wiki folder with nested pages, a hidden folder and a non-markdown file."""
    root = tmp_path / "wiki"
    (root / "sub").mkdir(parents=True)
    (root / ".obsidian").mkdir()
    (root / "One.md").write_text("# One\n\n[[Two]] #tag\n")
    (root / "sub" / "Two.md").write_text("---\naliases: [Deux]\n---\n# Two\n\nText.\n")
    (root / ".obsidian" / "Hidden.md").write_text("# not a page\n")
    (root / "notes.txt").write_text("not markdown")
    return root


@pytest.fixture
def read_count(monkeypatch):
    """A list that records every path the cache reads from disk (real reads, counted)."""
    seen: list[str] = []
    real = cache_module.read_page

    def counting(root, file, *limits):
        seen.append(file.relative_to(root).as_posix())
        return real(root, file, *limits)

    monkeypatch.setattr(cache_module, "read_page", counting)
    return seen


def _age(path, seconds=3600):
    """Backdate a file so it is not 'racy' (modified within the last seconds)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def test_first_refresh_equals_load_vault_and_persists(wiki, tmp_path):
    cache, changes = open_pages(wiki, tmp_path / "state")
    assert changes.added == ("One.md", "sub/Two.md") and not changes.changed
    assert cache.pages == load_vault(wiki).pages
    assert (tmp_path / "state" / "pages.pickle").is_file()


def test_reopening_reads_nothing_when_nothing_changed(wiki, tmp_path, read_count):
    for file in wiki.rglob("*.md"):
        _age(file)
    open_pages(wiki, tmp_path / "state")
    assert sorted(read_count) == ["One.md", "sub/Two.md"]
    read_count.clear()
    cache, changes = open_pages(wiki, tmp_path / "state")
    assert not changes and read_count == []
    assert cache.pages == load_vault(wiki).pages


def test_edit_add_delete_and_touch(wiki, tmp_path, read_count):
    for file in wiki.rglob("*.md"):
        _age(file)
    cache, _ = open_pages(wiki, tmp_path / "state")
    read_count.clear()
    (wiki / "One.md").write_text("# One\n\nNew words here.\n")
    (wiki / "sub" / "Three.md").write_text("# Three\n")
    (wiki / "sub" / "Two.md").unlink()
    changes = cache.refresh()
    assert changes.to_dict() == {"added": ["sub/Three.md"], "changed": ["One.md"],
                                 "removed": ["sub/Two.md"]}
    assert sorted(read_count) == ["One.md", "sub/Three.md"]
    assert "New words" in cache.pages["One.md"].body
    # Touching a file (new mtime, same bytes) is read again but is not a change.
    _age(wiki / "One.md", seconds=10)
    assert not cache.refresh()
    assert PageCache.open(wiki, tmp_path / "state" / "pages.pickle").pages == cache.pages


def test_same_size_edit_within_the_same_timestamp_is_seen(wiki, tmp_path):
    cache, _ = open_pages(wiki, tmp_path / "state")
    page = wiki / "One.md"
    before = page.stat()
    page.write_text(page.read_text().replace("tag", "tog"))
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime, same size
    changes = cache.refresh()
    assert changes.changed == ("One.md",)
    assert cache.pages["One.md"].tags == ("tog",)


def test_refresh_only_given_paths(wiki, tmp_path, read_count):
    cache, _ = open_pages(wiki, tmp_path / "state")
    read_count.clear()
    (wiki / "One.md").write_text("# One\n\nchanged\n")
    (wiki / "sub" / "Two.md").write_text("# Two\n\nchanged too\n")
    changes = cache.refresh(only=["One.md", "Gone.md"])
    assert changes.changed == ("One.md",) and read_count == ["One.md"]
    (wiki / "One.md").unlink()
    assert cache.refresh(only=["One.md"]).removed == ("One.md",)


def test_problem_files_become_pages_when_fixed(wiki, tmp_path):
    (wiki / "Bad.md").write_bytes(b"\xff\xfe not utf-8")
    cache, changes = open_pages(wiki, tmp_path / "state")
    assert "Bad.md" not in cache.pages
    assert [(p.path, p.kind) for p in cache.problems] == [("Bad.md", "not-utf8")]
    (wiki / "Bad.md").write_text("# Bad no more\n")
    assert cache.refresh().added == ("Bad.md",)
    assert cache.problems == []


def test_stale_or_corrupt_cache_files_are_ignored(wiki, tmp_path, read_count):
    state = tmp_path / "state"
    open_pages(wiki, state)
    file = state / "pages.pickle"
    data, texts = read_state_with_texts(file, "pages", CACHE_VERSION)
    data["fingerprint"] = "a different parser"
    write_state_with_texts(file, "pages", CACHE_VERSION, data,
                           [texts.raw((0, data["texts_length"]))])
    read_count.clear()
    cache, changes = open_pages(wiki, state)
    assert len(changes.added) == 2 and len(read_count) == 2
    file.write_bytes(b"garbage")
    cache, changes = open_pages(wiki, state)
    assert len(changes.added) == 2


def test_a_copied_wiki_reuses_the_cache_without_parsing_a_page(wiki, tmp_path, read_count):
    """cp -r gives every file a new mtime and the cache another folder: each file is read
    and hashed once, none is parsed again unless its bytes differ."""
    state = tmp_path / "state"
    original, _ = open_pages(wiki, state)
    copy = tmp_path / "copy"
    shutil.copytree(wiki, copy, copy_function=shutil.copy)     # new mtimes, as cp -r
    (copy / "sub" / "Two.md").write_text("# Two\n\nedited in the copy\n")
    read_count.clear()
    cache, changes = open_pages(copy, state)
    assert read_count == ["sub/Two.md"]             # the edited page only; One.md hashed
    assert changes.changed == ("sub/Two.md",) and not changes.added and not changes.removed
    assert cache.pages == load_vault(copy).pages
    assert cache.pages["One.md"].content_hash == original.pages["One.md"].content_hash
    for file in copy.rglob("*.md"):
        _age(file)
    open_pages(copy, state)                 # saved for the copy's folder now
    read_count.clear()
    again, changes = open_pages(copy, state)
    assert not changes and read_count == [] and again.pages == cache.pages


@pytest.mark.slow
def test_real_vault_cache_equals_load_vault(corpora, tmp_path):
    cache, changes = open_pages(corpora / "obsidian-help", tmp_path / "state")
    assert len(changes.added) == 883
    assert cache.pages == load_vault(corpora / "obsidian-help").pages
    again, changes = open_pages(corpora / "obsidian-help", tmp_path / "state")
    assert not changes and again.pages == cache.pages
