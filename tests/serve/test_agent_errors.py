"""What an agent reads when the server's side fails: a provider's error (its answer's body, its
address, the operator's account) and an unexpected exception (paths, internals) are said in
general terms over REST and MCP, and in a background job's status; the whole error goes to the
server's log. The REST tests use a real provider client against a local server that fails."""

import logging
import time

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from refusing_api import json_api, refusing_api

from mindgraph.core import Mindgraph
from mindgraph.errors import ProviderError
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app

SAID = "quota exceeded for org-4417 (gateway config /srv/gateway/limits.yml)"
GENERIC = "The model provider the server uses failed (ProviderError)"


@pytest.fixture
def failing_provider(tmp_path, monkeypatch):
    """A workspace whose embedding provider (OpenAI's API, served locally) refuses."""
    with refusing_api(400, lambda request: {"message": SAID}) as server:
        yield from _workspace_served_by(server, tmp_path, monkeypatch)


def _workspace_served_by(server, tmp_path, monkeypatch):
    monkeypatch.setenv("P22_EMBED_KEY", "sk-test")
    (tmp_path / "wiki").mkdir()
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "Airships.md").write_text("# Airships\n\nAirships carry trunks.\n")
    (tmp_path / "mindgraph.yml").write_text(
        f"embedding:\n  provider: openai\n  max_retries: 0\n  api_key_env: P22_EMBED_KEY\n"
        f"  base_url: http://127.0.0.1:{server.server_port}/v1\n")
    core = Mindgraph.open(tmp_path)
    yield core
    core.close()


def test_a_provider_error_over_rest_is_generic_and_logged_whole(failing_provider, caplog):
    client = TestClient(create_app(failing_provider), base_url="http://127.0.0.1:8765")
    with caplog.at_level(logging.WARNING, logger="mindgraph.serve"):
        answer = client.post("/reindex")
    assert answer.status_code == 502
    assert answer.json() == {"error": "ProviderError", "detail": GENERIC + "; the server's "
                             "operator can read why in the server's log."}
    assert "127.0.0.1" not in answer.text and "org-4417" not in answer.text
    assert SAID in caplog.text and "POST /reindex" in caplog.text


def test_a_background_jobs_provider_error_is_generic_in_its_status(failing_provider, caplog):
    client = TestClient(create_app(failing_provider), base_url="http://127.0.0.1:8765")
    with caplog.at_level(logging.WARNING, logger="mindgraph.documents"):
        assert client.post("/rescan").status_code == 202
        for _ in range(400):
            status = client.get("/status")
            if not status.json()["busy"]:
                break
            time.sleep(0.05)
    assert GENERIC in status.text, status.text
    assert "org-4417" not in status.text and "/srv/gateway" not in status.text
    assert SAID in caplog.text


def test_mcp_tools_say_provider_and_internal_errors_in_general_terms(tmp_path, monkeypatch,
                                                                    caplog):
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "A.md").write_text("# A\n\nText.\n")
    mg = Mindgraph.open(tmp_path)
    failures = iter([ProviderError(f"openai at http://10.0.0.7/v1 answered HTTP 400: {SAID}"),
                     RuntimeError("cannot open /home/op/.cache/mindgraph/x.bin")])

    def failing(*args, **kwargs):
        raise next(failures)

    monkeypatch.setattr(mg, "stats", failing)

    async def main():
        async with Client(create_mcp_server(mg)) as mcp:
            return [await mcp.call_tool("stats", {}) for _ in range(2)]

    with caplog.at_level(logging.INFO):
        provider, internal = anyio.run(main)
    assert provider.is_error and GENERIC in provider.content[0].text
    assert internal.is_error and internal.content[0].text == "Error executing tool stats"
    for answer in (provider, internal):
        assert "10.0.0.7" not in answer.content[0].text and "/home/op" not in \
            answer.content[0].text and "org-4417" not in answer.content[0].text
    assert SAID in caplog.text and "/home/op/.cache" in caplog.text
    mg.close()


def embedding_api(vector_of):
    """A local OpenAI-compatible embeddings API answering ``vector_of(text)`` per input."""

    def answer(_request, asked: dict) -> tuple[int, dict]:
        texts = asked["input"] if isinstance(asked["input"], list) else [asked["input"]]
        return 200, {"data": [{"index": i, "embedding": vector_of(text)}
                              for i, text in enumerate(texts)]}

    return json_api(answer)


def test_a_section_the_provider_refuses_is_named_to_agents_in_general_terms(tmp_path, caplog):
    """The catch-up note of a changed page whose vector came back unusable named the page
    and section, the model and its answer to every identity; agents read how many sections
    and where the details are, the server's log reads the whole note."""
    def vector_of(text):
        return [0.0, 0.0, 0.0] if "Payroll" in text else [1.0, 0.5, 0.25]

    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "Airships.md").write_text("# Airships\n\nAirships carry trunks.\n")
    with embedding_api(vector_of) as server:
        (tmp_path / "mindgraph.yml").write_text(
            f"embedding:\n  provider: openai\n  model: m\n  dimension: 3\n  max_retries: 0\n"
            f"  base_url: http://127.0.0.1:{server.server_port}/v1\n")
        core = Mindgraph.open(tmp_path)
        core.embed()
        client = TestClient(create_app(core), base_url="http://127.0.0.1:8765")
        assert client.get("/smart_search", params={"q": "airships"}).json()["degradation"] \
            == []
        (tmp_path / "wiki" / "Secret Payroll.md").write_text(
            "# Secret Payroll\n\nPayroll of the airship crews.\n")
        with caplog.at_level(logging.WARNING, logger="mindgraph.serve"):
            notes = client.get("/smart_search", params={"q": "crews"}).json()["degradation"]
        core.close()
    [noted] = [note for note in notes if "could not be embedded" in note]
    assert "1 section(s) refused by the embedding model; the server's log has the " \
        "details" in noted, noted
    assert "Payroll" not in noted and "all-zero" not in noted and "openai:m" not in noted
    assert "Secret Payroll.md#" in caplog.text and "an all-zero vector" in caplog.text
