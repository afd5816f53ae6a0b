"""The watched page cache: inotify events instead of scans, and never staler than a scan."""

from __future__ import annotations

import os
import random
import shutil
import time

import pytest

from mindgraph.page import cache as cache_module
from mindgraph.page import watch as watch_module
from mindgraph.page.cache import open_pages
from mindgraph.page.vault import load_vault
from mindgraph.page.watch import WikiWatcher

pytestmark = pytest.mark.skipif(watch_module.INotify is None, reason="inotify is Linux-only")


@pytest.fixture
def wiki(tmp_path):
    root = tmp_path / "wiki"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / ".obsidian").mkdir()
    (root / "One.md").write_text("# One\n\n[[Two]] #tag\n")
    (root / "sub" / "Two.md").write_text("# Two\n\nText.\n")
    (root / "sub" / "deep" / "Three.md").write_text("# Three\n")
    return root


@pytest.fixture
def scans(monkeypatch):
    """Counts full folder scans (the real scan runs)."""
    count = [0]
    real = cache_module._scan

    def counting(root):
        count[0] += 1
        return real(root)

    monkeypatch.setattr(cache_module, "_scan", counting)
    return count


def watched(wiki, tmp_path):
    cache, _ = open_pages(wiki, tmp_path / "state", watch=True)
    assert not cache.watching          # a one-shot command never pays for a watch
    cache.refresh()
    assert cache.watching
    return cache


def test_edits_adds_and_removes_are_seen_without_scanning(wiki, tmp_path, scans):
    cache = watched(wiki, tmp_path)
    before = scans[0]
    (wiki / "One.md").write_text("# One\n\nrewritten\n")
    (wiki / "sub" / "New.md").write_text("# New\n")
    (wiki / "sub" / "deep" / "Three.md").unlink()
    (wiki / "notes.txt").write_text("not a page")
    (wiki / ".obsidian" / "Hidden.md").write_text("# hidden folder")
    changes = cache.refresh()
    assert changes.to_dict() == {"added": ["sub/New.md"], "changed": ["One.md"],
                                 "removed": ["sub/deep/Three.md"]}
    assert not cache.refresh()
    assert scans[0] == before
    assert cache.pages == load_vault(wiki).pages


def test_atomic_replace_and_rename_are_seen(wiki, tmp_path):
    cache = watched(wiki, tmp_path)
    tmp = wiki / "sub" / ".One.md.tmp"
    tmp.write_text("# One\n\nreplaced atomically\n")
    os.replace(tmp, wiki / "One.md")
    os.rename(wiki / "sub" / "Two.md", wiki / "sub" / "deep" / "Two renamed.md")
    changes = cache.refresh()
    assert changes.to_dict() == {"added": ["sub/deep/Two renamed.md"], "changed": ["One.md"],
                                 "removed": ["sub/Two.md"]}
    assert cache.pages == load_vault(wiki).pages


def test_same_size_edit_with_the_same_mtime_is_seen(wiki, tmp_path):
    page = wiki / "One.md"
    old = page.stat().st_mtime_ns - 3600 * 10**9    # not "racy": a scan would trust the stat
    os.utime(page, ns=(old, old))
    cache = watched(wiki, tmp_path)
    before = page.stat()
    page.write_text(page.read_text().replace("tag", "tog"))
    os.utime(page, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cache.refresh().changed == ("One.md",)
    assert cache.pages["One.md"].tags == ("tog",)


def test_folder_changes_fall_back_to_one_scan_and_keep_watching(wiki, tmp_path, scans):
    cache = watched(wiki, tmp_path)
    (wiki / "new").mkdir()
    (wiki / "new" / "A.md").write_text("# A\n")
    before = scans[0]
    assert cache.refresh().added == ("new/A.md",)
    assert scans[0] == before + 1
    # the new folder is watched now: a page written into it needs no scan
    (wiki / "new" / "B.md").write_text("# B\n")
    assert cache.refresh().added == ("new/B.md",) and scans[0] == before + 1
    os.rename(wiki / "sub", wiki / "moved")
    changes = cache.refresh()
    assert set(changes.added) == {"moved/Two.md", "moved/deep/Three.md"}
    assert set(changes.removed) == {"sub/Two.md", "sub/deep/Three.md"}
    (wiki / "moved" / "deep" / "Three.md").write_text("# Three\n\nafter the move\n")
    assert cache.refresh().changed == ("moved/deep/Three.md",)
    shutil.rmtree(wiki / "moved")
    assert set(cache.refresh().removed) == {"moved/Two.md", "moved/deep/Three.md"}
    assert cache.watching and cache.pages == load_vault(wiki).pages


def test_queue_overflow_means_a_full_scan(wiki, tmp_path, scans):
    cache = watched(wiki, tmp_path)
    limit = int(open("/proc/sys/fs/inotify/max_queued_events").read())
    a, b = wiki / "One.md", wiki / "sub" / "Two.md"
    with open(a, "a") as fa, open(b, "a") as fb:
        for i in range(limit // 2 + 10):    # alternating files: the kernel cannot merge them
            fa.write("a")
            fa.flush()
            fb.write("b")
            fb.flush()
    (wiki / "Late.md").write_text("# Late\n")
    before = scans[0]
    changes = cache.refresh()
    assert scans[0] == before + 1
    assert changes.added == ("Late.md",) and set(changes.changed) == {"One.md", "sub/Two.md"}
    assert cache.watching and cache.pages == load_vault(wiki).pages


def test_a_deleted_wiki_folder_makes_the_cache_scan_again(wiki, tmp_path):
    cache = watched(wiki, tmp_path)
    shutil.rmtree(wiki)
    assert len(cache.refresh().removed) == 3
    wiki.mkdir()
    (wiki / "Back.md").write_text("# Back\n")
    assert cache.refresh().added == ("Back.md",)
    (wiki / "Back.md").write_text("# Back\n\nagain\n")
    assert cache.refresh().changed == ("Back.md",)


def test_without_inotify_the_cache_keeps_scanning(wiki, tmp_path, monkeypatch, scans):
    monkeypatch.setattr(watch_module, "INotify", None)
    cache, _ = open_pages(wiki, tmp_path / "state", watch=True)
    cache.refresh()
    assert not cache.watching and WikiWatcher.start(wiki) is None
    (wiki / "One.md").write_text("# One\n\nscanned\n")
    before = scans[0]
    assert cache.refresh().changed == ("One.md",) and scans[0] == before + 1


def test_random_operations_match_a_fresh_load(wiki, tmp_path):
    """Property: after any sequence of file and folder operations, the watched cache equals
    what load_vault reads from scratch."""
    rng = random.Random(7)
    cache = watched(wiki, tmp_path)
    folders = ["", "sub/", "sub/deep/", "other/"]
    for step in range(120):
        op = rng.choice(["write", "write", "write", "delete", "rename", "mkdir", "rmdir"])
        pages = sorted(p.relative_to(wiki).as_posix() for p in wiki.rglob("*.md")
                       if ".obsidian" not in p.parts)
        if op == "write" or not pages:
            folder = rng.choice(folders)
            (wiki / folder).mkdir(parents=True, exist_ok=True)
            (wiki / folder / f"P{rng.randrange(8)}.md").write_text(f"# P\n\nstep {step}\n")
        elif op == "delete":
            (wiki / rng.choice(pages)).unlink()
        elif op == "rename":
            folder = rng.choice(folders)
            (wiki / folder).mkdir(parents=True, exist_ok=True)
            os.replace(wiki / rng.choice(pages), wiki / folder / f"R{step}.md")
        elif op == "mkdir":
            name = rng.choice(folders[1:])
            (wiki / name).mkdir(parents=True, exist_ok=True)
            (wiki / name / f"M{step}.md").write_text("# M\n")
        else:
            name = rng.choice(folders[1:])
            shutil.rmtree(wiki / name, ignore_errors=True)
        if rng.random() < 0.5:
            cache.refresh()
            assert cache.pages == load_vault(wiki).pages, f"step {step}: {op}"
    cache.refresh()
    assert cache.pages == load_vault(wiki).pages
    assert cache.watching


def test_pages_with_another_name_are_compared_every_time(wiki, tmp_path):
    """Hard links and symlinked pages change with no event in the page's own folder."""
    os.link(wiki / "One.md", tmp_path / "outside.md")                 # hard link elsewhere
    (wiki / "Link.md").symlink_to(wiki / "sub" / "Two.md")            # symlinked page
    cache = watched(wiki, tmp_path)
    with open(tmp_path / "outside.md", "w") as handle:
        handle.write("# One\n\nedited through the other name\n")
    (wiki / "sub" / "Two.md").write_text("# Two\n\nedited target\n")
    changes = cache.refresh()
    assert set(changes.changed) == {"One.md", "Link.md", "sub/Two.md"}
    assert cache.pages == load_vault(wiki).pages


def test_a_dangling_symlink_is_reported_as_a_scan_would(wiki, tmp_path):
    cache = watched(wiki, tmp_path)
    (wiki / "Broken.md").symlink_to(wiki / "nowhere.md")
    cache.refresh()
    assert [p.path for p in cache.problems] == [p.path for p in load_vault(wiki).problems]
    assert "Broken.md" in [p.path for p in cache.problems]


def test_touching_a_folder_costs_no_scan(wiki, tmp_path, scans):
    cache = watched(wiki, tmp_path)
    before = scans[0]
    os.utime(wiki / "sub")
    os.chmod(wiki, 0o755)
    assert not cache.refresh() and scans[0] == before


def test_a_watch_that_breaks_goes_back_to_scanning_and_lets_go(wiki, tmp_path, monkeypatch):
    cache = watched(wiki, tmp_path)

    def fds() -> int:
        return sum("inotify" in os.readlink(f"/proc/self/fd/{fd}")
                   for fd in os.listdir("/proc/self/fd") if os.path.exists(f"/proc/self/fd/{fd}"))

    held = fds()
    real = watch_module.INotify.add_watch
    calls = [0]

    def limited(self, path, mask):           # the kernel's watch limit, after the root
        calls[0] += 1
        if calls[0] > 1:
            raise OSError(28, "No space left on device")
        return real(self, path, mask)

    monkeypatch.setattr(watch_module.INotify, "add_watch", limited)
    (wiki / "new").mkdir()                   # a new folder: the watcher starts over, and fails
    (wiki / "new" / "A.md").write_text("# A\n")
    assert cache.refresh().added == ("new/A.md",)
    assert not cache.watching and fds() == held - 1
    (wiki / "One.md").write_text("# One\n\nscanned again\n")
    assert cache.refresh().changed == ("One.md",)


def test_network_and_fuse_file_systems_are_not_watched(tmp_path):
    mounts = tmp_path / "mounts"
    mounts.write_text(f"sysfs /sys sysfs rw 0 0\n/dev/vda / ext4 rw 0 0\n"
                      f"server:/export {tmp_path}/nfs nfs4 rw 0 0\n"
                      f"sshfs#me@host: {tmp_path}/my\\040notes fuse.sshfs rw 0 0\n")
    assert watch_module.file_system_type(tmp_path / "nfs" / "wiki", str(mounts)) == "nfs4"
    assert watch_module.file_system_type(tmp_path / "my notes", str(mounts)) == "fuse.sshfs"
    assert watch_module.file_system_type(tmp_path / "local", str(mounts)) == "ext4"
    real = watch_module.file_system_type
    try:
        watch_module.file_system_type = lambda path: "nfs4"
        assert WikiWatcher.start(tmp_path) is None          # the cache keeps scanning
    finally:
        watch_module.file_system_type = real
    assert WikiWatcher.start(tmp_path) is not None


class Clock:
    """A clock the test moves (the cache's ``clock``); the files and links are real."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_files_with_another_name_are_compared_a_share_at_a_time_all_within_the_recheck_time(
        tmp_path):
    """100,000 hard-linked notes cost 1.3 s a query when every one was stat'ed before each:
    now each refresh compares the share the elapsed time calls for (at least
    ALIAS_MIN_BATCH), and every edit through another name is seen alias_recheck_s later."""
    wiki, outside = tmp_path / "wiki", tmp_path / "outside"
    wiki.mkdir()
    outside.mkdir()
    count = 300
    for i in range(count):
        (wiki / f"Note{i:03}.md").write_text(f"# Note {i}\n\nfirst text\n")
        os.link(wiki / f"Note{i:03}.md", outside / f"note{i:03}.md")     # a second name
    clock = Clock()
    cache, _ = open_pages(wiki, tmp_path / "state", watch=True)
    cache.clock = clock
    cache.refresh()
    assert cache.watching
    for i in range(count):          # edited in place through the other name: no event
        with open(outside / f"note{i:03}.md", "w") as handle:
            handle.write(f"# Note {i}\n\nedited through the other name\n")
    assert len(cache.refresh().changed) == cache_module.ALIAS_MIN_BATCH   # no time passed
    clock.now += cache.alias_recheck_s / 2
    assert len(cache.refresh().changed) == count // 2    # half the recheck time: half of them
    clock.now += cache.alias_recheck_s / 2
    seen = cache.refresh().changed
    assert len(seen) == count // 2 - cache_module.ALIAS_MIN_BATCH    # the rest, none twice
    assert cache.pages == load_vault(wiki).pages
    # one more edit: whatever the cursor's place, seen once the recheck time has passed
    with open(outside / "note123.md", "w") as handle:
        handle.write("# Note 123\n\nedited again\n")
    clock.now += cache.alias_recheck_s
    assert cache.refresh().changed == ("Note123.md",)


def test_a_file_that_gains_another_name_joins_the_rotation(wiki, tmp_path):
    clock = Clock()
    cache, _ = open_pages(wiki, tmp_path / "state", watch=True)
    cache.clock = clock
    cache.refresh()
    (wiki / "sub" / "Two.md").write_text("# Two\n\nnew text\n")   # an event: compared
    os.link(wiki / "sub" / "Two.md", tmp_path / "second-name.md")  # the link itself: no event
    assert cache.refresh().changed == ("sub/Two.md",)
    with open(tmp_path / "second-name.md", "w") as handle:
        handle.write("# Two\n\nedited through the new name\n")
    clock.now += cache.alias_recheck_s
    assert cache.refresh().changed == ("sub/Two.md",)
    assert cache.pages == load_vault(wiki).pages


def test_a_server_core_finds_an_edit_made_through_another_name_within_the_recheck_time(
        tmp_path):
    """End to end through ``Mindgraph.search`` (what REST and MCP call), real time: a wiki
    of hard-linked notes (as `cp -al` makes), more of them than one refresh compares."""
    from mindgraph.config import settings_from_dict
    from mindgraph.core import Mindgraph

    wiki, outside = tmp_path / "wiki", tmp_path / "outside"
    wiki.mkdir()
    outside.mkdir()
    for i in range(3 * cache_module.ALIAS_MIN_BATCH):
        (outside / f"Note{i:03}.md").write_text(f"# Note {i}\n\nplain words\n")
        os.link(outside / f"Note{i:03}.md", wiki / f"Note{i:03}.md")
    mg = Mindgraph(settings_from_dict({}, base_dir=tmp_path))
    try:
        assert mg.search("plain") and mg.search("plain")      # the second starts the watch
        assert mg._cache is not None and mg._cache.watching
        with open(outside / "Note150.md", "w") as handle:      # the other name, in place
            handle.write("# Note 150\n\nzeppelin hangar\n")
        started = time.monotonic()
        while not mg.search("zeppelin"):
            assert time.monotonic() - started < cache_module.ALIAS_RECHECK_S + 1.0
            time.sleep(0.05)
        assert [hit.path for hit in mg.search("zeppelin")] == ["Note150.md"]
    finally:
        mg.close()


def test_a_closed_watch_is_released_and_its_cache_scans_again(wiki, tmp_path, scans):
    """Whoever closes a watch (a server shutting down, the test suite's fixture) leaves its
    cache correct: it scans from then on and sees every change."""
    cache = watched(wiki, tmp_path)
    watcher = cache._watcher
    assert watcher in watch_module.open_watchers()
    watcher.close()
    assert watcher not in watch_module.open_watchers()
    assert watcher.broken and watcher.changes() is None
    before = scans[0]
    (wiki / "One.md").write_text("# One\n\nafter the close\n")
    assert cache.refresh().to_dict()["changed"] == ["One.md"]
    assert scans[0] == before + 1 and not cache.watching
    assert cache.pages == load_vault(wiki).pages


def test_a_watch_started_over_stays_listed_as_open(wiki, tmp_path):
    cache = watched(wiki, tmp_path)
    (wiki / "sub" / "Folder").mkdir()            # a new folder: the watch starts over
    cache.refresh()
    watcher = cache._watcher
    assert cache.watching and watcher in watch_module.open_watchers()
    cache.close()
    assert watcher not in watch_module.open_watchers()
