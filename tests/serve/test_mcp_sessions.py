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
