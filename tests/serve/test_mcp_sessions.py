"""MCP sessions over streamable HTTP are bounded (a real `mindgraph mcp --transport http`):
at most serve.mcp_max_sessions open at once, each dropped after serve.mcp_session_idle_s
without a request. Unbounded, 3,000 `initialize` calls from any local process kept ~38 kB
each for 30 minutes."""

from __future__ import annotations

import time

import httpx

from test_serve_signals import ACCEPT, INITIALIZE, start, stops_on_sigterm


def opened(url: str) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, headers=ACCEPT, timeout=30)


def stats(url: str, session: str) -> httpx.Response:
    return httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                 "params": {"name": "stats", "arguments": {}}},
                      headers=ACCEPT | {"mcp-session-id": session,
                                        "mcp-protocol-version": "2025-06-18"}, timeout=30)


def test_sessions_are_capped_and_an_idle_one_is_dropped(workspace):
    (workspace / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 32\n"
        "serve:\n  mcp_max_sessions: 2\n  mcp_session_idle_s: 3\n")
    process, port = start(workspace, "mcp", "--transport", "http")
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        first, second = opened(url), opened(url)
        assert first.status_code == second.status_code == 200
        one = first.headers["mcp-session-id"]
        assert stats(url, one).status_code == 200
        refused = opened(url)                       # a third while two are open
        assert refused.status_code == 503, refused.text
        time.sleep(4.5)                             # both idle past 3 s: dropped
        assert stats(url, one).status_code == 404
        again = opened(url)
        assert again.status_code == 200, again.text
        assert stats(url, again.headers["mcp-session-id"]).status_code == 200
    finally:
        stops_on_sigterm(process)


def test_session_bounds_are_checked_with_the_config():
    import pytest

    from mindgraph.config import settings_from_dict
    from mindgraph.errors import ConfigError

    for key, value in (("mcp_max_sessions", 0), ("mcp_session_idle_s", 0)):
        with pytest.raises(ConfigError, match=f"serve.{key}"):
            settings_from_dict({"serve": {key: value}})


ALICE, CAROL = "alice-token-" + "a" * 32, "carol-token-" + "c" * 32
IDENTITIES = ("scopes:\n  identities:\n"
              "    - {name: alice, tenant: acme, agent: alice, token_env: MG_TEST_ALICE}\n"
              "    - {name: carol, tenant: globex, agent: carol, token_env: MG_TEST_CAROL}\n")


def opened_by(url: str, token: str) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, timeout=30,
                      headers=ACCEPT | {"Authorization": f"Bearer {token}"})


def stats_as(url: str, session: str, token: str) -> httpx.Response:
    return httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                 "params": {"name": "stats", "arguments": {}}},
                      headers=ACCEPT | {"mcp-session-id": session, "Authorization":
                                        f"Bearer {token}", "mcp-protocol-version":
                                        "2025-06-18"}, timeout=30)


def test_one_identity_cannot_take_every_session_nor_use_anothers(workspace, monkeypatch):
    """alice opens more sessions than the whole server holds: each one past her share closes
    her own least recently used one, so carol can still open hers; a session answers only
    the identity that opened it (404 to another, as for a session that does not exist)."""
    monkeypatch.setenv("MG_TEST_ALICE", ALICE)
    monkeypatch.setenv("MG_TEST_CAROL", CAROL)
    (workspace / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 32\n" + IDENTITIES +
        "serve:\n  mcp_max_sessions: 6\n  mcp_max_sessions_per_identity: 3\n")
    process, port = start(workspace, "mcp", "--transport", "http")
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        alice = []
        for _ in range(10):                     # more than mcp_max_sessions
            answer = opened_by(url, ALICE)
            assert answer.status_code == 200, answer.text
            alice.append(answer.headers["mcp-session-id"])
        assert [stats_as(url, s, ALICE).status_code for s in alice] == [404] * 7 + [200] * 3
        carol = [opened_by(url, CAROL) for _ in range(3)]
        assert [c.status_code for c in carol] == [200] * 3, carol[-1].text
        mine = carol[0].headers["mcp-session-id"]
        assert stats_as(url, mine, CAROL).status_code == 200
        # another identity's token on a live session: 404, and the session is unharmed
        taken = stats_as(url, alice[9], CAROL)
        assert taken.status_code == 404, taken.text
        assert "Session not found" in taken.text
        unknown = stats_as(url, "0" * 32, CAROL)        # an id no one holds: the same answer
        assert (unknown.status_code, unknown.content) == (404, taken.content)
        assert {k: v for k, v in unknown.headers.items() if k != "date"} == \
            {k: v for k, v in taken.headers.items() if k != "date"}
        assert stats_as(url, mine, ALICE).status_code == 404
        assert stats_as(url, alice[9], ALICE).status_code == 200
        # the oldest of her three used again: her next one closes alice[8], the least
        # recently used, not alice[7]
        assert stats_as(url, alice[7], ALICE).status_code == 200
        assert opened_by(url, ALICE).status_code == 200
        assert stats_as(url, alice[8], ALICE).status_code == 404
        assert stats_as(url, alice[7], ALICE).status_code == 200
        # a session ended by its client (DELETE) frees its place in the share
        gone = httpx.delete(url, timeout=30, headers={"mcp-session-id": alice[7],
                                                     "Authorization": f"Bearer {ALICE}"})
        assert gone.status_code == 200, gone.text
        assert opened_by(url, ALICE).status_code == 200
        assert stats_as(url, alice[9], ALICE).status_code == 200
    finally:
        stops_on_sigterm(process)


def test_the_share_per_identity_is_checked_with_the_config():
    import pytest

    from mindgraph.config import settings_from_dict
    from mindgraph.errors import ConfigError

    assert settings_from_dict({}).serve.mcp_max_sessions_per_identity == 100
    with pytest.raises(ConfigError, match="serve.mcp_max_sessions_per_identity"):
        settings_from_dict({"serve": {"mcp_max_sessions_per_identity": -1}})


def test_a_second_session_header_cannot_reach_anothers_session(workspace, monkeypatch):
    """The SDK routes a request by its first Mcp-Session-Id header: one that named carol's
    session first and alice's own second passed the owner check and let alice call tools in
    carol's session and DELETE it. Several session ids (or tokens) are refused outright."""
    monkeypatch.setenv("MG_TEST_ALICE", ALICE)
    monkeypatch.setenv("MG_TEST_CAROL", CAROL)
    (workspace / "mindgraph.yml").write_text(
        "embedding:\n  provider: hashing\n  dimension: 32\n" + IDENTITIES)
    process, port = start(workspace, "mcp", "--transport", "http")
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        carols = opened_by(url, CAROL).headers["mcp-session-id"]
        alices = opened_by(url, ALICE).headers["mcp-session-id"]
        both = [("mcp-session-id", carols), ("mcp-session-id", alices),
                ("authorization", f"Bearer {ALICE}"), *ACCEPT.items(),
                ("mcp-protocol-version", "2025-06-18")]
        call = httpx.post(url, headers=both, timeout=30, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "stats", "arguments": {}}})
        assert call.status_code == 400 and "one Mcp-Session-Id" in call.text, call.text
        ended = httpx.delete(url, headers=both, timeout=30)
        assert ended.status_code == 400, ended.text
        assert stats_as(url, carols, CAROL).status_code == 200      # carol's is unharmed
        assert stats_as(url, alices, ALICE).status_code == 200
        two_tokens = httpx.post(url, json=INITIALIZE, timeout=30, headers=[
            *ACCEPT.items(), ("authorization", f"Bearer {ALICE}"),
            ("authorization", f"Bearer {CAROL}")])
        assert two_tokens.status_code == 401 and "one Authorization" in two_tokens.text
    finally:
        stops_on_sigterm(process)
