"""fsutil's bounded reads: only regular files, never a blocking open, never past the cap."""

from __future__ import annotations

import os

import pytest

from mindgraph.fsutil import UnreadableFile, open_regular, read_bytes, read_text


@pytest.mark.timeout(30)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe.md")
    with pytest.raises(UnreadableFile) as caught:
        read_bytes(tmp_path / "pipe.md")
    assert caught.value.kind == "not-regular"
    assert "named pipe (FIFO)" in caught.value.strerror
    assert isinstance(caught.value, OSError)       # so `except OSError` reports it per file


def test_a_device_is_refused_before_it_is_opened():
    with pytest.raises(UnreadableFile, match="a device"):
        read_bytes("/dev/zero")


def test_a_folder_is_refused(tmp_path):
    with pytest.raises(UnreadableFile, match="a folder"):
        read_bytes(tmp_path)


def test_the_size_cap_names_the_setting(tmp_path):
    (tmp_path / "big.md").write_bytes(b"x" * 101)
    with pytest.raises(UnreadableFile) as caught:
        read_bytes(tmp_path / "big.md", max_bytes=100, limit_key="compile.max_note_bytes")
    assert caught.value.kind == "too-large"
    assert "101 bytes" in caught.value.strerror and "compile.max_note_bytes" in caught.value.strerror
    assert read_bytes(tmp_path / "big.md", max_bytes=101) == b"x" * 101


def test_symlinks_are_refused_only_when_asked(tmp_path):
    (tmp_path / "real.md").write_text("hello")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    assert read_text(tmp_path / "link.md") == "hello"
    with pytest.raises(UnreadableFile) as caught:
        read_bytes(tmp_path / "link.md", follow_symlinks=False)
    assert caught.value.kind == "symlink"


def test_an_opened_file_reads_normally(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"abc" * 1000)
    with open_regular(tmp_path / "a.txt") as handle:
        assert handle.read() == b"abc" * 1000


def test_a_missing_file_is_the_usual_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_bytes(tmp_path / "none.md")


def test_a_files_digest_is_kept_for_the_workspace_until_the_file_changes(tmp_path,
                                                                         monkeypatch):
    """With keep_file_digests, a later process trusts a file whose stamp is unchanged and
    hashes one that changed (a new change time, size or inode) again."""
    import hashlib

    from mindgraph import fsutil

    data = tmp_path / "model.bin"
    data.write_bytes(b"weights" * 1000)
    state = tmp_path / ".mindgraph"
    monkeypatch.setattr(fsutil, "_kept_digests", None)
    fsutil.keep_file_digests(state)
    assert fsutil.sha256_file(data) and not (state / fsutil.DIGESTS_FILE).exists()  # not pinned
    monkeypatch.setattr(fsutil, "_FILE_DIGESTS", {})
    digest = fsutil.sha256_file(data, pinned=True)
    assert digest == hashlib.sha256(b"weights" * 1000).hexdigest()
    assert (state / fsutil.DIGESTS_FILE).is_file()
    monkeypatch.setattr(fsutil, "_FILE_DIGESTS", {})       # a later process
    reads = []
    real = hashlib.file_digest
    monkeypatch.setattr(hashlib, "file_digest", lambda *a: reads.append(1) or real(*a))
    assert fsutil.sha256_file(data, pinned=True) == digest and reads == []
    monkeypatch.setattr(fsutil, "_FILE_DIGESTS", {})
    data.write_bytes(b"tampered" * 1000)                     # changed: hashed again
    assert fsutil.sha256_file(data, pinned=True) == hashlib.sha256(b"tampered" * 1000).hexdigest()
    assert reads == [1]
    monkeypatch.setattr(fsutil, "_FILE_DIGESTS", {})
    (state / fsutil.DIGESTS_FILE).write_text("{not json")      # a damaged memo: hash again
    assert fsutil.sha256_file(data, pinned=True) == hashlib.sha256(b"tampered" * 1000).hexdigest()
    assert reads == [1, 1]
    fsutil.keep_file_digests(None)
