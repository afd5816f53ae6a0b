"""Attachment embeds found by file name, through the real app (GET /dashboard/page and
GET /dashboard/attachment): raw/ is listed once, not walked again for every page view, and
what changes in it is still seen at once (a file added, removed, moved into a new folder, or
replaced by a symlink, which is never served)."""

from __future__ import annotations

import os
import shutil
import time

import pytest
from fastapi.testclient import TestClient

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.serve.rest import create_app

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
AN_HOUR_AGO = time.time() - 3600


@pytest.fixture
def vault(tmp_path):
    """A wiki page embedding pictures by file name, and raw/ with 30 folders of files (all
    written an hour ago, as a vault's files are: no folder changed just now)."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Album.md").write_text(
        "# Album\n\n![[picture.png]]\n\n![[later.png]]\n\n![[moved.png]]\n")
    raw = tmp_path / "raw"
    for n in range(30):
        folder = raw / "notes" / f"f{n:02d}"
        folder.mkdir(parents=True)
        for m in range(10):
            (folder / f"note{m}.md").write_text(f"# Note {n}.{m}\n")
            (folder / f"photo{m}.jpg").write_bytes(PNG)
    (raw / "notes" / "f17" / "picture.png").write_bytes(PNG + b"PICTURE")
    for folder, _, _ in os.walk(raw):
        os.utime(folder, (AN_HOUR_AGO, AN_HOUR_AGO))
    return tmp_path


def _client(base):
    return TestClient(create_app(Mindgraph(settings_from_dict({}, base_dir=base))),
                      base_url="http://127.0.0.1:8765")


def _shown(client):
    html = client.get("/dashboard/page", params={"page": "Album"}).json()["html"]
    return {name for name in ("picture.png", "later.png", "moved.png")
            if f'data-src="/dashboard/attachment?target={name}' in html}


def _served(client, name):
    answer = client.get("/dashboard/attachment", params={"target": name, "page": "Album"})
    return answer.content if answer.status_code == 200 else None


@pytest.fixture
def raw_listings(monkeypatch):
    """The folders under raw/ listed so far (os.scandir, which os.walk uses too)."""
    listed: list[str] = []
    scandir = os.scandir

    def counting(path="."):
        # os.scandir takes a path (str, bytes, PathLike) or an open folder's descriptor (an
        # int: shutil.rmtree's, os.fwalk's, as a SIGTERM's cleanup removes the test's folders)
        if not isinstance(path, int) and "/raw" in os.fsdecode(os.fspath(path)):
            listed.append(os.fsdecode(os.fspath(path)))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    return listed


def test_the_listing_count_lets_descriptors_and_bytes_through(tmp_path, raw_listings):
    """os.scandir(fd) failed under the fixture (os.fspath(3): TypeError), as shutil.rmtree
    calls it removing a folder: seen when a SIGTERM's cleanup ran during a test."""
    folder = tmp_path / "raw" / "sub"
    folder.mkdir(parents=True)
    (folder / "a.png").write_bytes(PNG)
    fd = os.open(tmp_path / "raw", os.O_RDONLY)
    try:
        with os.scandir(fd) as entries:
            assert [e.name for e in entries] == ["sub"]
    finally:
        os.close(fd)
    with os.scandir(os.fsencode(folder)) as entries:
        assert [e.name for e in entries] == [b"a.png"]
    shutil.rmtree(tmp_path / "raw")
    assert not (tmp_path / "raw").exists()
    assert raw_listings[0] == str(folder)       # a path is still counted


def test_page_views_do_not_walk_raw_again(vault, raw_listings):
    client = _client(vault)
    assert _shown(client) == {"picture.png"}
    first = len(raw_listings)
    assert first >= 31                                  # built once: every folder
    for _ in range(5):
        assert _shown(client) == {"picture.png"}
        assert _served(client, "picture.png") == PNG + b"PICTURE"
    assert len(raw_listings) == first, raw_listings[first:]


def test_what_changes_in_raw_is_seen_at_once(vault, raw_listings):
    client = _client(vault)
    assert _shown(client) == {"picture.png"} and _served(client, "later.png") is None
    raw = vault / "raw"
    (raw / "notes" / "f03" / "later.png").write_bytes(PNG + b"LATER")
    (raw / "new" / "deeper").mkdir(parents=True)
    (raw / "new" / "deeper" / "moved.png").write_bytes(PNG + b"MOVED")
    before = len(raw_listings)
    assert _shown(client) == {"picture.png", "later.png", "moved.png"}
    assert len(raw_listings) - before <= 4               # the changed folders, not all 32
    assert _served(client, "later.png") == PNG + b"LATER"
    assert _served(client, "moved.png") == PNG + b"MOVED"
    (raw / "notes" / "f17" / "picture.png").unlink()
    assert _shown(client) == {"later.png", "moved.png"}
    assert _served(client, "picture.png") is None
    # a real file replaced by a symlink (to a file outside raw/) is gone, never served
    outside = vault / "outside.png"
    outside.write_bytes(PNG + b"OUTSIDE")
    (raw / "notes" / "f03" / "later.png").unlink()
    os.symlink(outside, raw / "notes" / "f03" / "later.png")
    assert _shown(client) == {"moved.png"}
    assert _served(client, "later.png") is None
    # a folder removed takes its files with it
    (raw / "new" / "deeper" / "moved.png").unlink()
    (raw / "new" / "deeper").rmdir()
    assert _shown(client) == set() and _served(client, "moved.png") is None
    # a tool that sets a folder's mtime back (rsync -t) still moves its ctime
    folder = raw / "notes" / "f05"
    (folder / "picture.png").write_bytes(PNG + b"SYNCED")
    os.utime(folder, (AN_HOUR_AGO, AN_HOUR_AGO))
    assert _shown(client) == {"picture.png"}
    assert _served(client, "picture.png") == PNG + b"SYNCED"


def test_a_raw_folder_that_is_a_symlink_is_kept_current(tmp_path):
    """raw/ itself a symlink to the vault (as ``ln -s ~/vault raw`` makes it): what changes
    at the vault's top level is seen too (the link's own stamp never changes)."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Album.md").write_text("# Album\n\n![[later.png]]\n\n![[moved.png]]\n")
    vault = tmp_path / "vault"
    (vault / "old").mkdir(parents=True)
    (vault / "old" / "note.md").write_text("# Note\n")
    for folder in (vault, vault / "old"):
        os.utime(folder, (AN_HOUR_AGO, AN_HOUR_AGO))
    os.symlink(vault, tmp_path / "raw")
    client = _client(tmp_path)
    assert _shown(client) == set()
    (vault / "later.png").write_bytes(PNG + b"LATER")
    (vault / "new").mkdir()
    (vault / "new" / "moved.png").write_bytes(PNG + b"MOVED")
    assert _shown(client) == {"later.png", "moved.png"}
    assert _served(client, "moved.png") == PNG + b"MOVED"


def test_a_tree_deeper_than_the_recursion_limit(tmp_path):
    """raw/ 1,100 folders deep: the index was built by recursion, and the page view failed
    (500, RecursionError) with the index left half built (the picture a 404 after)."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Album.md").write_text("# Album\n\n![[later.png]]\n")
    deepest = tmp_path / "raw"
    deepest.mkdir()
    for _ in range(1100):                     # one at a time: mkdir(parents=True) recurses
        deepest = deepest / "d"
        deepest.mkdir()
    (deepest / "later.png").write_bytes(PNG + b"DEEP")
    try:
        client = _client(tmp_path)
        assert _shown(client) == {"later.png"}
        assert _served(client, "later.png") == PNG + b"DEEP"
        os.rename(tmp_path / "raw" / "d", tmp_path / "gone")   # a tree this deep is dropped
        assert _shown(client) == set() and _served(client, "later.png") is None
    finally:
        for top in (tmp_path / "raw" / "d", tmp_path / "gone"):
            _remove_deep(top)


def _remove_deep(top):
    """Remove a tree deeper than the recursion limit (shutil.rmtree recurses, and pytest's
    cleanup of old temporary folders would fail on it)."""
    folders = [top]
    while folders[-1].is_dir():
        for entry in folders[-1].iterdir():
            if not entry.is_dir():
                entry.unlink()
        folders.append(folders[-1] / "d")
    for folder in reversed(folders[:-1]):
        folder.rmdir()


def _missing(client):
    found = client.get("/check").json()["findings"]
    return {f["message"].split("]]", 1)[0].removeprefix("![[") for f in found
            if f["kind"] == "missing-attachment"}


def test_check_does_not_walk_raw_again_and_sees_changes(vault, raw_listings):
    # GET /check walked raw/ (and the wiki) on every call, for its missing-attachment findings
    client = _client(vault)
    assert _missing(client) == {"later.png", "moved.png"}
    first = len(raw_listings)
    for _ in range(3):
        assert _missing(client) == {"later.png", "moved.png"}
    assert len(raw_listings) == first, raw_listings[first:]
    # a new file, and a symlink to a file (there for a reader: check counts it, the
    # dashboard never serves it)
    raw = vault / "raw"
    (raw / "notes" / "f03" / "later.png").write_bytes(PNG + b"LATER")
    outside = vault / "outside.png"
    outside.write_bytes(PNG + b"OUTSIDE")
    os.symlink(outside, raw / "notes" / "f05" / "moved.png")
    assert _missing(client) == set()
    assert _served(client, "moved.png") is None
