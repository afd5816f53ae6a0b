"""TickTick end to end through the CLI: pull → ingest → search links back into the app;
create and update write to the app (never to raw/); a deleted item's note goes; an expired
token says what to do. The app is the fake open API on a local port."""

import hashlib
import json
import sys

import pytest
from click.testing import CliRunner
from ticktick_fake import TOKEN, FakeTickTick

from mindgraph.cli import cli

PASSPORT = "63b7bebb91c0a5474805fcd4"
PASSPORT_NOTE = "ticktick/Errands/Renew passport.md"
CUSTOM = '''
from mindgraph.adapters import RawDocument

class Plain:
    def fetch(self):
        return [RawDocument("hello", "hello.md")]
'''


@pytest.fixture
def fake():
    return FakeTickTick()


@pytest.fixture
def workspace(tmp_path, fake, monkeypatch):
    """A workspace whose `tasks` adapter is TickTick (the fake) beside a fetch-only one."""
    (tmp_path / "raw").mkdir()
    (tmp_path / "mg_plain_adapter.py").write_text(CUSTOM)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("TT_TOKEN", TOKEN)
    with fake.serve() as base_url:
        (tmp_path / "mindgraph.yml").write_text(
            "embedding:\n  provider: hashing\n  dimension: 256\n"
            "adapters:\n"
            "  - name: tasks\n    type: ticktick\n    target: ticktick\n"
            f"    options: {{token_env: TT_TOKEN, base_url: '{base_url}', "
            f"completed_days: 36500, max_retry_wait_s: 5}}\n"
            "  - name: plain\n    type: mg_plain_adapter.Plain\n    target: plain\n")
        yield tmp_path
    sys.modules.pop("mg_plain_adapter", None)


def run(workspace, *args, code=0):
    out = CliRunner().invoke(cli, [*args, "-C", str(workspace)], catch_exceptions=False)
    assert out.exit_code == code, out.output
    return out.output


def raw_hashes(root):
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (root / "raw").rglob("*") if p.is_file()}


def test_pull_ingest_and_answers_that_link_back(workspace, fake):
    pulled = json.loads(run(workspace, "pull", "--json"))
    assert pulled["written"] == 8 and pulled["failed_adapters"] == 0   # 7 items and hello.md
    assert fake.calls() == 4                                 # one bulk listing
    note = (workspace / "raw" / PASSPORT_NOTE).read_text()
    assert f"item_id: {PASSPORT}" in note and "url: https://ticktick.com/webapp/" in note
    run(workspace, "ingest")
    page = json.loads(run(workspace, "get", PASSPORT_NOTE, "--json"))
    assert page["frontmatter"]["url"].endswith(f"/tasks/{PASSPORT}")
    assert page["frontmatter"]["item_id"] == PASSPORT
    keyword = json.loads(run(workspace, "search", "consulate passport", "--json"))
    assert keyword["results"][0]["url"].endswith(f"/tasks/{PASSPORT}")
    run(workspace, "embed")
    answer = json.loads(run(workspace, "search", "--hybrid", "consulate passport photos",
                            "--json"))
    top = answer["results"][0]
    assert top["page"] == PASSPORT_NOTE
    assert top["url"].endswith(f"/tasks/{PASSPORT}")
    assert top["sources"]["native"]["rank"] == 1             # TickTick's corpus search
    assert fake.calls() == 4                                 # warm: no API call at all


def test_create_and_update_write_to_the_app_never_to_raw(workspace, fake):
    run(workspace, "pull")
    before = raw_hashes(workspace)
    created = json.loads(run(workspace, "create", "Buy stamps", "--project", "Errands",
                             "--content", "For the passport forms.", "--json"))
    assert created["action"] == "created" and created["app"] == "tasks"
    assert created["item"]["project_name"] == "Errands"
    assert created["raw_note"] == "ticktick/Errands/Buy stamps.md"
    assert created["url"] == ("https://ticktick.com/webapp/#p/6226ff9877acee87727f6bca/tasks/"
                              + created["item"]["id"])
    assert fake.tasks[created["item"]["id"]]["title"] == "Buy stamps"
    updated = json.loads(run(workspace, "update", "Buy stamps", "--append",
                             "why: admin — passport renewal", "--json"))
    assert updated["item"]["content"] == "For the passport forms.\nwhy: admin — passport renewal"
    text = run(workspace, "update", created["item"]["id"], "--title", "Buy stamps (10)")
    assert text.startswith("Updated 'Buy stamps (10)' in Errands (tasks, id ")
    assert raw_hashes(workspace) == before                  # writing never touches raw/
    listings = fake.calls("GET", "/project")
    pulled = json.loads(run(workspace, "pull", "--json"))
    assert [f["path"] for f in pulled["files"] if f["status"] == "written"] == [
        "ticktick/Errands/Buy stamps (10).md"]
    assert fake.calls("GET", "/project") == listings         # from the corpus cache


def test_create_names_the_raw_note_pull_really_writes_for_a_hostile_title(workspace, fake):
    run(workspace, "pull")
    said = {title: json.loads(run(workspace, "create", title, "--json"))["raw_note"]
            for title in ("../../../../outside", "..\\..\\win", ".hidden", "CON")}
    pulled = json.loads(run(workspace, "pull", "--json"))
    written = sorted(f["path"] for f in pulled["files"] if f["status"] == "written")
    assert sorted(said.values()) == written, (said, written)
    # a title is one file name: its separators are no folders, its leading dots no hidden file
    assert said["../../../../outside"] == "ticktick/Inbox/_.._.._.._outside.md"
    assert said["..\\..\\win"] == "ticktick/Inbox/_.._win.md"
    assert all((workspace / "raw" / path).is_file() for path in written)
    assert not (workspace.parent / "outside.md").exists()


def test_a_deleted_item_is_404_and_pull_removes_its_note(workspace, fake):
    run(workspace, "pull")
    (workspace / "raw" / "ticktick" / "Errands" / "Buy batteries.md").write_text("my edit\n")
    fake.delete(PASSPORT)
    fake.delete("63b7bebb91c0a5474805fcd5")                  # Buy batteries, edited in raw/
    failed = CliRunner().invoke(cli, ["update", PASSPORT, "--append", "x", "--json", "-C",
                                      str(workspace)])
    assert failed.exit_code == 1
    assert "deleted in TickTick" in json.loads(failed.stdout)["detail"]
    (workspace / ".mindgraph" / "apps" / "tasks.json").unlink()   # the cache expired
    pulled = json.loads(run(workspace, "pull", "--json"))
    outcome = {f["path"]: f["status"] for f in pulled["files"] if f["status"] != "unchanged"}
    assert outcome == {PASSPORT_NOTE: "removed", "ticktick/Errands/Buy batteries.md": "kept"}
    assert pulled["removed"] == 1 and pulled["failed_adapters"] == 0
    assert not (workspace / "raw" / PASSPORT_NOTE).exists()
    assert (workspace / "raw" / "plain" / "hello.md").exists()   # fetch-only: never removed
    assert "removed 1" not in run(workspace, "pull")           # only once


def test_an_expired_token_fails_the_pull_with_the_fix(workspace, fake, monkeypatch):
    monkeypatch.setenv("TT_TOKEN", "expired-token")
    out = CliRunner().invoke(cli, ["pull", "-C", str(workspace)])
    assert out.exit_code == 1
    assert "refused the access token in TT_TOKEN (401 Unauthorized" in out.output
    assert "export TT_TOKEN=<token>" in out.output
    assert "written     [plain] plain/hello.md" in out.output     # the other adapter ran


def test_writes_need_a_note_app(tmp_path):
    (tmp_path / "raw").mkdir()
    (tmp_path / "mindgraph.yml").write_text(
        "adapters:\n  - name: notes\n    type: filesystem\n    options: {path: raw}\n")
    out = CliRunner().invoke(cli, ["create", "x", "-C", str(tmp_path)])
    assert out.exit_code == 2 and "no adapter can create or update items" in out.output


TRUNKS = """---
type: trunk-catalog
---
# Trunk Catalog

```json
[{"name": "Admin", "description": "passport, forms, post office errands"},
 {"name": "Garden", "description": "tomato seedlings and compost"}]
```
"""


def test_create_with_relevance_tells_the_agent_to_file_it_under_a_trunk(workspace, fake):
    run(workspace, "pull")
    run(workspace, "ingest")
    before = raw_hashes(workspace)
    missing = json.loads(run(workspace, "create", "Buy envelopes", "--relevance", "--json"))
    assert missing["item"]["id"] in fake.tasks                 # created all the same
    assert "relevance" not in missing and "trunk-catalog" in missing["relevance_error"]
    (workspace / "raw" / "Trunk Catalog.md").write_text(TRUNKS)
    run(workspace, "ingest")
    created = json.loads(run(workspace, "create", "Buy stamps", "--relevance", "--json"))
    block = created["relevance"]
    assert f"call update on item {created['item']['id']}" in block
    assert "why: <trunk>" in block and "- Admin: passport" in block and "- Garden" in block
    text = run(workspace, "create", "Post the forms", "--relevance")
    assert text.startswith("Created 'Post the forms'") and "\nRelevance: pick the one trunk" in text
    after = raw_hashes(workspace)
    after.pop("raw/Trunk Catalog.md")
    assert after == before                                     # the app is written, not raw/
