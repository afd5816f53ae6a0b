"""OpenAI / OpenAI-compatible embeddings against fake /v1/embeddings responses."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

from mindgraph.errors import ConfigError, ProviderError
from mindgraph.providers.embedding.openai import OpenAIEmbeddings

from embedding_fakes import Script, fake_vector, refused, timeout


def answer(request: httpx.Request, dim: int = 8, reverse: bool = True) -> httpx.Response:
    """A real-shaped success body; items listed in reverse to check ordering by index."""
    body = json.loads(request.content)
    data = [{"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
            for i, t in enumerate(body["input"])]
    if reverse:
        data.reverse()
    return httpx.Response(200, json={"object": "list", "data": data, "model": body["model"],
                                     "usage": {"prompt_tokens": 5, "total_tokens": 5}})


def error(status: int, message: str, headers=None) -> httpx.Response:
    return httpx.Response(status, headers=headers or {},
                          json={"error": {"message": message, "type": "x", "code": None}})


def provider(script: Script, sleeps: list[float] | None = None, **kwargs) -> OpenAIEmbeddings:
    kwargs.setdefault("model", "text-embedding-3-small")
    kwargs.setdefault("dimension", 8)
    return OpenAIEmbeddings(api_key=lambda: "sk-test", max_retries=3,
                            client=httpx.Client(transport=httpx.MockTransport(script)),
                            sleep=(sleeps.append if sleeps is not None else lambda s: None),
                            **kwargs)


def test_request_shape_order_normalisation_and_batching():
    script = Script(answer)
    p = provider(script, batch_size=2)
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    vectors = p.embed_documents(texts)
    assert len(script.requests) == 3
    first = script.requests[0]
    assert str(first.url) == "https://api.openai.com/v1/embeddings"
    assert first.headers["authorization"] == "Bearer sk-test"
    assert json.loads(first.content) == {"model": "text-embedding-3-small",
                                         "input": ["alpha", "beta"], "dimensions": 8,
                                         "encoding_format": "float"}
    expected = np.array([fake_vector(t, 8) for t in texts], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, rtol=1e-5, atol=1e-6)
    assert p.model_version == "openai:text-embedding-3-small:8"
    assert p.embed_queries([]).shape == (0, 8)


def test_compatible_server_without_key_and_unknown_width_is_probed():
    script = Script(lambda r: answer(r, dim=5))
    p = OpenAIEmbeddings(model="my-local-model", base_url="http://localhost:11434/v1/",
                         client=httpx.Client(transport=httpx.MockTransport(script)))
    assert p.model_version == "openai:my-local-model:5"      # one probe request
    assert len(script.requests) == 1
    request = script.requests[0]
    assert str(request.url) == "http://localhost:11434/v1/embeddings"
    assert "authorization" not in request.headers
    assert "dimensions" not in json.loads(request.content)
    assert p.embed_documents(["x"]).shape == (1, 5)


def test_rate_limit_and_server_errors_are_retried_with_retry_after():
    sleeps: list[float] = []
    script = Script(error(429, "Rate limit reached", {"retry-after": "7"}),
                    error(503, "overloaded"), timeout, answer)
    vectors = provider(script, sleeps).embed_documents(["a", "b"])
    assert vectors.shape == (2, 8) and len(script.requests) == 4
    assert len(sleeps) == 3 and sleeps[0] >= 7


def test_persistent_outage_gives_up_naming_the_server():
    script = Script(refused)
    with pytest.raises(ProviderError) as caught:
        provider(script, base_url="http://gpu-box:8000/v1").embed_documents(["a"])
    assert len(script.requests) == 4
    message = str(caught.value)
    assert "http://gpu-box:8000/v1" in message and "connection failed" in message
    assert "gave up after 4 attempts" in message


def test_bad_key_fails_at_once_with_the_fix():
    script = Script(error(401, "Incorrect API key provided: sk-test."))
    with pytest.raises(ProviderError) as caught:
        provider(script).embed_documents(["a"])
    assert len(script.requests) == 1
    assert "Incorrect API key" in str(caught.value)
    assert "embedding.api_key_env" in str(caught.value)


def test_unknown_model_names_the_settings_to_check():
    with pytest.raises(ProviderError, match="embedding.model"):
        provider(Script(error(404, "model not found"))).embed_documents(["a"])


@pytest.mark.parametrize("body", [
    {"data": [{"index": 0, "embedding": [1.0, 2.0]}]},            # one vector for two texts
    {"unexpected": True},
    {"data": [{"index": 0, "embedding": [1.0]}, {"index": 1, "embedding": [1.0, 2.0]}]},
])
def test_malformed_answers_are_provider_errors(body):
    script = Script(httpx.Response(200, json=body))
    with pytest.raises(ProviderError):
        provider(script, dimension=2).embed_documents(["a", "b"])


def test_width_other_than_configured_is_a_config_error():
    script = Script(lambda r: answer(r, dim=6))
    with pytest.raises(ConfigError, match="embedding.dimension to 6"):
        provider(script, model="nomic-embed-text", dimension=8).embed_documents(["a"])
