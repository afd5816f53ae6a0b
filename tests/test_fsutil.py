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


AHEAD_PROBE = """
import hashlib, os, sys
from pathlib import Path
from mindgraph import fsutil

same, changed, state = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
fsutil.hash_ahead([same, changed], state)
child = fsutil._AHEAD[str(same)].pid
real = hashlib.file_digest
read = []
hashlib.file_digest = lambda handle, name: read.append(Path(handle.name).name) or real(handle, name)
worker = os.fork()          # a process forked later hashes for itself, leaving the pipe alone
if worker == 0:
    os._exit(0 if fsutil.sha256_file(same) == hashlib.sha256(same.read_bytes()).hexdigest()
             and read == ["same.bin"] else 1)
assert os.waitpid(worker, 0)[1] == 0
print(fsutil.sha256_file(same) == hashlib.sha256(same.read_bytes()).hexdigest(), read)
with open(changed, "ab") as handle:         # changed after the child hashed it
    handle.write(b"tampered")
print(fsutil.sha256_file(changed) == hashlib.sha256(changed.read_bytes()).hexdigest(), read)
fsutil.settle_ahead()
print(child != os.getpid(), fsutil._AHEAD == {})
"""


def test_a_file_hashed_ahead_in_a_child_is_not_read_again_unless_it_changed(tmp_path):
    """hash_ahead's forked process sends each file's digest with the stamp it had before it
    was read: sha256_file takes it for an unchanged file and hashes a changed one itself (as
    does a worker forked afterwards, which leaves the digests to the process that asked)."""
    import subprocess
    import sys

    (tmp_path / "same.bin").write_bytes(b"weights" * 1000)
    (tmp_path / "changed.bin").write_bytes(b"weights" * 1000)
    done = subprocess.run([sys.executable, "-c", AHEAD_PROBE, str(tmp_path / "same.bin"),
                           str(tmp_path / "changed.bin"), str(tmp_path / "state")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True []", "True ['changed.bin']", "True True"]


SETTLE_PROBE = """
import os, sys
from pathlib import Path
from mindgraph import fsutil

data, state = Path(sys.argv[1]), Path(sys.argv[2])
fsutil.hash_ahead([data], state)
os.waitpid(fsutil._AHEAD[str(data)].pid, 0)        # done (a short run would not wait)
fsutil.settle_ahead()
fsutil.hash_ahead([data], state)                  # kept: nothing left to hash ahead
print(sorted(fsutil._read_kept_digests(state / fsutil.DIGESTS_FILE)), fsutil._AHEAD)
"""


def test_digests_hashed_ahead_and_never_asked_for_are_kept_for_the_workspace(tmp_path):
    """A run that never loads the dictionary (no Japanese) still keeps what was hashed ahead
    for it, so the workspace's next run neither hashes nor forks for it again."""
    import subprocess
    import sys

    data = tmp_path / "sys.dic"
    data.write_bytes(b"dictionary" * 1000)
    done = subprocess.run([sys.executable, "-c", SETTLE_PROBE, str(data),
                           str(tmp_path / ".mindgraph")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"[{str(data)!r}] {{}}"


STOPPED_PROBE = """
import hashlib, os, signal, sys, time
from pathlib import Path
from mindgraph import fsutil

data, state = Path(sys.argv[1]), Path(sys.argv[2])
fsutil.hash_ahead([data], state)
child = fsutil._AHEAD[str(data)].pid
os.kill(child, signal.SIGSTOP)                    # stopped before it sent anything
fsutil.AHEAD_WAIT_S = 1.0
started = time.monotonic()
right = fsutil.sha256_file(data) == hashlib.sha256(data.read_bytes()).hexdigest()
print(right, time.monotonic() - started < 15)
"""


def test_a_stopped_hashing_process_does_not_hang_the_check(tmp_path):
    """A hash_ahead process that never answers (stopped, starved) is waited for at most
    AHEAD_WAIT_S, then killed, and the file is hashed here: the ingest hung for ever."""
    import subprocess
    import sys

    data = tmp_path / "sys.dic"
    data.write_bytes(b"dictionary" * 100_000)
    done = subprocess.run([sys.executable, "-c", STOPPED_PROBE, str(data),
                           str(tmp_path / ".mindgraph")], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


SMALL_FIRST_PROBE = """
import hashlib, os, sys, time
from pathlib import Path
from mindgraph import fsutil

big, small, state = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
real = hashlib.file_digest
read = []

def digest(handle, name):           # the hashing process never gets through the big file
    if Path(handle.name).name == "sys.dic":
        time.sleep(60)
    read.append(Path(handle.name).name)
    return real(handle, name)

hashlib.file_digest = digest
fsutil.AHEAD_WAIT_S = 5.0
fsutil.hash_ahead([big, small], state)
read.clear()
started = time.monotonic()
right = fsutil.sha256_file(small) == hashlib.sha256(small.read_bytes()).hexdigest()
print(right, read, time.monotonic() - started < 4)
fsutil.settle_ahead()
"""


def test_a_check_of_a_small_file_hashed_ahead_waits_for_its_own_digest_only(tmp_path):
    """hash_ahead hashes the smallest file first and sends each digest as it has it: jieba's
    check (5 MB) took its digest at once instead of waiting for UniDic's 260 MB hashed
    before it (~0.2 s of a first ingest's start, its core idle)."""
    import subprocess
    import sys

    (tmp_path / "sys.dic").write_bytes(b"dictionary" * 100_000)
    (tmp_path / "rjieba.so").write_bytes(b"jieba" * 1000)
    done = subprocess.run([sys.executable, "-c", SMALL_FIRST_PROBE, str(tmp_path / "sys.dic"),
                           str(tmp_path / "rjieba.so"), str(tmp_path / ".mindgraph")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "[]", "True"]
