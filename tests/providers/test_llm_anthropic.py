"""AnthropicProvider against fake Messages API responses (shapes as the real API sends them)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import anthropic._base_client
import pytest

from llm_fakes import Script, timeout_with

from mindgraph.errors import ProviderError, TransientProviderError
from mindgraph.providers.llm import AnthropicProvider, LLMProvider

# The SDK only accepts its own client type: httpx2.Client from anthropic 2.0 on, httpx before.
HTTP = getattr(anthropic._base_client, "httpx2", None) or anthropic._base_client.httpx
MODEL = "claude-sonnet-5-5"


def message(text: str = "# Title\n\nA page.", stop: str = "end_turn", content=None) -> dict:
    """A Messages API success body."""
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
        "model": MODEL, "stop_reason": stop, "stop_sequence": None,
        "content": [{"type": "text", "text": text}] if content is None else content,
        "usage": {"input_tokens": 25, "output_tokens": 12},
    }


def error(status: int, kind: str, text: str, headers: dict | None = None):
    """A Messages API error response."""
    body = {"type": "error", "error": {"type": kind, "message": text},
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}
    return HTTP.Response(status, json=body, headers=headers or {})


def ok(**kwargs):
    return HTTP.Response(200, json=message(**kwargs))


timeout = timeout_with(HTTP)


def provider(handler, sleeps, max_retries=2) -> AnthropicProvider:
    client = HTTP.Client(transport=HTTP.MockTransport(handler))
    return AnthropicProvider("sk-ant-test", model=MODEL, max_retries=max_retries,
                             key_source="$ANTHROPIC_API_KEY", http_client=client,
                             sleep=sleeps.append)


def test_success_sends_model_system_and_prompt(sleeps):
    script = Script(ok(text="# Rust\n\nA language."))
    answer = provider(script, sleeps).complete("You write wiki pages.", "raw note", max_tokens=900)
    assert answer == "# Rust\n\nA language."
    [request] = script.requests
    assert request.url.path == "/v1/messages"
    assert "sk-ant-test" in request.headers.get("authorization", "") + request.headers.get(
        "x-api-key", "")
    body = json.loads(request.content)
    assert body["model"] == MODEL
    assert body["system"] == "You write wiki pages."
    assert body["messages"] == [{"role": "user", "content": "raw note"}]
    assert body["max_tokens"] == 900
    # API version 2026-10-21 rejects sampling parameters with HTTP 400.
    assert "temperature" not in body
    assert sleeps == []


def test_rate_limit_is_retried_after_the_servers_wait(sleeps):
    script = Script(error(429, "rate_limit_error", "Number of requests has exceeded your rate "
                          "limit.", {"retry-after": "7"}), ok(text="done"))
    assert provider(script, sleeps).complete("s", "p") == "done"
    assert len(script.requests) == 2
    assert sleeps == [7.0]


def test_overloaded_529_is_retried(sleeps):
    script = Script(error(529, "overloaded_error", "Overloaded"), ok(text="done"))
    assert provider(script, sleeps).complete("s", "p") == "done"
    assert len(script.requests) == 2 and len(sleeps) == 1


def test_server_errors_give_up_after_max_retries(sleeps):
    script = Script(error(500, "api_error", "Internal server error"))
    with pytest.raises(ProviderError) as info:
        provider(script, sleeps, max_retries=2).complete("s", "p")
    assert not isinstance(info.value, TransientProviderError)
    assert "HTTP 500" in str(info.value) and "gave up after 3 attempts" in str(info.value)
    assert len(script.requests) == 3 and len(sleeps) == 2


def test_bad_key_fails_at_once_and_names_the_variable(sleeps):
    script = Script(error(401, "authentication_error", "invalid x-api-key"), ok())
    with pytest.raises(ProviderError) as info:
        provider(script, sleeps).complete("s", "p")
    assert not isinstance(info.value, TransientProviderError)
    assert "$ANTHROPIC_API_KEY" in str(info.value) and "HTTP 401" in str(info.value)
    assert len(script.requests) == 1 and sleeps == []


def test_bad_request_fails_at_once_with_the_api_message(sleeps):
    script = Script(error(400, "invalid_request_error", "prompt is too long: 250000 tokens"))
    with pytest.raises(ProviderError, match="prompt is too long") as info:
        provider(script, sleeps).complete("s", "p")
    assert "compile.model" in str(info.value)
    assert len(script.requests) == 1


def test_timeout_is_transient(sleeps):
    script = Script(timeout, ok(text="after timeout"))
    assert provider(script, sleeps).complete("s", "p") == "after timeout"
    assert len(script.requests) == 2


def test_timeout_without_retries_left_is_an_error(sleeps):
    with pytest.raises(ProviderError, match="timed out"):
        provider(Script(timeout), sleeps, max_retries=0).complete("s", "p")


def test_empty_answer_is_an_error_and_not_retried(sleeps):
    script = Script(ok(content=[]))
    with pytest.raises(ProviderError, match="empty answer"):
        provider(script, sleeps).complete("s", "p")
    assert len(script.requests) == 1


def test_answer_cut_at_max_tokens_is_an_error(sleeps):
    with pytest.raises(ProviderError, match="output token limit"):
        provider(Script(ok(text="# Half a pa", stop="max_tokens")), sleeps).complete("s", "p")


def test_refusal_is_an_error(sleeps):
    with pytest.raises(ProviderError, match="refused"):
        provider(Script(ok(content=[], stop="refusal")), sleeps).complete("s", "p")


def test_identity_and_protocol(sleeps):
    p = provider(Script(ok()), sleeps)
    assert p.identity == "anthropic:claude-sonnet-5-5"
    assert isinstance(p, LLMProvider)


def test_concurrent_calls_from_a_thread_pool(sleeps):
    def echo(request):
        prompt = json.loads(request.content)["messages"][0]["content"]
        return ok(text=f"page for {prompt}")

    p = provider(echo, sleeps)
    prompts = [f"note {i}" for i in range(24)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda q: p.complete("s", q), prompts))
    assert answers == [f"page for {q}" for q in prompts]
