"""`limits.max_pull_bytes` bounds a note app's listing on every path, not only `pull`'s.

Native search (`mindgraph search --hybrid`, through the adapter's search_by_query), `create`
and `update` (which read the listing to find a list or an item) used to read the whole
listing, however large; and the listing's cache file (.mindgraph/apps/<name>.json) was read
whole, however large. Now the listing stops at the same budget, named in the error, and a cache
file over it is ignored unread (the app is listed again). The app is the fake TickTick open
API on a local port.
"""

import json
import time

import pytest
from click.testing import CliRunner
from ticktick_fake import TOKEN, FakeTickTick

from mindgraph.cli import cli

WORK = "6226ff9877acee87727f6bcc"
PASSPORT = "63b7bebb91c0a5474805fcd4"
PAGE = 10
BUDGET = 2_000_000


@pytest.fixture
def fake():
    return FakeTickTick(page_size=PAGE)


def _workspace(tmp_path, fake, monkeypatch, ttl):
    (tmp_path / "raw").mkdir()
    monkeypatch.setenv("TT_TOKEN", TOKEN)
    with fake.serve() as base_url:
        (tmp_path / "mindgraph.yml").write_text(
            "embedding:\n  provider: hashing\n  dimension: 256\n"
            f"limits:\n  max_page_bytes: {BUDGET}\n  max_pull_bytes: {BUDGET}\n"
            "adapters:\n"
            f"  - name: tasks\n    type: ticktick\n    target: ticktick\n    cache_ttl_s: {ttl}\n"
            f"    options: {{token_env: TT_TOKEN, base_url: '{base_url}', page_size: {PAGE}, "
            f"completed_days: 36500, max_retry_wait_s: 5}}\n")
        yield tmp_path


@pytest.fixture
def workspace(tmp_path, fake, monkeypatch):
    yield from _workspace(tmp_path, fake, monkeypatch, 0)


@pytest.fixture
def cached(tmp_path, fake, monkeypatch):
    yield from _workspace(tmp_path, fake, monkeypatch, 300)


def run(workspace, *args):
    return CliRunner().invoke(cli, [*args, "-C", str(workspace)], catch_exceptions=False)


def grow(fake):
    """60 completed tasks of 100 KB: 6 full pages of completed tasks, 6 MB of answers."""
    for n in range(60):
        fake.tasks[f"6c{n:022x}"] = {
            "id": f"6c{n:022x}", "projectId": WORK, "title": f"Done {n}",
            "content": "x" * 100_000, "status": 2, "tags": [],
            "completedTime": f"2026-10-{1 + n % 28:02d}T{n % 24:02d}:00:00.000+0000"}
    fake.requests.clear()


def test_native_search_reads_the_listing_no_further_than_the_budget(workspace, fake):
    for step in ("pull", "ingest", "embed"):
        assert run(workspace, step).exit_code == 0
    grow(fake)
    out = run(workspace, "search", "--hybrid", "consulate passport", "--json")
    assert out.exit_code == 0, out.output
    answer = json.loads(out.stdout)
    notes = " ".join(map(str, answer["degradation"]))
    assert "native search of tasks" in notes
    assert "limits.max_pull_bytes (2,000,000) bytes of answers" in notes
    assert answer["results"]          # keyword and vector still answer
    assert fake.calls("POST", "/task/completed") == 3     # not the 7 pages of the listing


def test_update_refuses_a_listing_past_the_budget_and_changes_nothing(workspace, fake):
    grow(fake)
    before = fake.tasks[PASSPORT]["content"]
    out = run(workspace, "update", "Renew passport", "--append", "why: travel")
    assert out.exit_code != 0
    assert "TickTick adapter 'tasks': the app's listing passed limits.max_pull_bytes " \
           "(2,000,000) bytes of answers" in out.output
    assert "Raise limits.max_pull_bytes in mindgraph.yml" in out.output
    assert fake.calls("POST", "/task/completed") == 3
    assert fake.tasks[PASSPORT]["content"] == before
    assert not any(m == "POST" and p.startswith("/task/6") for m, p, _ in fake.requests)


def test_create_in_a_named_list_refuses_a_listing_past_the_budget(workspace, fake):
    grow(fake)
    count = len(fake.tasks)
    out = run(workspace, "create", "Buy stamps", "--project", "Errands")
    assert out.exit_code != 0
    assert "limits.max_pull_bytes (2,000,000) bytes of answers" in out.output
    assert len(fake.tasks) == count and fake.calls("POST", "/task") == 0
    assert fake.calls("POST", "/task/completed") == 3


def test_create_in_the_inbox_says_why_pull_cannot_file_it_yet(workspace, fake):
    grow(fake)
    out = run(workspace, "create", "Buy stamps", "--json")
    assert out.exit_code == 0, out.output
    created = json.loads(out.stdout)
    assert fake.tasks[created["item"]["id"]]["title"] == "Buy stamps"    # it was written
    assert created["raw_note"] == ""
    assert "limits.max_pull_bytes (2,000,000) bytes of answers" in created["next"]
    assert fake.calls("POST", "/task/completed") == 3


def test_a_cache_file_over_the_budget_is_ignored_unread(cached, fake):
    cache = cached / ".mindgraph" / "apps" / "tasks.json"
    cache.parent.mkdir(parents=True)
    projects = [{"id": p["id"], "name": p["name"], "kind": "tasks"} for p in fake.projects]
    ghost = {"id": "6f" + "0" * 22, "title": "Ghost", "content": "g" * (BUDGET + 1000),
             "project": WORK, "project_name": "Work"}
    cache.write_text(json.dumps({"version": 1, "fetched_at": time.time(),
                                 "projects": projects, "items": [ghost]}))
    assert cache.stat().st_size > BUDGET

    out = run(cached, "create", "Buy stamps", "--project", "Errands", "--json")
    assert out.exit_code == 0, out.output
    assert fake.calls("GET", "/project") == 1           # listed again, not taken from the file
    assert cache.stat().st_size < BUDGET                 # replaced by the fresh listing
    assert "Ghost" not in cache.read_text()


def test_rest_smart_search_reads_the_listing_no_further_than_the_budget(workspace, fake,
                                                                       caplog):
    from fastapi.testclient import TestClient

    from mindgraph.core import Mindgraph
    from mindgraph.serve.rest import create_app

    for step in ("pull", "ingest", "embed"):
        assert run(workspace, step).exit_code == 0
    grow(fake)
    app = create_app(Mindgraph.open(workspace), token="s" * 40)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        answer = client.get("/smart_search", params={"q": "consulate passport"},
                            headers={"Authorization": "Bearer " + "s" * 40})
    assert answer.status_code == 200, answer.text
    notes = json.dumps(answer.json().get("degradation"))
    # over REST the app's own words go to the server's log only (test_apps_serve.py)
    assert "native search of tasks failed (ListingTooLarge;" in notes, notes
    assert "limits.max_pull_bytes (2,000,000) bytes of answers" in caplog.text
    assert fake.calls("POST", "/task/completed") == 3     # not the 7 pages of the listing
