"""A raw note's compile warnings (a frontmatter '---' never closed) and failures are not lost
under a watcher: the watch log prints a warning once, in the run where it appears; GET
/sync/status lists the failing and warned notes with their counts; and `mindgraph check`
reports each from the ingest state, at its file and line with the fix (real CLI)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.serve.rest import create_app

from sync_support import make_workspace, wait_until, watching, write

UNCLOSED = "---\ntitle: Open\ntags: [a]\n\n# Open\n\nThis note never closes its frontmatter.\n"
BAD_YAML = "---\ntitle: x\nfoo: [a\nbar: b\n---\n# Bad\nbody\n"
NEVER_CLOSED = "unclosed.md:1: the frontmatter's '---' is never closed"


def check(base: Path) -> list[dict]:
    result = CliRunner().invoke(cli, ["-C", str(base), "check", "--json"])
    assert result.exit_code == 0, result.output
    return [f for f in json.loads(result.output)["findings"] if f["kind"].startswith("raw-")]


@pytest.mark.timeout(180)
def test_the_watch_log_prints_a_warning_once_and_check_lists_it(tmp_path):
    base = make_workspace(tmp_path, {"good.md": "# Good\nA good note about kayaks.\n"})
    process = subprocess.Popen(
        [sys.executable, "-m", "mindgraph", "watch", "-C", str(base), "--no-embed",
         "--debounce-ms", "100"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(ln.rstrip("\n") for ln in process.stdout),
                     daemon=True).start()

    def run_lines(what: str) -> list[str]:
        """The run line for ``what`` and the indented lines under it."""
        def found():
            at = next((i for i, ln in enumerate(lines) if f" {what}:" in ln), None)
            if at is None:
                return None
            out = [lines[at]]
            for ln in lines[at + 1:]:
                if not ln.startswith("  "):
                    break
                out.append(ln)
            return out
        return wait_until(found, 60, f"a run line for {what}")
    try:
        wait_until(lambda: any("startup sync" in ln for ln in lines), 60, "the startup run")
        write(base / "raw" / "unclosed.md", UNCLOSED)
        run = run_lines("raw/unclosed.md")
        assert "compiled 1" in run[0], run
        assert len(run) == 2 and run[1].startswith(f"  warning: raw/{NEVER_CLOSED}"), run
        assert "end the block with a '---' line" in run[1]

        write(base / "raw" / "good.md", "# Good\nA good note about kayaks, edited.\n")
        write(base / "raw" / "bad.md", BAD_YAML)
        wait_until(lambda: any(" raw/bad.md" in ln or "raw/good.md" in ln for ln in lines),
                   60, "the next run")
        wait_until(lambda: sum("bad.md" in ln for ln in lines) and
                   any("raw/good.md" in ln for ln in lines), 60, "both changes")
        # the warning was printed once: a later run does not repeat it
        assert sum(NEVER_CLOSED in ln for ln in lines) == 1, lines

        # `check`, while the watcher runs: both notes at their file and line, with the fix
        found = wait_until(lambda: len(check(base)) == 2 and check(base), 30, "the state")
        by_kind = {f["kind"]: f for f in found}
        warned, failed = by_kind["raw-warning"], by_kind["raw-failed"]
        assert (warned["severity"], warned["raw_path"], warned["raw_line"]) == \
            ("warning", "unclosed.md", 1)
        assert "end the block with a '---' line" in warned["message"]
        assert (failed["severity"], failed["raw_path"], failed["raw_line"]) == \
            ("error", "bad.md", 4)
        assert "frontmatter is not valid YAML" in failed["message"]
        text = CliRunner().invoke(cli, ["-C", str(base), "check", "--errors-only"]).output
        assert "raw-failed" in text and "raw/bad.md:4: failed to compile" in text
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0, process.stderr.read()


def test_sync_status_lists_the_warned_and_failing_notes(tmp_path):
    base = make_workspace(tmp_path, {"good.md": "# Good\nA good note about kayaks.\n",
                                     "bad.md": BAD_YAML})
    with watching(base) as w:
        client = TestClient(create_app(w.mg, sync_status=w.watcher.status.to_dict),
                            base_url="http://127.0.0.1:8765")
        status = client.get("/sync/status").json()
        assert status["raw_failures_count"] == 1 and status["raw_warnings_count"] == 0
        assert status["raw_failures"][0].startswith("bad.md:4: frontmatter is not valid YAML")

        runs = len(w.records)
        write(base / "raw" / "unclosed.md", UNCLOSED)
        w.settle(runs)
        status = client.get("/sync/status").json()
        assert status["raw_warnings_count"] == 1
        assert status["raw_warnings"][0].startswith(NEVER_CLOSED)
        assert status["last_run"]["warnings"] == status["raw_warnings"]

        runs = len(w.records)
        write(base / "raw" / "unclosed.md", UNCLOSED.replace("tags: [a]\n", "tags: [a]\n---\n"))
        w.settle(runs)
        status = client.get("/sync/status").json()
        assert status["raw_warnings_count"] == 0 and status["raw_warnings"] == []
        assert status["raw_failures_count"] == 1
    assert check(base) == [{"severity": "error", "kind": "raw-failed", "path": "bad.md",
                            "line": 4, "raw_path": "bad.md", "raw_line": 4,
                            "message": check(base)[0]["message"]}]


def test_a_watcher_started_on_a_warned_note_tells_it_at_startup(tmp_path):
    base = make_workspace(tmp_path, {"unclosed.md": UNCLOSED})
    assert CliRunner().invoke(cli, ["-C", str(base), "ingest"]).exit_code == 0
    with watching(base) as w:
        assert w.records[0].trigger == "start"
        (warning,) = w.records[0].warnings
        assert warning.startswith(NEVER_CLOSED)
        assert "\n  warning: raw/" + NEVER_CLOSED in w.records[0].line()
