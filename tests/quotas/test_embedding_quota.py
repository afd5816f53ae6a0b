"""Query embeddings a cloud embedding provider makes for a server's caller count against
``limits.embedding_calls_per_hour`` — apart from ``limits.llm_calls_per_hour``: they cost
the operator too (and its provider's rate limit), a hundredth of an LLM call or less, and an
agent's plain searches should not use up the calls its expansions and compiles need.

Before, they were not counted at all: any token could make the server ask the operator's
embedding API without end. A local server speaking OpenAI's embeddings API counts the
requests it gets; REST and MCP over HTTP. A cached query costs none; the owner is never
limited; the workspace's own embedding of its pages is not charged to anyone.
"""

import sys
from pathlib import Path

from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "serve"))
sys.path.insert(0, str(Path(__file__).parents[1] / "scopes"))
sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval"))
from fake_openai import FakeOpenAI  # noqa: E402
from scopes_support import TOKENS, config_text  # noqa: E402
from test_mcp_documents import call_over_http  # noqa: E402
from test_quotas_served import QUESTIONS, _bearer, _rest, workspace  # noqa: E402,F401

from mindgraph.core import Mindgraph  # noqa: E402
from mindgraph.serve.mcp import create_http_app, create_mcp_server  # noqa: E402


def _configure(root: Path, api: FakeOpenAI, limits: str) -> None:
    (root / "mindgraph.yml").write_text(
        config_text().replace("embedding:\n  provider: hashing\n  dimension: 64\n",
                              f"embedding:\n  provider: openai\n  model: fake-embedder\n"
                              f"  dimension: 64\n  base_url: {api.base_url}\n"
                              f"  max_retries: 0\n")
        + f"limits:\n{limits}")


def _asked(api: FakeOpenAI) -> list[str]:
    """The questions the embeddings API was asked to embed, in order (not the pages, not
    the server's warm-up)."""
    return [e["body"]["input"][0] for e in api.embeddings if e["body"]["input"][0] in QUESTIONS]


def _search(client, who: str, question: str):
    return client.get("/smart_search", params={"q": question}, headers=_bearer(who))


def test_rest_query_embeddings_stop_at_their_own_hourly_quota(workspace):
    with FakeOpenAI(lambda prompt: "unused") as api:
        _configure(workspace, api, "  embedding_calls_per_hour: 2\n  llm_calls_per_hour: 1\n")
        core = Mindgraph.open(workspace)
        core.embed()                        # the owner's: the pages, never charged
        core.close()
        assert len(api.embeddings) >= 1 and _asked(api) == []
        core, client = _rest(workspace)
        with client:
            answered = [_search(client, "carol", q) for q in QUESTIONS[:2]]
            assert _asked(api) == QUESTIONS[:2]
            refused = _search(client, "carol", QUESTIONS[2])
            assert _asked(api) == QUESTIONS[:2]             # the provider was not asked
            cached = _search(client, "carol", QUESTIONS[0])  # in the query cache: free
            erin = _search(client, "erin", QUESTIONS[2])     # her own quota
            owner = [_search(client, "owner", q) for q in QUESTIONS]
        core.close()
    for answer in answered + [cached, erin] + owner:
        assert answer.status_code == 200, answer.text
    assert all("vector" in a.json()["results"][0]["retrievers"] for a in answered)
    assert refused.status_code == 429, refused.text
    body = refused.json()
    assert body["error"] == "QuotaExceeded"
    assert body["setting"] == "limits.embedding_calls_per_hour"
    assert "carol" in body["detail"] and "2 embedding calls per hour" in body["detail"]
    assert 1 <= int(refused.headers["Retry-After"]) <= 3600
    assert len(api.requests) == 0       # and no LLM call counted or made
    # carol's two (her repeat was cached), erin's one, the owner's four (each view caches
    # its own queries: retrieval/vector.py)
    assert _asked(api) == QUESTIONS[:3] + QUESTIONS


def test_mcp_query_embeddings_past_the_quota_are_a_tool_error(workspace):
    with FakeOpenAI(lambda prompt: "unused") as api:
        _configure(workspace, api, "  embedding_calls_per_hour: 1\n")
        core = Mindgraph.open(workspace)
        core.embed()
        app = create_http_app(create_mcp_server(core), scopes=core.scopes)
        with TestClient(app, base_url="http://127.0.0.1:8766") as client:
            first = call_over_http(client, TOKENS["carol"], "search_documents",
                                   {"query": QUESTIONS[0]})
            second = call_over_http(client, TOKENS["carol"], "search_documents",
                                    {"query": QUESTIONS[1]})
        core.close()
    assert not first.get("isError"), first
    assert second["isError"] is True
    assert "limits.embedding_calls_per_hour" in second["content"][0]["text"]
    assert _asked(api) == QUESTIONS[:1]
