"""The note-app writes over REST (who may write, error statuses) and MCP (a real SDK client),
against the fake TickTick open API on a local port."""

import json
import logging

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from ticktick_fake import TOKEN, FakeTickTick

from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app

TOKENS = {"alice": "a" * 40, "carol": "c" * 40, "server": "s" * 40}
PASSPORT = "63b7bebb91c0a5474805fcd4"


@pytest.fixture
def fake():
    return FakeTickTick()


@pytest.fixture
def workspace(tmp_path, fake, monkeypatch):
    """A compiled workspace with identities alice (a writer of the app) and carol (not)."""
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Home.md").write_text("# Home\n\nHello.\n")
    monkeypatch.setenv("TT_TOKEN", TOKEN)
    monkeypatch.setenv("TOKEN_ALICE", TOKENS["alice"])
    monkeypatch.setenv("TOKEN_CAROL", TOKENS["carol"])
    with fake.serve() as base_url:
        (tmp_path / "mindgraph.yml").write_text(
            "embedding: {provider: hashing, dimension: 64}\n"
            "scopes:\n  identities:\n"
            "    - {name: alice, tenant: acme, agent: alice, token_env: TOKEN_ALICE}\n"
            "    - {name: carol, tenant: acme, agent: carol, token_env: TOKEN_CAROL}\n"
            "adapters:\n  - name: tasks\n    type: ticktick\n    writers: [alice]\n"
            f"    options: {{token_env: TT_TOKEN, base_url: '{base_url}', "
            f"completed_days: 36500}}\n")
        yield tmp_path


@pytest.fixture
def client(workspace):
    app = create_app(Mindgraph.open(workspace), token=TOKENS["server"])
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield client


def as_(who):
    return {"Authorization": f"Bearer {TOKENS[who]}"}


def test_rest_creates_and_updates_in_the_app(client, fake):
    made = client.post("/apps/items", json={"title": "Buy stamps", "project": "Errands"},
                       headers=as_("alice"))
    assert made.status_code == 200, made.text
    item = made.json()["item"]
    assert made.json()["raw_note"] == "ticktick/Errands/Buy stamps.md"    # target: its name
    assert fake.tasks[item["id"]]["projectId"] == "6226ff9877acee87727f6bca"
    changed = client.patch(f"/apps/items/{item['id']}", json={"append": "why: admin"},
                           headers=as_("server"))            # the local identity
    assert changed.status_code == 200 and changed.json()["item"]["content"] == "why: admin"
    projects = client.get("/apps/projects", headers=as_("alice")).json()["projects"]
    assert [p["name"] for p in projects][:2] == ["Inbox", "Errands"]


def test_rest_only_writers_may_write(client, fake):
    refused = client.post("/apps/items", json={"title": "Not mine"}, headers=as_("carol"))
    assert refused.status_code == 403
    assert "adapters[].writers" in refused.json()["detail"]
    assert client.post("/apps/items", json={"title": "x"}).status_code == 401
    assert not [t for t in fake.tasks.values() if t["title"] == "Not mine"]


def test_rest_errors_say_what_went_wrong(client, fake, monkeypatch):
    gone = client.patch("/apps/items/nosuchid", json={"title": "x"}, headers=as_("alice"))
    assert gone.status_code == 404 and "no item 'nosuchid'" in gone.json()["detail"]
    nothing = client.patch(f"/apps/items/{PASSPORT}", json={}, headers=as_("alice"))
    assert nothing.status_code == 400 and "nothing to change" in nothing.json()["detail"]
    unknown = client.post("/apps/items", json={"title": "x", "app": "notion"},
                          headers=as_("alice"))
    assert unknown.status_code == 404 and "no note app named 'notion'" in unknown.text
    fake.token = "rotated"
    expired = client.post("/apps/items", json={"title": "x"}, headers=as_("alice"))
    assert expired.status_code == 502 and "(AdapterError)" in expired.json()["detail"]


SAID = "project quota exceeded for org-4417 (see /srv/tt/limits.yml)"
GENERIC = "The note app or data source failed (AdapterError)"


def test_the_apps_own_words_reach_the_log_not_the_agent(client, fake, monkeypatch, caplog):
    monkeypatch.setattr(fake, "handle", lambda request: httpx.Response(400, text=SAID))
    with caplog.at_level(logging.WARNING, logger="mindgraph.serve"):
        failed = client.post("/apps/items", json={"title": "x"}, headers=as_("alice"))
    assert failed.status_code == 502
    assert failed.json()["detail"].startswith(GENERIC), failed.text
    assert "org-4417" not in failed.text and "/srv/tt" not in failed.text
    assert "127.0.0.1" not in failed.text
    assert SAID in caplog.text and "HTTP 400" in caplog.text


def test_the_apps_own_words_reach_the_log_not_the_mcp_agent(workspace, fake, monkeypatch,
                                                            caplog):
    monkeypatch.setattr(fake, "handle", lambda request: httpx.Response(400, text=SAID))
    server = create_mcp_server(Mindgraph.open(workspace))

    async def main():
        with anyio.fail_after(30):
            async with Client(server) as mcp:
                return await mcp.call_tool("create_item", {"title": "x"})

    with caplog.at_level(logging.WARNING, logger="mindgraph.serve"):
        failed = anyio.run(main)
    text = failed.content[0].text
    assert failed.is_error and GENERIC in text, text
    assert "org-4417" not in text and "/srv/tt" not in text and "127.0.0.1" not in text
    assert SAID in caplog.text


def test_mcp_tools_write_to_the_app(workspace, fake):
    server = create_mcp_server(Mindgraph.open(workspace))

    async def script(client):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        made = await client.call_tool("create_item", {"title": "Call the bank",
                                                      "content": "About the card."})
        item = json.loads(made.content[0].text)["item"]
        changed = await client.call_tool("update_item", {"item": "Call the bank",
                                                         "append": "why: money — card"})
        projects = await client.call_tool("list_app_projects", {})
        return tools, item, json.loads(changed.content[0].text), \
            json.loads(projects.content[0].text)

    async def main():
        with anyio.fail_after(30):
            async with Client(server) as client:
                return await script(client)

    tools, item, changed, projects = anyio.run(main)
    assert tools["create_item"].annotations.read_only_hint is False
    assert tools["update_item"].annotations.destructive_hint is False
    assert tools["list_app_projects"].annotations.read_only_hint is True
    assert fake.tasks[item["id"]]["content"] == "About the card.\nwhy: money — card"
    assert changed["action"] == "updated" and changed["url"].endswith(item["id"])
    assert len(projects["projects"]) == 4


def test_an_item_an_agent_creates_carries_the_trunk_instruction(workspace, fake):
    """DESIGN: "a new item carries an instruction for the calling agent to pick a project
    trunk … and append `why: <trunk> — <reason>`". Over MCP, the agents' way in, create_item
    answered the item alone: the agent had to know to call item_relevance."""
    server = create_mcp_server(Mindgraph.open(workspace))

    async def create(title):
        with anyio.fail_after(30):
            async with Client(server) as client:
                made = await client.call_tool("create_item", {"title": title})
                assert not made.is_error, made.content[0].text
                return json.loads(made.content[0].text)

    bare = anyio.run(create, "Call the bank")
    assert "relevance" not in bare and "relevance_error" not in bare   # no catalog kept
    (workspace / "wiki" / "Trunk Catalog.md").write_text(
        "---\ntype: trunk-catalog\n---\n# Trunk Catalog\n\n```json\n"
        '[{"name": "Money", "description": "bank, cards, taxes"}]\n```\n')
    made = anyio.run(create, "Cancel the old card")
    block = made["relevance"]
    assert made["item"]["id"] in block and "Money" in block and "why:" in block
    (workspace / "wiki" / "Trunk Catalog.md").write_text(
        "---\ntype: trunk-catalog\n---\n# Trunk Catalog\n\n```json\n{\"not\": \"a list\"}\n```\n")
    broken = anyio.run(create, "Order checks")
    assert broken["item"]["title"] == "Order checks"            # created all the same
    assert "Trunk Catalog" in broken["relevance_error"]


def test_rest_create_carries_the_trunk_instruction_when_a_catalog_is_kept(client, workspace):
    bare = client.post("/apps/items", json={"title": "Buy stamps"}, headers=as_("server"))
    assert bare.status_code == 200 and bare.json()["relevance"] is None
    (workspace / "wiki" / "Trunk Catalog.md").write_text(
        "---\ntype: trunk-catalog\n---\n# Trunk Catalog\n\n```json\n"
        '[{"name": "Errands", "description": "post office, shopping"}]\n```\n')
    made = client.post("/apps/items", json={"title": "Post the parcel"}, headers=as_("server"))
    assert made.status_code == 200, made.text
    block = made.json()["relevance"]
    assert made.json()["item"]["id"] in block and "Errands" in block and "why:" in block
