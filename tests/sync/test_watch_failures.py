"""`mindgraph watch` names a run's own failures: the changed note's reason, not the first
failing note of raw/; notes that failed before and did not change are counted as still
failing, not reported again as this run's failures (real CLI, in a subprocess)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sync_support import make_workspace, wait_until, write

BAD_YAML = "---\ntitle: x\nfoo: [a\nbar: b\n---\n# Bad\nbody\n"


class WatchLines:
    """`mindgraph watch` (text output) in a subprocess, its run lines as they come."""

    def __init__(self, base: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mindgraph", "watch", "-C", str(base), "--no-embed",
             "--debounce-ms", "100"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    def line_for(self, what: str) -> str:
        """The first run line whose changes are ``what`` ("startup sync", "raw/x.md")."""
        return wait_until(lambda: next((ln for ln in self.lines
                                        if ln.split(" ", 1)[1].startswith(f"{what}:")), None),
                          60, f"a run line for {what}")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(30) == 0, self.process.stderr.read()


@pytest.mark.timeout(180)
def test_a_run_names_its_own_failures_and_counts_the_old_ones(tmp_path):
    base = make_workspace(tmp_path, {"badfm.md": BAD_YAML,
                                     "good.md": "# Good\nA good note about kayaks.\n"})
    watch = WatchLines(base)
    try:
        start = watch.line_for("startup sync")
        assert "failed 1" in start and "badfm.md:4: frontmatter is not valid YAML" in start

        (base / "raw" / "bin2.md").write_bytes(b"# Bin\x00\x00 binary\n")
        line = watch.line_for("raw/bin2.md")
        assert "failed 1 " in line, line
        assert "(raw/bin2.md:1: looks like a binary file" in line, line
        assert "badfm" not in line, line
        assert "; 1 unchanged note still failing as before" in line, line

        write(base / "raw" / "good.md", "# Good\nA good note about kayaks, edited.\n")
        line = watch.line_for("raw/good.md")
        assert "compiled 1" in line and "failed" not in line, line

        write(base / "raw" / "other.md", "# Other\nAnother note about canoes.\n")
        line = watch.line_for("raw/other.md")      # new: a full run retries every failure
        assert "compiled 1" in line and "failed " not in line, line
        assert "; 2 unchanged notes still failing as before" in line, line

        write(base / "raw" / "badfm.md", BAD_YAML + "more\n")    # changed, still bad
        line = watch.line_for("raw/badfm.md")
        assert "failed 1 " in line and "(raw/badfm.md:4: frontmatter is not valid YAML" in line, line
    finally:
        watch.stop()
