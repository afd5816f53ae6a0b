"""DESIGN's sync: the watcher skips symlinks, .git and node_modules. Ingest's own scan is
tested for that (tests/ingest/test_scan.py); this drives the watcher itself with real
file-system events, native and by stat scans."""

import os

import pytest

from sync_support import make_workspace, wait_until, watching, write

NOTES = {"Trunks.md": "# Trunks\nA trunk holds clothes.\n"}


@pytest.fixture(params=["native", "polling"])
def mode(request):
    return {"polling": request.param == "polling", "poll_interval_ms": 100}


def test_git_node_modules_and_symlinks_never_reach_the_wiki(tmp_path, mode):
    base = make_workspace(tmp_path / "ws", NOTES)
    outside = tmp_path / "outside"
    write(outside / "secret.md", "# Secret\nA zeppelin password.\n")
    with watching(base, **mode) as w:
        runs = len(w.records)
        raw = base / "raw"
        write(raw / ".git" / "COMMIT_EDITMSG.md", "# Commit\nzeppelin in git\n")
        write(raw / "node_modules" / "pkg" / "README.md", "# Pkg\nzeppelin in a package\n")
        os.symlink(outside / "secret.md", raw / "link.md")
        os.symlink(outside, raw / "linked-folder")
        write(raw / "Real.md", "# Real\nA genuine zeppelin note.\n")
        wait_until(lambda: w.hits("genuine") == ["Real.md"], what="Real.md to be searchable")
        wait_until(lambda: w.status["state"] == "idle" and not w.status["pending_count"],
                   what="the watcher to be idle")
        changes = [c for r in w.records[runs:] for c in r.changes]
        assert "raw/Real.md" in changes
        assert not any(".git" in c or "node_modules" in c for c in changes), changes
        assert w.hits("zeppelin") == ["Real.md"]
        wiki = sorted(p.relative_to(base / "wiki").as_posix()
                      for p in (base / "wiki").rglob("*.md"))
        assert wiki == ["Real.md", "Trunks.md"]      # nothing from the symlinked folder
        assert not any("link" in c for r in w.records[runs:] for c in r.compiled)
