"""The watcher through its entry points: `mindgraph watch --json` and `serve --watch` as real
processes, GET /sync/status and the sync_status MCP tool (answering while a run holds the
core), and the refusals."""

import json
import signal
import socket
import subprocess
import sys
import threading
import time

import anyio
import httpx
import pytest
from click.testing import CliRunner
from mcp import Client
from starlette.testclient import TestClient

from mindgraph.cli import cli
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app

from sync_support import make_workspace, wait_until, watching, write

NOTES = {"Trunks.md": "# Trunks\nA trunk holds clothes.\n"}


def lines_of(process, found, stop):
    for line in process.stdout:
        found.append(line)
        if stop.is_set():
            break


def test_watch_json_prints_one_object_per_change_and_stops_on_sigterm(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    process = subprocess.Popen([sys.executable, "-m", "mindgraph", "watch", "-C", str(base),
                                "--json", "--debounce-ms", "100"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found: list[str] = []
    reader = threading.Thread(target=lines_of, args=(process, found, threading.Event()),
                              daemon=True)
    reader.start()
    try:
        wait_until(lambda: len(found) >= 2, 60, "the startup run")
        head, start = json.loads(found[0]), json.loads(found[1])
        assert head["event"] == "watching" and head["backend"].startswith("native")
        assert start["trigger"] == "start" and start["compiled"] == ["Trunks.md"]
        write(base / "raw" / "Kayak.md", "# Kayak\nA boat.\n")
        wait_until(lambda: len(found) >= 3, 30, "the change")
        change = json.loads(found[2])
        assert change["event"] == "change" and change["changes"] == ["raw/Kayak.md"]
        assert change["compiled"] == ["Kayak.md"] and change["reindexed"] == ["Kayak.md"]
        assert change["embedded"] >= 1 and change["error"] is None and change["seconds"] > 0
        # the pages that run wrote come back as events: touches, not a third run
        status_file = base / ".mindgraph" / "sync-status.json"
        status = wait_until(lambda: (s := json.loads(status_file.read_text()))["state"]
                            == "idle" and s, 10, "the status file to say idle")
        assert status["runs"] == 2 and status["touches_ignored"] >= 1 and len(found) == 3
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(20)
    assert code == 0, process.stderr.read()
    assert json.loads((base / ".mindgraph" / "sync-status.json").read_text())["state"] \
        == "stopped"


def test_watch_prints_one_line_per_change(tmp_path):
    # two notes: removing the only page would be held (ingest/guard.py, tests/sync/
    # test_removal_guard.py)
    base = make_workspace(tmp_path, {**NOTES, "Wheels.md": "# Wheels\nWheels roll.\n"})
    process = subprocess.Popen([sys.executable, "-m", "mindgraph", "watch", "-C", str(base),
                                "--polling", "--poll-interval-ms", "100", "--no-embed"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found: list[str] = []
    threading.Thread(target=lines_of, args=(process, found, threading.Event()),
                     daemon=True).start()
    try:
        wait_until(lambda: found, 60, "the startup line")
        assert "startup sync: compiled 2, reindexed 2 pages in" in found[0]
        (base / "raw" / "Trunks.md").unlink()
        wait_until(lambda: len(found) >= 2, 30, "the deletion line")
        assert "raw/Trunks.md: removed 1, reindexed 1 page in" in found[1]
        assert "embedded" not in found[1]
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)
    assert "stat scans every 100 ms" in process.stderr.read()


def test_watch_names_a_note_in_the_raw_folder_the_workspace_reads(tmp_path):
    # with paths.raw elsewhere (init --raw ~/vault) the line said "raw/Kayak.md": no file
    from sync_support import CONFIG

    vault = tmp_path / "vault"
    write(vault / "Trunks.md", "# Trunks\nA trunk holds clothes.\n")
    base = tmp_path / "kb"
    base.mkdir()
    (base / "mindgraph.yml").write_text(CONFIG + "paths:\n  raw: ../vault\n")
    process = subprocess.Popen([sys.executable, "-m", "mindgraph", "watch", "-C", str(base),
                                "--polling", "--poll-interval-ms", "100", "--no-embed"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    found: list[str] = []
    threading.Thread(target=lines_of, args=(process, found, threading.Event()),
                     daemon=True).start()
    try:
        wait_until(lambda: found, 60, "the startup line")
        write(vault / "Kayak.md", "# Kayak\nA boat.\n")
        wait_until(lambda: len(found) >= 2, 30, "the change line")
        assert " ../vault/Kayak.md: compiled 1, reindexed 1 page in" in found[1], found
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(20)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_serve_watch_compiles_and_reports_over_http(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "mindgraph", "serve", "--watch", "-C",
                                str(base), "--port", str(port), "--debounce-ms", "100"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"

    def status():
        try:
            return httpx.get(f"{url}/sync/status", timeout=5).json()
        except httpx.HTTPError:
            return None
    try:
        wait_until(lambda: (s := status()) and s["runs"] >= 1 and s["state"] == "idle", 60,
                   "the server's startup run")
        write(base / "raw" / "Kayak.md", "# Kayak\nA narrow boat.\n")
        wait_until(lambda: (s := status()) and s["runs"] >= 2 and s["state"] == "idle", 30,
                   "the change")
        last = status()["last_run"]
        assert last["changes"] == ["raw/Kayak.md"] and last["compiled"] == ["Kayak.md"]
        hits = httpx.get(f"{url}/search", params={"q": "narrow"}, timeout=5).json()
        assert [h["page"] for h in hits["results"]] == ["Kayak.md"]
        state = base / ".mindgraph"
        before = {p.name: p.stat().st_mtime_ns for p in state.iterdir() if p.is_file()}
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(20)
    assert code == 0
    assert "raw/Kayak.md: compiled 1" in process.stderr.read()
    # SIGTERM stops the watcher (its status says so) and saves the state files it kept in
    # memory since the change (the next start reads them instead of rebuilding)
    assert json.loads((state / "sync-status.json").read_text())["state"] == "stopped"
    saved = [p.name for p in state.iterdir()
             if p.is_file() and p.stat().st_mtime_ns > before.get(p.name, 0)
             and p.name != "sync-status.json"]
    assert saved, "no state file was saved at shutdown"


def test_serve_watch_refuses_several_workers(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    result = CliRunner().invoke(cli, ["serve", "--watch", "--workers", "2", "-C", str(base),
                                      "--port", str(free_port())])
    assert result.exit_code == 2
    assert "--watch runs in one process" in result.output


def test_status_endpoint_and_tool_answer_during_a_run(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    with watching(base) as w:
        client = TestClient(create_app(w.mg, sync_status=w.watcher.status.to_dict),
                            base_url="http://127.0.0.1:8765")
        # the start run's own page writes may leave the watcher pending (they are touches,
        # told apart by hash after the debounce; a late one may turn it pending again for a
        # moment): wait until it has settled, and judge the idle status that was seen
        idle = wait_until(lambda: (s := client.get("/sync/status").json())["state"] == "idle"
                          and s, 30, "the watcher to settle after its start run")
        assert idle["watching"] and idle["state"] == "idle" and idle["runs"] == 1
        assert idle["last_run"]["trigger"] == "start"
        # the whole run record, "ingest" (targeted or full, and why) included
        assert idle["last_run"] == w.watcher.status.to_dict()["last_run"]
        assert idle["last_run"]["ingest"].startswith("full: ")
        for i in range(400):
            write(base / "raw" / f"bulk/Note {i}.md", f"# Note {i}\nFiller {i}.\n")
        wait_until(lambda: client.get("/sync/status").json()["state"] == "running", 60,
                   "the run to start")
        during = client.get("/sync/status").json()
        search = client.get("/search", params={"q": "trunk"})
        assert search.status_code == 200 and search.json()["results"][0]["page"] == "Trunks.md"
        assert during["running"]["changes"] and during["running"]["trigger"] == "change"

        async def tool():
            async with Client(create_mcp_server(w.mg, w.watcher.status.to_dict)) as mcp:
                return json.loads((await mcp.call_tool("sync_status", {})).content[0].text)
        seen = anyio.run(tool)
        assert seen["watching"] and seen["state"] in ("running", "pending", "idle")
        wait_until(lambda: (s := client.get("/sync/status").json())["state"] == "idle"
                   and not s["pending_count"], 120, "the run to end")
        assert client.get("/search", params={"q": "filler"}).json()["results"]


def test_without_watch_the_status_says_off(tmp_path):
    base = make_workspace(tmp_path, NOTES)
    (base / "wiki").mkdir()
    from mindgraph.core import Mindgraph
    mg = Mindgraph.open(base)
    off = TestClient(create_app(mg), base_url="http://127.0.0.1:8765").get("/sync/status")
    assert off.status_code == 200 and off.json()["state"] == "off"
    assert off.json()["watching"] is False

    async def tool():
        async with Client(create_mcp_server(mg)) as mcp:
            return json.loads((await mcp.call_tool("sync_status", {})).content[0].text)
    assert anyio.run(tool) == off.json()            # the same answer, every field
