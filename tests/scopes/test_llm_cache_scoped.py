"""The search LLM's answers (query expansion, reranking) are cached per view, as the query
vectors are: an identity never gets an answer cached for another one.

The cache is a file in the state folder shared by every process. It was one for the whole
workspace, so a question another tenant had asked was answered from it without the LLM —
an LLM call's time faster (hundreds of milliseconds to seconds), telling the asker that
someone, somewhere, had asked exactly that. Real REST app, a local server speaking OpenAI's
API, the two-tenant workspace; the test counts the LLM's requests, not times.
"""

import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval"))
from fake_openai import FakeOpenAI  # noqa: E402
from scopes_support import SERVER_TOKEN, TOKENS, config_text, set_tokens, \
    write_workspace  # noqa: E402

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.serve.rest import create_app  # noqa: E402

QUESTION = "what did the merger memo decide about terms"


@pytest.fixture
def served(tmp_path, monkeypatch):
    """The workspace compiled offline, then served with an LLM for search expansion."""
    write_workspace(tmp_path)
    set_tokens(monkeypatch)
    core = Mindgraph.open(tmp_path)
    assert core.ingest().ok
    core.close()
    with FakeOpenAI(lambda prompt: '["merger terms", "deal memo"]') as llm:
        (tmp_path / "mindgraph.yml").write_text(
            config_text() + f"compile:\n  provider: openai\n  model: fake-model\n"
            f"  base_url: {llm.base_url}\nretrieval:\n  expansion: always\n")
        core = Mindgraph.open(tmp_path)
        with TestClient(create_app(core, SERVER_TOKEN), base_url="http://127.0.0.1:8765") as c:
            yield c, llm
        core.close()


def _ask(client, who: str) -> dict:
    answer = client.get("/smart_search", params={"q": QUESTION},
                        headers={"Authorization": f"Bearer {TOKENS[who]}"})
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_another_tenants_question_is_not_answered_from_its_cache(served):
    client, llm = served
    _ask(client, "carol")
    assert len(llm.requests) == 1
    _ask(client, "carol")                 # her own question again: her cache answers
    assert len(llm.requests) == 1
    _ask(client, "alice")                 # another tenant: asks the LLM itself
    assert len(llm.requests) == 2
    _ask(client, "erin")                  # carol's tenant, another view: its own too
    assert len(llm.requests) == 3
