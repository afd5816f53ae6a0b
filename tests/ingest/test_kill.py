"""Crash safety: SIGKILL `python -m mindgraph ingest` at random instants, dozens of times.

After every kill the state file parses and raw/ is byte-identical; a final run then converges
to exactly the wiki (same files, same bytes) that an uninterrupted run builds in another
folder. Over a copy of part of the real Obsidian Help vault (its 173 English pages).

Two kinds of instants: uniformly random ones, and (every third run) the moment the state file
starts being rewritten, which a random instant rarely hits and a torn write would show.
"""

import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from mindgraph.ingest import STATE_FILENAME, IngestState

from ingest_helpers import tree_hashes

KILLS = int(os.environ.get("MINDGRAPH_KILLS", "30"))
SEED = int(os.environ.get("MINDGRAPH_KILL_SEED", str(int(time.time()))))


def make_workspace(corpora, folder):
    raw = folder / "raw"
    source = corpora / "obsidian-help"
    # copytree copies modification times, so both workspaces compile the same dates.
    shutil.copytree(source / "en", raw / "en")
    return folder


def wait_for_state_write(state_dir, timeout):
    """Return as soon as the state file changes or its temp file appears (or at timeout)."""
    state = state_dir / STATE_FILENAME

    def mark():
        try:
            info = state.stat()
            return info.st_mtime_ns, info.st_size
        except FileNotFoundError:
            return None

    before = mark()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        names = os.listdir(state_dir) if state_dir.is_dir() else []
        if any(n.endswith(".tmp") for n in names) or mark() != before:
            return
    return


def ingest(folder, *extra):
    return [sys.executable, "-m", "mindgraph", "ingest", "-C", str(folder), *extra]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_sigkill_at_random_points_converges_to_the_uninterrupted_wiki(corpora, tmp_path):
    rng = random.Random(SEED)
    reference = make_workspace(corpora, tmp_path / "reference")
    started = time.monotonic()
    done = subprocess.run(ingest(reference), capture_output=True, text=True)
    full_run = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    victim = make_workspace(corpora, tmp_path / "victim")
    raw_before = tree_hashes(victim / "raw")
    state_path = victim / ".mindgraph" / STATE_FILENAME
    interrupted = 0
    for attempt in range(KILLS):
        # Most runs are forced, so kills keep landing in the middle of real work.
        args = ingest(victim) if attempt % 3 == 0 else ingest(victim, "--force")
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if attempt % 3 == 2:
            time.sleep(rng.uniform(0.0, full_run * 0.5))
            wait_for_state_write(state_path.parent, full_run)
        else:
            time.sleep(rng.uniform(0.0, full_run * 1.1))
        process.send_signal(signal.SIGKILL)
        if process.wait() == -signal.SIGKILL:
            interrupted += 1
        if state_path.exists():
            IngestState.load(state_path)    # raises if torn or unreadable
        assert tree_hashes(victim / "raw") == raw_before, f"seed {SEED}, kill {attempt}"
    assert interrupted >= KILLS // 2, f"only {interrupted} of {KILLS} runs were interrupted"
    final = subprocess.run(ingest(victim), capture_output=True, text=True)
    assert final.returncode == 0, final.stderr
    assert tree_hashes(victim / "wiki") == tree_hashes(reference / "wiki"), f"seed {SEED}"
    assert tree_hashes(victim / "raw") == raw_before
    # And the converged workspace is at rest: one more run changes nothing.
    again = subprocess.run(ingest(victim, "--json"), capture_output=True, text=True)
    assert '"ingested": 0' in again.stdout
