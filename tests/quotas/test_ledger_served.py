"""The quota ledger's own trouble, as the servers' callers meet it.

- Another process holds the ledger's write lock (a ``sqlite3`` shell or a backup left in a
  transaction): a request that must count waits ``BUSY_WAIT_S`` (2 s) at most, then gets a
  503 naming the cause, with Retry-After; nothing was counted, called or written. Before,
  it held a request lane ~10 s and said to check that the folder was writable and had room.
- The ledger is damaged: it is moved aside and the request is served (REST and MCP), where
  before every LLM request of every identity was a 503.

A real second process holds the lock; a local server speaking OpenAI's API counts calls.
"""

import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "serve"))
sys.path.insert(0, str(Path(__file__).parents[1] / "scopes"))
sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval"))
from live_server import stop  # noqa: E402
from scopes_support import TOKENS  # noqa: E402
from test_ledger_damage import damage  # noqa: E402
from test_mcp_documents import call_over_http  # noqa: E402
from test_quotas_served import QUESTIONS, _bearer, _configure, _rest, _search, llm, \
    workspace  # noqa: E402,F401 (fixtures)

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.quotas import QuotaLedger  # noqa: E402
from mindgraph.serve.mcp import create_http_app, create_mcp_server  # noqa: E402

HOLDER = """import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(300)
"""


def test_a_ledger_locked_by_another_process_is_a_prompt_503_naming_it(workspace, llm):
    _configure(workspace, llm, "  llm_calls_per_hour: 5\n")
    path = workspace / ".mindgraph" / "quotas.sqlite"
    QuotaLedger(path).take("llm_calls", "acme/alice", 1, 5, 3600.0)     # the server ran
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        core, client = _rest(workspace)
        with client:
            started = time.monotonic()
            write = client.post("/documents", json={"title": "Carol plan", "text": "A plan."},
                                headers=_bearer("carol"))
            waited = time.monotonic() - started
            started = time.monotonic()
            search = _search(client, "carol", QUESTIONS[0])
            searched = time.monotonic() - started
            owner = _search(client, "owner", QUESTIONS[1])      # never counted: served
            stop(holder)
            after = _search(client, "carol", QUESTIONS[2])
        core.close()
    finally:
        if holder.poll() is None:
            stop(holder)
    assert write.status_code == 503, write.text
    assert 1.5 <= waited <= 6.0, waited                 # 2 s of waiting, not 10
    assert write.headers["Retry-After"] == "5"
    body = write.json()
    assert body["error"] == "QuotaLedgerBusy"
    assert "locked by another process" in body["detail"]
    assert "quotas.sqlite" in body["detail"] and str(workspace) not in body["detail"]
    assert not (workspace / "raw/globex/personal/carol/api-notes").exists()
    # search has a fallback: answered without expansion, saying why, and at once (the
    # lock was found held a moment ago: 0.1 s of waiting, not 2 s again)
    assert search.status_code == 200, search.text
    assert "query expansion failed (QuotaLedgerBusy); pass 1 results only" in \
        search.json()["degradation"]
    assert searched < 1.5, searched
    assert owner.status_code == 200, owner.text
    assert after.status_code == 200, after.text         # the holder gone: counted again
    assert not any("QuotaLedgerBusy" in d for d in after.json()["degradation"])
    assert len(llm.requests) == 2                       # the owner's and carol's last


@pytest.mark.parametrize("how", ["not-a-database", "truncated", "other-tables"])
def test_rest_a_damaged_ledger_is_moved_aside_and_the_request_served(workspace, llm, how):
    _configure(workspace, llm, "  llm_calls_per_hour: 1\n")
    damage(workspace / ".mindgraph" / "quotas.sqlite", how)
    core, client = _rest(workspace)
    with client:
        first = _search(client, "carol", QUESTIONS[0])
        second = _search(client, "carol", QUESTIONS[1])
    core.close()
    assert first.status_code == 200, first.text
    assert second.status_code == 429, second.text       # counting goes on, afresh
    assert len(list((workspace / ".mindgraph").glob("quotas.sqlite.corrupt-*"))) == 1
    assert len(llm.requests) == 1


def test_mcp_a_damaged_ledger_is_moved_aside_and_the_tool_served(workspace, llm):
    _configure(workspace, llm, "  llm_calls_per_hour: 1\n")
    damage(workspace / ".mindgraph" / "quotas.sqlite", "not-a-database")
    core = Mindgraph.open(workspace)
    app = create_http_app(create_mcp_server(core), scopes=core.scopes)
    with TestClient(app, base_url="http://127.0.0.1:8766") as client:
        first = call_over_http(client, TOKENS["carol"], "smart_search", {"query": QUESTIONS[0]})
        second = call_over_http(client, TOKENS["carol"], "smart_search",
                                {"query": QUESTIONS[1]})
    core.close()
    assert not first.get("isError"), first
    assert second["isError"] is True and "limits.llm_calls_per_hour" in \
        second["content"][0]["text"]
    assert len(list((workspace / ".mindgraph").glob("quotas.sqlite.corrupt-*"))) == 1
    assert len(llm.requests) == 1
