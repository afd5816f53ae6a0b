"""Read commands on a read-only state folder (a mounted snapshot, a shared copy) answer from
memory: they wrote the page cache, the keyword index and the graph as they built them, and the
first write ended in an EROFS traceback. The folder is a real read-only bind mount made in a
user namespace (`unshare -rm`; skipped where there is none)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from hashing_workspace import hashing_workspace


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _unshare_works(),
                                reason="needs user namespaces (unshare -rm)")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """Five compiled notes and nothing cached yet: only what ingest leaves in the state."""
    return hashing_workspace(tmp_path_factory.mktemp("ro"), 5)


def read_only(workspace, *args):
    state = workspace / ".mindgraph"
    quoted = " ".join(f"'{a}'" for a in args)
    script = (f'mount --bind "{state}" "{state}" && mount -o remount,bind,ro "{state}" && '
              f'exec "{sys.executable}" -m mindgraph {quoted} -C "{workspace}"')
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("args, expected", [
    (("search", "topic", "--json"), '"page": "Note'),
    (("search", "--hybrid", "topic", "--json"), '"page": "Note'),
    (("get", "Note 1"), "Text of note 1."),
    (("links", "Note 1"), "Note 1"),
    (("graph", "hubs"), "Note"),
    (("graph", "communities"), "communities"),
    (("timeline", "topic"), "topic"),
], ids=lambda v: " ".join(v) if isinstance(v, tuple) else None)
def test_a_read_command_answers_without_writing(workspace, args, expected):
    before = sorted(p.name for p in (workspace / ".mindgraph").iterdir())
    run = read_only(workspace, *args)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and expected in run.stdout
    if "--json" in args:
        json.loads(run.stdout)
    assert sorted(p.name for p in (workspace / ".mindgraph").iterdir()) == before
