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


# -- atomic_write_bytes: what a write leaves, whatever path it takes ----------------------------

def test_an_atomic_write_makes_missing_folders_and_leaves_no_temp_file(tmp_path):
    from mindgraph.fsutil import atomic_write_bytes

    target = tmp_path / "a" / "b" / "page.md"
    atomic_write_bytes(target, [b"one ", b"two " * 50_000, memoryview(b"three")],
                       durable=False, shared=True)
    assert target.read_bytes() == b"one " + b"two " * 50_000 + b"three"
    assert sorted(os.listdir(target.parent)) == ["page.md"]


def test_an_atomic_write_gives_a_shared_file_the_mode_it_replaces_and_state_0600(tmp_path):
    from mindgraph.fsutil import atomic_write_bytes

    page, state = tmp_path / "page.md", tmp_path / "state.json"
    old_umask = os.umask(0o022)
    try:
        atomic_write_bytes(page, b"new", shared=True)
        assert os.stat(page).st_mode & 0o777 == 0o644           # what open() gives
        os.chmod(page, 0o640)
        atomic_write_bytes(page, b"again", shared=True)
        assert os.stat(page).st_mode & 0o777 == 0o640           # kept
        atomic_write_bytes(state, b"{}")
        assert os.stat(state).st_mode & 0o777 == 0o600          # private
    finally:
        os.umask(old_umask)


def test_a_failed_atomic_write_keeps_the_old_file_and_no_temp_file(tmp_path):
    from mindgraph.fsutil import atomic_write_bytes

    target = tmp_path / "page.md"
    target.write_bytes(b"old")

    def chunks():
        yield b"half"
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        atomic_write_bytes(target, chunks())
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["page.md"]


def test_a_file_where_the_folder_belongs_is_the_error_mkdir_gives(tmp_path):
    from mindgraph.fsutil import atomic_write_bytes

    (tmp_path / "a").write_bytes(b"a file, not a folder")
    with pytest.raises(FileExistsError):
        atomic_write_bytes(tmp_path / "a" / "page.md", b"x")
