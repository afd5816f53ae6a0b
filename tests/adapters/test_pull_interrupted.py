"""A `mindgraph pull` killed midway leaves none of its files unrecorded, and two pulls of one
workspace do not run at once.

A real `mindgraph pull` subprocess, against the fake TickTick open API on a local port, is
paused after its Nth note is written (its raw/ writer wrapped to wait there: the controlled
point) and then SIGKILLed. The ownership manifest used to be saved once per adapter, after
its files: the notes already written were then nobody's, and the next pull kept them as a
person's and filed every changed item beside its own note.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from ticktick_fake import FakeTickTick, pull_workspace

from mindgraph.cli import cli

ERRANDS = "6226ff9877acee87727f6bca"
PAUSING_PULL = """
import importlib, os, sys, time
pull = importlib.import_module("mindgraph.adapters.pull")     # the module, not the function
real, written = pull.atomic_write_bytes, []
def pausing(path, data, *args, **kwargs):
    real(path, data, *args, **kwargs)
    written.append(path)
    if len(written) == int(os.environ["PAUSE_AFTER"]):
        open(os.environ["PAUSED_AT"], "w").close()
        time.sleep(120)
pull.atomic_write_bytes = pausing
from mindgraph.cli import cli
cli(["pull", "-C", sys.argv[1]])
"""


@pytest.fixture
def fake():
    fake = FakeTickTick()
    for n in range(8):
        fake.tasks[f"6d{n:022x}"] = {"id": f"6d{n:022x}", "projectId": ERRANDS,
                                     "title": f"Errand {n}", "content": f"errand {n}",
                                     "status": 0, "tags": [],
                                     "modifiedTime": "2026-11-30T18:02:11.000+0000"}
    return fake


@pytest.fixture
def workspace(tmp_path, fake, monkeypatch):
    with pull_workspace(tmp_path, fake, monkeypatch) as base:
        yield base


def raw_notes(workspace):
    root = workspace / "raw"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


def paused_pull(workspace, after):
    """A `mindgraph pull` subprocess, waiting after its ``after``-th note is written."""
    marker = workspace / "paused"
    child = subprocess.Popen([sys.executable, "-c", PAUSING_PULL, str(workspace)],
                             env={**os.environ, "PAUSE_AFTER": str(after),
                                  "PAUSED_AT": str(marker)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not marker.exists():
        if child.poll() is not None or time.monotonic() > deadline:
            child.terminate()
            pytest.fail(f"the pull did not pause: {child.communicate()[1].decode()[-2000:]}")
        time.sleep(0.02)
    return child


def stop(child):
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
    child.wait(timeout=30)


def test_a_pull_killed_midway_leaves_no_file_unrecorded(workspace, fake):
    child = paused_pull(workspace, after=5)
    try:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        stop(child)
    written = raw_notes(workspace)
    assert len(written) == 5 < len(fake.tasks)           # killed midway

    for task in fake.tasks.values():                     # every item changed in the app since
        task["content"] = task["content"] + " (changed)"
    gone = next(t for t in fake.tasks.values()
                if f"ticktick/Errands/{t['title']}.md" in written)
    fake.delete(gone["id"])                              # and one written item deleted there
    result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), "--json"],
                                catch_exceptions=False)

    assert result.exit_code == 0, result.output
    files = json.loads(result.stdout)["files"]
    assert [f for f in files if f["instead_of"]] == []   # no note taken for a person's
    assert not any(" (tasks " in name for name in raw_notes(workspace)), raw_notes(workspace)
    assert {f["path"]: f["status"] for f in files if f["status"] == "removed"} == {
        f"ticktick/Errands/{gone['title']}.md": "removed"}
    assert len(raw_notes(workspace)) == len(fake.tasks)
    for name in raw_notes(workspace):
        assert "(changed)" in (workspace / "raw" / name).read_text(), name


def test_a_pull_killed_while_rewriting_earlier_notes_makes_no_copies(workspace, fake):
    """Killed after rewriting 3 of the notes an earlier pull wrote: those hold the new
    bytes (pending, settled by the next pull), the rest the old ones (still recorded)."""
    first = CliRunner().invoke(cli, ["pull", "-C", str(workspace)], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    for task in fake.tasks.values():
        task["content"] = task["content"] + " (once)"
    child = paused_pull(workspace, after=3)
    try:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        stop(child)
    texts = [(workspace / "raw" / n).read_text() for n in raw_notes(workspace)]
    assert sum("(once)" in t for t in texts) == 3 < len(texts)      # killed midway

    for task in fake.tasks.values():
        task["content"] = task["content"] + " (twice)"
    result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert [f for f in json.loads(result.stdout)["files"] if f["instead_of"]] == []
    assert len(raw_notes(workspace)) == len(fake.tasks)
    for name in raw_notes(workspace):
        assert "(once) (twice)" in (workspace / "raw" / name).read_text(), name


def test_a_manifest_an_older_version_wrote_still_counts(workspace, fake):
    """Older versions saved the manifest flat (raw path → hash): its files stay pull's."""
    first = CliRunner().invoke(cli, ["pull", "-C", str(workspace)], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    manifest = workspace / ".mindgraph" / "pulled" / "tasks.json"
    saved = json.loads(manifest.read_text())
    assert saved["pending"] == {} and len(saved["files"]) == len(fake.tasks)
    manifest.write_text(json.dumps(saved["files"]))
    for task in fake.tasks.values():
        task["content"] = task["content"] + " (changed)"
    result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert [f for f in json.loads(result.stdout)["files"] if f["instead_of"]] == []
    assert json.loads(manifest.read_text())["files"].keys() == saved["files"].keys()

def test_a_second_pull_of_the_workspace_refuses_while_one_runs(workspace, fake):
    child = paused_pull(workspace, after=2)
    try:
        second = CliRunner().invoke(cli, ["pull", "-C", str(workspace)])
        assert second.exit_code == 1, second.output
        assert "another `mindgraph pull` of this workspace is running" in second.output
        assert str(workspace / ".mindgraph" / "pull.lock") in second.output
        assert len(raw_notes(workspace)) == 2              # the second wrote nothing
        dry = CliRunner().invoke(cli, ["pull", "-C", str(workspace), "--dry-run"])
        assert dry.exit_code == 0, dry.output               # a dry run writes nothing: no lock
    finally:
        stop(child)
    again = CliRunner().invoke(cli, ["pull", "-C", str(workspace)], catch_exceptions=False)
    assert again.exit_code == 0, again.output              # the lock went with its holder
    assert len(raw_notes(workspace)) == len(fake.tasks)
