"""`limits.max_pull_bytes` bounds a note app's listing as it is read, not after.

Through the CLI against the fake TickTick open API on a local port: the listing (every list,
page after page of completed tasks, each answer up to 64 MiB) used to be read whole into
memory before the byte cap applied to the notes made of it, so a hostile app could make one
pull hold gigabytes. Now the answers' bytes count as they arrive and the listing stops as soon
as they pass the cap: the adapter and the setting are named, pull exits 1 and removes nothing.
"""

import json

import pytest
from click.testing import CliRunner
from ticktick_fake import FakeTickTick, pull_workspace

from mindgraph.cli import cli

WORK = "6226ff9877acee87727f6bcc"
PAGE = 10


@pytest.fixture
def fake():
    return FakeTickTick(page_size=PAGE)


@pytest.fixture
def workspace(tmp_path, fake, monkeypatch):
    with pull_workspace(tmp_path, fake, monkeypatch,
                        limits="  max_page_bytes: 2000000\n  max_pull_bytes: 2000000\n",
                        options=f"page_size: {PAGE}, ") as base:
        yield base


def raw_files(workspace):
    root = workspace / "raw"
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in root.rglob("*") if p.is_file()}


def test_a_listing_past_max_pull_bytes_is_read_no_further(workspace, fake):
    first = CliRunner().invoke(cli, ["pull", "-C", str(workspace)], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    before = raw_files(workspace)
    assert len(before) == 7

    for n in range(60):                  # 60 completed tasks of 100 KB: 6 full pages, 6 MB
        fake.tasks[f"6c{n:022x}"] = {
            "id": f"6c{n:022x}", "projectId": WORK, "title": f"Done {n}",
            "content": "x" * 100_000, "status": 2, "tags": [],
            "completedTime": f"2026-10-{1 + n % 28:02d}T{n % 24:02d}:00:00.000+0000"}
    fake.requests.clear()
    result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), "--json"],
                                catch_exceptions=False)

    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    limited = [f for f in report["files"] if f["status"] == "limited"]
    assert len(limited) == 1 and limited[0]["adapter"] == "tasks"
    assert limited[0]["reason"].startswith(
        "adapter 'tasks': the app's listing passed limits.max_pull_bytes (2,000,000) bytes "
        "of answers (")
    assert "Raise limits.max_pull_bytes in mindgraph.yml" in limited[0]["reason"]
    # 62 completed tasks are 7 pages; pages of 0.8 MB (with the fixture's 2 small ones),
    # 1 MB and 1 MB pass 2 MB in the third: no fourth page was asked for
    assert fake.calls("POST", "/task/completed") == 3
    assert report["written"] == 0 and report["removed"] == 0
    assert raw_files(workspace) == before                       # nothing removed or changed
    assert json.loads((workspace / ".mindgraph" / "pulled" / "tasks.json").read_text())


def test_a_listing_past_max_pull_notes_is_read_no_further(workspace, fake):
    config = workspace / "mindgraph.yml"
    config.write_text(config.read_text().replace("limits:\n", "limits:\n  max_pull_notes: 20\n")
                      .replace("cache_ttl_s: 0", "cache_ttl_s: 300"))
    for n in range(60):                  # 60 small completed tasks: 62 completed, 7 pages
        fake.tasks[f"6c{n:022x}"] = {
            "id": f"6c{n:022x}", "projectId": WORK, "title": f"Done {n}", "status": 2,
            "tags": [], "completedTime": f"2026-10-{1 + n % 28:02d}T{n % 24:02d}:00:00.000+0000"}
    result = CliRunner().invoke(cli, ["pull", "-C", str(workspace), "--json"],
                                catch_exceptions=False)

    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    limited = [f for f in report["files"] if f["status"] == "limited"]
    assert [f["reason"] for f in limited] == [
        "adapter 'tasks' listed more than limits.max_pull_notes (20) notes; pulled the 20 "
        "most recently modified, left out at least 4 (the listing was read no further), and "
        "no note of it removed this run. Raise limits.max_pull_notes in mindgraph.yml (each "
        "note may take up to limits.max_page_bytes on disk) or narrow what the adapter lists."]
    assert report["written"] == 20 and report["removed"] == 0
    assert report["left_out"] == 4 and limited[0]["left_out_at_least"] is True
    assert len(raw_files(workspace)) == 20
    # 5 open tasks, then pages of 10 completed ones: 25 passes 20 in the second page
    assert fake.calls("POST", "/task/completed") == 2
    assert not (workspace / ".mindgraph" / "apps" / "tasks.json").exists()   # no cut corpus
