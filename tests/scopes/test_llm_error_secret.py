"""An LLM server's error page that echoes the request never puts the API key in front of an
agent: search's ``degradation`` says why expansion failed, to every identity, and it used to
quote the provider's error message whole — an OpenAI-compatible gateway that answers "bad
key: Bearer sk-…" handed the workspace's key to any agent that searched. Now the note says
which part failed and the exception's type; the provider's words (its org id, its paths) go
to the server's log only. Real REST app and MCP server, the two-tenant workspace, a local
server speaking OpenAI's error format.
"""

import logging
import time

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from refusing_api import refusing_api
from scopes_support import SERVER_TOKEN, TOKENS, config_text, set_tokens, write_workspace

from mindgraph.core import Mindgraph
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app

API_KEY = "sk-test-0123456789abcdefghijklmnopqrstuv"
ACCOUNT = "for org-4417 (see /srv/gateway/keys.yml)"


def _echoed(request) -> dict:
    """Refuses, quoting the Authorization header it was sent."""
    return {"message": f"invalid key {request.headers.get('Authorization')} {ACCOUNT}",
            "type": "invalid_request_error"}


@pytest.fixture
def served(tmp_path, monkeypatch):
    write_workspace(tmp_path)
    set_tokens(monkeypatch)
    core = Mindgraph.open(tmp_path)
    assert core.ingest().ok
    core.close()
    with refusing_api(401, _echoed) as server:
        yield from _served_by(server, tmp_path, monkeypatch)


def _served_by(server, tmp_path, monkeypatch):
    monkeypatch.setenv("LLM_KEY", API_KEY)
    (tmp_path / "mindgraph.yml").write_text(
        config_text() + "compile:\n  provider: openai\n  model: fake-model\n  api_key_env: "
        f"LLM_KEY\n  base_url: http://127.0.0.1:{server.server_port}/v1\n"
        "retrieval:\n  expansion: always\n")
    core = Mindgraph.open(tmp_path)
    yield core
    core.close()


def test_an_echoed_api_key_never_reaches_an_agent(served, caplog):
    with TestClient(create_app(served, SERVER_TOKEN), base_url="http://127.0.0.1:8765") as c, \
            caplog.at_level(logging.WARNING, logger="mindgraph.serve"):
        answer = c.get("/smart_search", params={"q": "merger memo terms"},
                       headers={"Authorization": f"Bearer {TOKENS['carol']}"})
    assert answer.status_code == 200, answer.text
    notes = " ".join(answer.json()["degradation"])
    assert "LLM query expansion failed (ProviderError; the server's log has the details)" \
        in notes, notes
    for secret in (API_KEY, "invalid key", "org-4417", "/srv/gateway"):
        assert secret not in answer.text
    # the whole message, key blanked, in the server's log, once
    assert caplog.text.count(f"invalid key Bearer <api key> {ACCOUNT}") == 1, caplog.text
    assert API_KEY not in caplog.text


def test_the_mcp_smart_search_says_it_in_general_terms_too(served, caplog):
    async def main():
        async with Client(create_mcp_server(served)) as mcp:
            return await mcp.call_tool("smart_search", {"query": "merger memo terms"})

    with caplog.at_level(logging.WARNING, logger="mindgraph.serve"):
        answer = anyio.run(main)
    text = answer.content[0].text
    assert not answer.is_error and "LLM query expansion failed (ProviderError" in text, text
    for secret in (API_KEY, "invalid key", "org-4417", "/srv/gateway"):
        assert secret not in text
    assert f"invalid key Bearer <api key> {ACCOUNT}" in caplog.text


def test_an_echoed_embedding_key_never_reaches_an_agent(tmp_path, monkeypatch):
    write_workspace(tmp_path)
    set_tokens(monkeypatch)
    core = Mindgraph.open(tmp_path)
    assert core.ingest().ok
    core.close()
    with refusing_api(401, _echoed) as server:
        monkeypatch.setenv("EMBED_KEY", API_KEY)
        (tmp_path / "mindgraph.yml").write_text(
            config_text().replace(
                "embedding:\n  provider: hashing\n  dimension: 64\n",
                "embedding:\n  provider: openai\n  model: fake-embedder\n  dimension: 64\n"
                f"  api_key_env: EMBED_KEY\n  base_url: http://127.0.0.1:{server.server_port}/v1\n"
                "  max_retries: 0\n"))
        core = Mindgraph.open(tmp_path)
        try:
            carol = {"Authorization": f"Bearer {TOKENS['carol']}"}
            with TestClient(create_app(core, SERVER_TOKEN), base_url="http://127.0.0.1:8765") as c:
                # an agent's rescan embeds; the job's error is shown to its tenant in /status
                assert c.post("/rescan", headers=carol).status_code == 202
                for _ in range(200):
                    status = c.get("/status", headers=carol)
                    if not status.json()["busy"]:
                        break
                    time.sleep(0.05)
            # the provider's own words (here, the echoed key) stay in the server's log
            assert "The model provider the server uses failed" in status.text, status.text
            assert "invalid key" not in status.text and API_KEY not in status.text
        finally:
            core.close()
