"""A note app's own search as a retrieval branch, through a real MCP client session.

The SDK's client talks to the MCP server in-process; the server's hybrid search asks the
TickTick adapter (the fake open API on a local port, listed afresh at each search:
``cache_ttl_s: 0``), beside keyword and vector search over the pulled, compiled notes. A word
the app holds and the wiki does not yet (the task was edited in the app after the pull) is
found by the native branch alone, named ``native`` in the hit's sources, with the deep link
back into the app; an app that fails leaves the other retrievers answering and says so in
``degradation``.
"""

import json

import anyio
import pytest
from mcp import Client
from ticktick_fake import TOKEN, FakeTickTick

from mindgraph.adapters.pull import pull
from mindgraph.config import load_settings
from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server

PASSPORT = "63b7bebb91c0a5474805fcd4"
NOTE = "ticktick/Errands/Renew passport.md"


@pytest.fixture
def fake():
    return FakeTickTick()


@pytest.fixture
def core(tmp_path, fake, monkeypatch):
    """The fixtures' tasks pulled and compiled, the app asked again at every search."""
    monkeypatch.setenv("TT_TOKEN", TOKEN)
    (tmp_path / "raw").mkdir()
    with fake.serve() as base_url:
        (tmp_path / "mindgraph.yml").write_text(
            "embedding: {provider: hashing, dimension: 64}\n"
            "adapters:\n  - name: tasks\n    type: ticktick\n    cache_ttl_s: 0\n"
            f"    options: {{token_env: TT_TOKEN, base_url: '{base_url}', "
            f"completed_days: 36500}}\n")
        assert pull(load_settings(tmp_path)).ok
        core = Mindgraph.open(tmp_path)
        assert core.ingest().ok
        core.embed()
        yield core
        core.close()


def smart_search(core, query):
    """``smart_search`` (verbose: with each hit's sources) over a real MCP client session."""
    async def main():
        with anyio.fail_after(30):
            async with Client(create_mcp_server(core)) as client:
                return await client.call_tool("smart_search", {"query": query, "limit": 10,
                                                               "verbose": True})
    result = anyio.run(main)
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def test_the_apps_own_search_finds_what_the_wiki_does_not_hold_yet(core, fake):
    fake.tasks[PASSPORT]["content"] += " Ask for an apostille."      # edited in the app
    listings = fake.calls("GET", "/project")
    answer = smart_search(core, "apostille")
    assert fake.calls("GET", "/project") > listings              # the app was asked
    hits = {hit["page"]: hit for hit in answer["results"]}
    # no page holds the word (keyword finds none; vectors rank by hashed letters): the
    # app's search alone finds the task, first, with its deep link
    assert not any("keyword" in hit["sources"] for hit in hits.values()), json.dumps(answer)
    assert [page for page, hit in hits.items() if "native" in hit["sources"]] == [NOTE]
    assert hits[NOTE]["sources"]["native"]["rank"] == 1
    assert hits[NOTE]["url"] == ("https://ticktick.com/webapp/#p/6226ff9877acee87727f6bca/"
                                 f"tasks/{PASSPORT}")
    assert not any("tasks" in note for note in answer.get("degradation", []))
    # a word both hold: the app's hit is fused with the wiki's retrievers on the same page
    both = {hit["page"]: hit for hit in smart_search(core, "consulate photos")["results"]}
    assert {"native", "keyword"} <= set(both[NOTE]["sources"]), json.dumps(both)


def test_a_failing_app_leaves_the_wiki_answering_and_says_so(core, fake):
    fake.token = "revoked"                  # the app now answers 401
    answer = smart_search(core, "consulate photos")
    hits = {hit["page"]: hit for hit in answer["results"]}
    assert NOTE in hits and "native" not in hits[NOTE]["sources"]
    assert "native search of tasks failed (AdapterError; the server's log has the details); " \
        "results come from the other retrievers" in answer["degradation"], json.dumps(answer)
