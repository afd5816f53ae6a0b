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


def survivors(folder, grace=2.0):
    """Processes still running an ingest of ``folder`` (forked compile workers have their
    parent's command line), after up to ``grace`` s for them to die with it."""
    needle = str(folder).encode()
    deadline = time.monotonic() + grace
    while True:
        alive = []
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    line = handle.read()
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    zombie = handle.read().rsplit(b")", 1)[-1].split()[0] == b"Z"
            except OSError:
                continue
            if b"ingest" in line and needle in line.split(b"\0") and not zombie:
                alive.append(int(pid))
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def ingest(folder, *extra):
    return [sys.executable, "-m", "mindgraph", "ingest", "-C", str(folder), *extra]


def timed(args):
    """Run ``args`` to the end: its completed process and how many seconds it took."""
    started = time.monotonic()
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done, time.monotonic() - started


def killed(victim, args, delay, raw_before, after_state_write=None):
    """Run ``args`` and SIGKILL it ``delay`` s in (or, with ``after_state_write``, at the
    state file's first rewrite after that, waited for up to that many seconds: an instant a
    random one rarely hits); check that the state parses and raw/ is untouched. True when
    the kill interrupted the run."""
    state_path = victim / ".mindgraph" / STATE_FILENAME
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    if after_state_write is not None:
        wait_for_state_write(state_path.parent, after_state_write)
    process.send_signal(signal.SIGKILL)
    interrupted = process.wait() == -signal.SIGKILL
    assert not survivors(victim), "a compile worker outlived its killed run"
    if state_path.exists():
        IngestState.load(state_path)    # raises if torn or unreadable
    assert tree_hashes(victim / "raw") == raw_before, f"seed {SEED}"
    return interrupted


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_sigkill_at_random_points_converges_to_the_uninterrupted_wiki(corpora, tmp_path):
    rng = random.Random(SEED)
    reference = make_workspace(corpora, tmp_path / "reference")
    _, full_run = timed(ingest(reference))
    victim = make_workspace(corpora, tmp_path / "victim")
    raw_before = tree_hashes(victim / "raw")
    interrupted = 0
    for attempt in range(KILLS):
        # Most runs are forced, so kills keep landing in the middle of real work.
        args = ingest(victim) if attempt % 3 == 0 else ingest(victim, "--force")
        if attempt % 3 == 2:
            interrupted += killed(victim, args, rng.uniform(0.0, full_run * 0.5), raw_before,
                                  after_state_write=full_run)
        else:
            interrupted += killed(victim, args, rng.uniform(0.0, full_run * 1.1), raw_before)
    assert interrupted >= KILLS // 2, f"only {interrupted} of {KILLS} runs were interrupted"
    final = subprocess.run(ingest(victim), capture_output=True, text=True)
    assert final.returncode == 0, final.stderr
    assert tree_hashes(victim / "wiki") == tree_hashes(reference / "wiki"), f"seed {SEED}"
    assert tree_hashes(victim / "raw") == raw_before
    # And the converged workspace is at rest: one more run changes nothing.
    again = subprocess.run(ingest(victim, "--json"), capture_output=True, text=True)
    assert '"ingested": 0' in again.stdout


def moved_workspace(corpora, folder):
    """The English vault ingested, a trust record on every seventh page, then reorganised:
    half the notes moved to another folder, a quarter renamed in place (raw/ is ours here)."""
    from mindgraph.trust.writeback import set_record_keys

    make_workspace(corpora, folder)
    timed(ingest(folder))
    pages = sorted((folder / "wiki").rglob("*.md"))
    for page in pages[::7]:
        page.write_text(set_record_keys(page.read_text(encoding="utf-8"), {
            "verification": {"status": "verified", "level": 2}}), encoding="utf-8")
    notes = sorted((folder / "raw").rglob("*.md"))
    for number, note in enumerate(notes):
        rel = note.relative_to(folder / "raw")
        if number % 2 == 0:
            target = folder / "raw" / "moved" / rel
        elif number % 4 == 1:
            target = note.with_name(f"{note.stem} (renamed).md")
        else:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        note.rename(target)
    return folder


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_sigkill_during_a_reorganisation_converges_to_the_uninterrupted_moves(corpora, tmp_path):
    rng = random.Random(SEED)
    reference = moved_workspace(corpora, tmp_path / "reference")
    done, full_run = timed(ingest(reference, "--json"))
    assert '"moved": 130' in done.stdout        # 87 moved + 43 renamed of the 173 notes
    victim = moved_workspace(corpora, tmp_path / "victim")
    raw_before = tree_hashes(victim / "raw")
    interrupted = 0
    for attempt in range(max(KILLS // 3, 4)):
        interrupted += killed(victim, ingest(victim), rng.uniform(0.0, full_run * 0.3),
                              raw_before, after_state_write=full_run if attempt % 2 else None)
    assert interrupted >= 2, f"only {interrupted} runs were interrupted"
    final = subprocess.run(ingest(victim), capture_output=True, text=True)
    assert final.returncode == 0, final.stderr
    assert tree_hashes(victim / "wiki") == tree_hashes(reference / "wiki"), f"seed {SEED}"
    assert IngestState.load(victim / ".mindgraph" / STATE_FILENAME).moves == \
        IngestState.load(reference / ".mindgraph" / STATE_FILENAME).moves
    again = subprocess.run(ingest(victim, "--json"), capture_output=True, text=True)
    assert '"ingested": 0' in again.stdout and '"moved": 0' in again.stdout
