"""Two `mindgraph embed` runs on one workspace: the second waits for the first (saying so,
with its pid) and then embeds only what is left, so every chunk is embedded once, not twice.
Real processes, a real flock (vectors/lock.py); the holder killed with SIGKILL frees it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner
from embed_runs import finish, slow_embed_command, wait_for_line
from hashing_workspace import hashing_workspace

from mindgraph.cli import cli

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs flock (POSIX)")

MINDGRAPH = [sys.executable, "-m", "mindgraph"]


@pytest.fixture
def workspace(tmp_path):
    """150 notes of two sections each, compiled, hashing embeddings (300 chunks)."""
    return hashing_workspace(tmp_path, 150)


def start(*args, slow_workspace=None, pause=0.3):
    """`mindgraph embed ARGS`, or with ``slow_workspace`` the slowed embed there (``pause``
    seconds a batch)."""
    command = slow_embed_command(slow_workspace, pause) if slow_workspace else \
        [*MINDGRAPH, *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})



@pytest.mark.timeout(180)
def test_a_second_embed_waits_for_the_first_and_embeds_nothing_twice(workspace):
    # 1 s a batch: under load the second process can take longer to start than the first
    # takes to embed everything at 0.3 s a batch (seen at load 12)
    first = start(slow_workspace=workspace, pause=1.0)
    wait_for_line(first, "Embedding: ")                 # it holds the lock, mid-run
    second = start("embed", "--json", "-C", str(workspace))
    waiting = wait_for_line(second, "Another `mindgraph embed` is running")[-1]
    assert waiting == (f"Another `mindgraph embed` is running in this workspace (pid "
                       f"{first.pid}); waiting for it to finish, then embedding what it "
                       f"left.\n")
    code_first, out_first, _ = finish(first)
    code_second, out_second, err_second = finish(second)
    assert (code_first, code_second) == (0, 0), err_second
    first_report, second_report = json.loads(out_first), json.loads(out_second)
    assert first_report["chunks"] == 300 and first_report["embedded"] == 300
    assert second_report["embedded"] == 0 and second_report["unchanged"] == 300


@pytest.mark.timeout(180)
def test_a_killed_holder_frees_the_lock_and_the_waiting_embed_does_the_rest(workspace):
    # 2 s a batch: under load the second process can take longer to start than the first
    # takes to embed everything at 0.3 s a batch, and a finished first leaves nothing to do
    first = start(slow_workspace=workspace, pause=2.0)
    wait_for_line(first, "Embedding: ")
    second = start("embed", "--json", "-C", str(workspace))
    wait_for_line(second, "Another `mindgraph embed` is running")
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)
    assert first.returncode == -signal.SIGKILL
    code, out, err = finish(second)
    assert code == 0, err
    report = json.loads(out)
    assert report["chunks"] == 300 and report["embedded"] + report["unchanged"] == 300
    assert 0 < report["unchanged"] < 300            # what the killed one stored is kept
    third = CliRunner().invoke(cli, ["embed", "--json", "-C", str(workspace)])
    assert json.loads(third.stdout)["embedded"] == 0


@pytest.mark.timeout(180)
def test_no_wait_fails_at_once_naming_the_running_embed(workspace):
    first = start(slow_workspace=workspace)
    wait_for_line(first, "Embedding: ")
    busy = subprocess.run([*MINDGRAPH, "embed", "--no-wait", "-C", str(workspace)],
                          capture_output=True, text=True, timeout=60)
    assert busy.returncode == 1
    assert (f"Error: another `mindgraph embed` is running in this workspace (pid "
            f"{first.pid}) (it holds ") in busy.stderr
    assert "Run again when it has finished, or leave out --no-wait" in busy.stderr
    assert "Traceback" not in busy.stderr
    first.send_signal(signal.SIGKILL)
    first.communicate(timeout=30)


@pytest.mark.parametrize("kind", ["symlink to a note", "dangling symlink", "fifo", "folder"])
def test_a_lock_file_that_is_not_a_plain_file_is_refused_and_nothing_written(
        workspace, tmp_path_factory, kind):
    """The pid written into the lock went through a symlink: `embed` emptied the note in raw/
    (or a file outside the workspace) it pointed at. Nothing but a plain file is used."""
    lock = workspace / ".mindgraph" / "embed.lock"
    lock.parent.mkdir(exist_ok=True)
    lock.unlink(missing_ok=True)
    note = workspace / "raw" / "Note 1.md"
    before = note.read_bytes()
    outside = tmp_path_factory.mktemp("outside") / "made.txt"
    if kind == "symlink to a note":
        lock.symlink_to(note)
    elif kind == "dangling symlink":
        lock.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    result = CliRunner().invoke(cli, ["embed", "-C", str(workspace)])
    assert result.exit_code == 2, result.output
    assert "embed lock" in result.output and "remove" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert note.read_bytes() == before and not outside.exists()


# A program that is not mindgraph holds the lock (it writes nothing into the file)
HOLDER = """
import fcntl, sys, time
handle = open(sys.argv[1], "a")
fcntl.flock(handle, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(120)
"""


def _dead_pid():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True)
    return int(done.stdout)


@pytest.mark.parametrize("left_in_file", ["a dead mindgraph's pid", "a live non-holder's pid"])
def test_a_pid_the_lock_file_cannot_vouch_for_is_not_named(workspace, left_in_file):
    """The pid in the file is the last mindgraph holder's: with another program holding the
    lock now, naming it sent people after a process that was gone, or innocent."""
    lock = workspace / ".mindgraph" / "embed.lock"
    lock.parent.mkdir(exist_ok=True)
    if left_in_file == "a dead mindgraph's pid":
        pid = _dead_pid()
        lock.write_text(f"{pid}\n")
    else:       # this test's process: alive, with its real start time, but not the holder
        pid = os.getpid()
        with open(f"/proc/{pid}/stat", "rb") as handle:
            started = handle.read().rsplit(b")", 1)[1].split()[19].decode()
        lock.write_text(f"{pid} {started}\n")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        busy = subprocess.run([*MINDGRAPH, "embed", "--no-wait", "-C", str(workspace)],
                              capture_output=True, text=True, timeout=60)
        assert busy.returncode == 1, busy.stderr
        assert "Error: another process holds this workspace's embed lock (it holds " \
            in busy.stderr
        assert f"pid {pid}" not in busy.stderr and "Traceback" not in busy.stderr
    finally:
        holder.kill()
        holder.wait()


def test_the_holder_writes_its_pid_and_start_time(workspace):
    first = start(slow_workspace=workspace)
    try:
        wait_for_line(first, "Embedding: ")
        written = (workspace / ".mindgraph" / "embed.lock").read_text().split()
        with open(f"/proc/{first.pid}/stat", "rb") as handle:
            started = handle.read().rsplit(b")", 1)[1].split()[19].decode()
        assert written == [str(first.pid), started, "embed"]
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=30)


@pytest.mark.timeout(120)
def test_a_servers_embed_run_holding_the_lock_is_named_as_such(workspace):
    """A server's reindex (core's embed: holder "embed-run") holding the lock was called
    "another `mindgraph embed`"; the holder writes what it is into the lock file, as the
    pgvector lock's session name says it, and the waiting side names it."""
    script = ("import sys, time\nfrom pathlib import Path\n"
              "from mindgraph.vectors.lock import embed_lock\n"
              "with embed_lock(Path(sys.argv[1])):\n"
              "    print('held', flush=True)\n    time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", script, str(workspace / ".mindgraph")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        busy = subprocess.run([*MINDGRAPH, "embed", "--no-wait", "-C", str(workspace)],
                              capture_output=True, text=True, timeout=60)
        assert busy.returncode == 1
        assert ("Error: an embed run of another mindgraph process (a reindex, sync or upload) "
                f"is running in this workspace (pid {holder.pid}) (it holds ") in busy.stderr
        assert "mindgraph embed`" not in busy.stderr
    finally:
        holder.kill()
        holder.wait()
