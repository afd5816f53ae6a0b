"""Crash safety of the watcher: SIGKILL `mindgraph watch` in the middle of its runs, again and
again, while notes keep changing; the next start completes the work, and the wiki ends
byte-for-byte equal to an uninterrupted `ingest` over the same notes, the vectors equal to an
uninterrupted `embed`. Reuses the ingest kill harness (tests/ingest/test_kill.py) over the
173 English pages of the Obsidian Help vault.
"""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ingest"))

from ingest_helpers import tree_hashes  # noqa: E402
from test_kill import make_workspace  # noqa: E402

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.ingest import STATE_FILENAME, IngestState  # noqa: E402

from sync_support import CONFIG, wait_until  # noqa: E402

KILLS = int(os.environ.get("MINDGRAPH_WATCH_KILLS", "8"))
SEED = int(os.environ.get("MINDGRAPH_KILL_SEED", str(int(time.time()))))


def status_of(base):
    try:
        return json.loads((base / ".mindgraph" / "sync-status.json").read_text())
    except (OSError, ValueError):
        return None


def start_watcher(base):
    (base / ".mindgraph" / "sync-status.json").unlink(missing_ok=True)
    return subprocess.Popen([sys.executable, "-m", "mindgraph", "watch", "-C", str(base),
                             "--json", "--debounce-ms", "100"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def edit_notes(raw, rng, round_no, content_only=False):
    """Change a random tenth of the notes, delete one and add one (names repeat, so a later
    round may bring a deleted note back); ``content_only``: only the change (the watcher's
    run is then a targeted one)."""
    notes = sorted(raw.rglob("*.md"))
    for note in rng.sample(notes, len(notes) // 10):
        with open(note, "a", encoding="utf-8") as handle:
            handle.write(f"\nEdited in round {round_no}.\n")
    if content_only:
        return
    rng.choice(notes).unlink()
    (raw / "en" / f"Round {round_no % 3}.md").write_text(
        f"# Round {round_no % 3}\nWritten in round {round_no}; see [[Home]].\n")


def vector_hashes(base):
    mg = Mindgraph.open(base)
    try:
        return mg.vector_store().hashes(mg.embedding_provider().model_version)
    finally:
        mg.close()


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("targeted", [False, True], ids=["full", "targeted"])
def test_sigkill_during_runs_then_a_restart_equals_an_uninterrupted_run(corpora, tmp_path,
                                                                        targeted):
    """``targeted``: the runs killed are those of edits alone (ingest/targeted.py), which
    append to the state's journal instead of saving it whole."""
    rng = random.Random(SEED)
    victim = make_workspace(corpora, tmp_path / "victim")
    (victim / "mindgraph.yml").write_text(CONFIG)
    killed_running = 0
    for round_no in range(KILLS):
        process = start_watcher(victim)
        if round_no % 2:
            # kill in the middle of a change run: edit once the watcher is idle
            wait_until(lambda: (s := status_of(victim)) and s["state"] == "idle", 120,
                       f"the watcher to be idle (seed {SEED})")
            edit_notes(victim / "raw", rng, round_no, content_only=targeted)
            wait_until(lambda: (s := status_of(victim)) and s["state"] == "running"
                       and s["running"]["trigger"] == "change", 60, "the change run")
            time.sleep(rng.uniform(0.0, 0.1 if targeted else 0.3))
        else:
            # kill during the startup reconcile (or right after), edits made meanwhile
            edit_notes(victim / "raw", rng, round_no)
            wait_until(lambda: status_of(victim), 60, "the watcher to start")
            time.sleep(rng.uniform(0.0, 1.5))
        killed_running += (status_of(victim) or {}).get("state") == "running"
        process.send_signal(signal.SIGKILL)
        assert process.wait(30) == -signal.SIGKILL
        state = victim / ".mindgraph" / STATE_FILENAME
        if state.exists():
            IngestState.load(state)                 # never torn (nor its journal)
    assert killed_running >= KILLS // 3, f"only {killed_running} kills hit a run (seed {SEED})"

    process = start_watcher(victim)
    try:
        wait_until(lambda: (s := status_of(victim)) and s["state"] == "idle"
                   and s["runs"] >= 1 and not s["pending_count"], 180, "the restart's run")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)

    reference = tmp_path / "reference"
    shutil.copytree(victim / "raw", reference / "raw")       # the same notes, same times
    (reference / "mindgraph.yml").write_text(CONFIG)
    for command in (["ingest"], ["embed"]):
        done = subprocess.run([sys.executable, "-m", "mindgraph", *command, "-C",
                               str(reference)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert tree_hashes(victim / "wiki") == tree_hashes(reference / "wiki"), f"seed {SEED}"
    assert vector_hashes(victim) == vector_hashes(reference), f"seed {SEED}"
