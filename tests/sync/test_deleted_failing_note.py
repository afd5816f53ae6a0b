"""A raw note that failed to compile and was then deleted is no failure any more: GET
/sync/status (REST, under a watcher) stops listing it, also when the run that saw it go was
held (raw/ emptied: ingest/guard.py applies nothing, so the ingest never reported it gone)."""

from __future__ import annotations

from starlette.testclient import TestClient

from mindgraph.serve.rest import create_app

from sync_support import make_workspace, wait_until, watching, write

BAD_YAML = "---\ntitle: x\nfoo: [a\nbar: b\n---\n# Bad\nbody\n"
UNCLOSED = "---\ntitle: Open\ntags: [a]\n\n# Open\n\nThis note never closes its frontmatter.\n"


def test_deleted_failing_and_warned_notes_are_not_listed(tmp_path):
    base = make_workspace(tmp_path, {"good.md": "# Good\nA good note about kayaks.\n",
                                     "bad.md": BAD_YAML, "unclosed.md": UNCLOSED})
    with watching(base) as w:
        client = TestClient(create_app(w.mg, sync_status=w.watcher.status.to_dict),
                            base_url="http://127.0.0.1:8765")
        status = client.get("/sync/status").json()
        assert (status["raw_failures_count"], status["raw_warnings_count"]) == (1, 1), status

        # one deleted: its run is a full one, which reports it gone
        runs = len(w.records)
        (base / "raw" / "bad.md").unlink()
        w.settle(runs)
        status = client.get("/sync/status").json()
        assert status["raw_failures_count"] == 0 and status["raw_failures"] == [], status

        runs = len(w.records)
        write(base / "raw" / "bad.md", BAD_YAML)
        w.settle(runs)
        assert client.get("/sync/status").json()["raw_failures_count"] == 1

        # every note deleted: the run is held (it would remove every page), and still
        # neither deleted note is listed
        runs = len(w.records)
        for name in ("good.md", "bad.md", "unclosed.md"):
            (base / "raw" / name).unlink()
        wait_until(lambda: len(w.records) > runs and w.status["state"] == "held", 60,
                   "the held run")
        status = client.get("/sync/status").json()
        assert status["state"] == "held" and "ingest held" in status["held"], status
        assert (status["raw_failures"], status["raw_failures_count"]) == ([], 0), status
        assert (status["raw_warnings"], status["raw_warnings_count"]) == ([], 0), status
