"""Gemini embeddings (google-genai) against fake batchEmbedContents responses."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

from mindgraph.errors import ProviderError
from mindgraph.providers.embedding.gemini import GeminiEmbeddings

from embedding_fakes import Script, fake_vector, timeout


def texts_of(request: httpx.Request) -> list[str]:
    return [r["content"]["parts"][0]["text"] for r in json.loads(request.content)["requests"]]


def answer(request: httpx.Request, dim: int = 8) -> httpx.Response:
    """A real-shaped batchEmbedContents body."""
    return httpx.Response(200, json={"embeddings": [{"values": fake_vector(t, dim)}
                                                    for t in texts_of(request)]})


def error(code: int, status: str, message: str) -> httpx.Response:
    return httpx.Response(code, json={"error": {"code": code, "message": message,
                                                "status": status}})


def provider(script: Script, sleeps: list[float] | None = None, **kwargs) -> GeminiEmbeddings:
    kwargs.setdefault("dimension", 8)
    return GeminiEmbeddings(api_key=lambda: "g-test-key", max_retries=2,
                            http_client=httpx.Client(transport=httpx.MockTransport(script)),
                            sleep=(sleeps.append if sleeps is not None else lambda s: None),
                            **kwargs)


def test_documents_and_queries_use_their_task_types():
    script = Script(answer)
    p = provider(script, batch_size=2)
    docs = p.embed_documents(["alpha", "beta", "gamma"])
    query = p.embed_queries(["what is alpha?"])
    assert docs.shape == (3, 8) and query.shape == (1, 8)
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, rtol=1e-5)
    expected = np.asarray(fake_vector("beta", 8), dtype=np.float32)
    np.testing.assert_allclose(docs[1], expected / np.linalg.norm(expected), rtol=1e-5)
    assert len(script.requests) == 3                       # 2 + 1 documents, 1 query
    first = script.requests[0]
    assert str(first.url).endswith("/models/gemini-embedding-001:batchEmbedContents")
    assert first.headers["x-goog-api-key"] == "g-test-key"
    body = json.loads(first.content)["requests"]
    assert [r["taskType"] for r in body] == ["RETRIEVAL_DOCUMENT"] * 2
    assert {r["outputDimensionality"] for r in body} == {8}
    assert texts_of(first) == ["alpha", "beta"]
    assert json.loads(script.requests[2].content)["requests"][0]["taskType"] == \
        "RETRIEVAL_QUERY"
    assert p.model_version == "gemini:gemini-embedding-001:8"


def test_known_model_width_needs_no_call():
    p = GeminiEmbeddings(api_key=lambda: pytest.fail("no key should be read"))
    assert p.model_version == "gemini:gemini-embedding-001:3072"


def test_quota_and_server_errors_are_retried():
    sleeps: list[float] = []
    script = Script(error(429, "RESOURCE_EXHAUSTED", "Quota exceeded"),
                    error(503, "UNAVAILABLE", "The model is overloaded"), answer)
    assert provider(script, sleeps).embed_documents(["a"]).shape == (1, 8)
    assert len(script.requests) == 3 and len(sleeps) == 2


def test_timeouts_are_retried_then_given_up():
    script = Script(timeout)
    with pytest.raises(ProviderError, match="gave up after 3 attempts"):
        provider(script).embed_documents(["a"])
    assert len(script.requests) == 3


def test_invalid_key_fails_at_once_with_the_fix():
    script = Script(error(400, "INVALID_ARGUMENT",
                          "API key not valid. Please pass a valid API key."))
    with pytest.raises(ProviderError) as caught:
        provider(script).embed_documents(["a"])
    assert len(script.requests) == 1
    assert "API key not valid" in str(caught.value)
    assert "embedding.api_key_env" in str(caught.value)


def test_short_answer_is_a_provider_error():
    script = Script(httpx.Response(200, json={"embeddings": [{"values": [1.0] * 8}]}))
    with pytest.raises(ProviderError, match="got 1 vectors for 2 texts"):
        provider(script).embed_documents(["a", "b"])
