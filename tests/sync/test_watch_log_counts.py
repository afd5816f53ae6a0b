"""The watch log's counts read as English at one: "dropped 1 vector", "and 1 more warning"
(they said "1 vectors", "1 more warnings"); real `mindgraph watch`."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from sync_support import make_workspace, wait_until, write

# six frontmatter values the compiler warns about, one past the five a log line lists
SIX_WARNINGS = ("---\ndate: 2024-13-45\ncreated: not a date\ntags: 5\naliases: {x: 1}\n"
                "title: 12\nupdated: nope\n---\n# Odd\n\nA note with odd frontmatter values.\n")


@pytest.mark.timeout(180)
def test_one_dropped_vector_and_one_more_warning_are_singular(tmp_path):
    base = make_workspace(tmp_path, {"keep.md": "# Keep\nA note about kayaks.\n",
                                     "gone.md": "# Gone\nA note about canoes.\n"})
    process = subprocess.Popen(
        [sys.executable, "-m", "mindgraph", "watch", "-C", str(base), "--debounce-ms", "100"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(ln.rstrip("\n") for ln in process.stdout),
                     daemon=True).start()
    try:
        wait_until(lambda: any("startup sync" in ln for ln in lines), 60, "the startup run")
        write(base / "raw" / "odd.md", SIX_WARNINGS)
        wait_until(lambda: any("more warning" in ln for ln in lines), 60, "the odd note's run")
        assert any(ln == "  … and 1 more warning (mindgraph check lists them all)"
                   for ln in lines), lines
        (base / "raw" / "gone.md").unlink()
        removed = wait_until(lambda: next((ln for ln in lines if " raw/gone.md:" in ln), None),
                             60, "the removal's run")
        assert "removed 1" in removed and "dropped 1 vector in" in removed, removed
    finally:
        # SIGTERM, as the other watch tests: a process started in the background of a
        # non-interactive shell (CI's) inherits SIGINT ignored, and never saw this one
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0, process.stderr.read()
