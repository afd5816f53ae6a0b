"""OpenAIProvider against fake chat-completions responses (OpenAI's and compatible servers')."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from llm_fakes import Script, timeout_with

from mindgraph.errors import ProviderError, TransientProviderError
from mindgraph.providers.llm import LLMProvider, OpenAIProvider

OLLAMA = "http://localhost:11434/v1"


def completion(text: str | None = "# Title\n\nA page.", finish: str = "stop",
               refusal: str | None = None) -> dict:
    """A chat.completion success body."""
    return {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "object": "chat.completion",
        "created": 1741569952, "model": "gpt-4.1-mini-2025-04-14",
        "choices": [{"index": 0, "logprobs": None, "finish_reason": finish,
                     "message": {"role": "assistant", "content": text, "refusal": refusal,
                                 "annotations": []}}],
        "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29},
        "service_tier": "default", "system_fingerprint": "fp_b376dfbbd5",
    }


def ok(**kwargs) -> httpx.Response:
    return httpx.Response(200, json=completion(**kwargs))


def error(status: int, text: str, kind: str = "invalid_request_error", code=None,
          headers=None) -> httpx.Response:
    """An OpenAI-style error response."""
    body = {"error": {"message": text, "type": kind, "param": None, "code": code}}
    return httpx.Response(status, json=body, headers=headers or {})


timeout = timeout_with(httpx)


def refused(request):
    raise httpx.ConnectError("[Errno 111] Connection refused", request=request)


def provider(handler, sleeps, max_retries=2, **kwargs) -> OpenAIProvider:
    kwargs.setdefault("model", "gpt-4.1-mini")
    kwargs.setdefault("api_key", "sk-test")
    client = httpx.Client(transport=httpx.MockTransport(handler))
    return OpenAIProvider(temperature=0.3, max_retries=max_retries, key_source="$OPENAI_API_KEY",
                          http_client=client, sleep=sleeps.append, **kwargs)


def test_success_sends_model_system_temperature_and_prompt(sleeps):
    script = Script(ok(text="# Rust\n\nA language."))
    answer = provider(script, sleeps).complete("You write wiki pages.", "raw note", max_tokens=900)
    assert answer == "# Rust\n\nA language."
    [request] = script.requests
    assert str(request.url) == "https://api.openai.com/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = json.loads(request.content)
    assert body["model"] == "gpt-4.1-mini"
    assert body["messages"] == [{"role": "system", "content": "You write wiki pages."},
                                {"role": "user", "content": "raw note"}]
    assert body["temperature"] == 0.3
    assert body["max_completion_tokens"] == 900 and "max_tokens" not in body


def test_local_server_gets_no_key_and_max_tokens(sleeps):
    script = Script(ok(text="local page"))
    p = provider(script, sleeps, model="llama3.1:8b", api_key="", base_url=OLLAMA + "/")
    assert p.complete("s", "p", max_tokens=500) == "local page"
    [request] = script.requests
    assert str(request.url) == "http://localhost:11434/v1/chat/completions"
    assert "authorization" not in request.headers
    body = json.loads(request.content)
    assert body["max_tokens"] == 500 and "max_completion_tokens" not in body
    assert body["model"] == "llama3.1:8b"


def test_rate_limit_is_retried_after_the_servers_wait(sleeps):
    script = Script(error(429, "Rate limit reached for gpt-4.1-mini on requests per min (RPM).",
                          kind="requests", code="rate_limit_exceeded",
                          headers={"retry-after": "2"}), ok(text="done"))
    assert provider(script, sleeps).complete("s", "p") == "done"
    assert len(script.requests) == 2
    assert sleeps == [2.0]


def test_server_errors_give_up_after_max_retries(sleeps):
    script = Script(error(500, "The server had an error while processing your request.",
                          kind="server_error"))
    with pytest.raises(ProviderError) as info:
        provider(script, sleeps, max_retries=2).complete("s", "p")
    assert not isinstance(info.value, TransientProviderError)
    assert "HTTP 500" in str(info.value) and "gave up after 3 attempts" in str(info.value)
    assert len(script.requests) == 3 and len(sleeps) == 2


def test_bad_key_fails_at_once_and_names_the_variable(sleeps):
    script = Script(error(401, "Incorrect API key provided: sk-test. You can find your API key "
                               "at https://platform.openai.com/account/api-keys.",
                          code="invalid_api_key"))
    with pytest.raises(ProviderError) as info:
        provider(script, sleeps).complete("s", "p")
    assert not isinstance(info.value, TransientProviderError)
    assert "$OPENAI_API_KEY" in str(info.value) and "Incorrect API key" in str(info.value)
    assert len(script.requests) == 1 and sleeps == []


def test_unknown_model_on_a_local_server_names_model_and_base_url(sleeps):
    script = Script(error(404, 'model "llama9" not found, try pulling it first',
                          kind="api_error"))
    p = provider(script, sleeps, model="llama9", api_key="", base_url=OLLAMA)
    with pytest.raises(ProviderError) as info:
        p.complete("s", "p")
    assert "compile.model" in str(info.value) and OLLAMA in str(info.value)
    assert len(script.requests) == 1


def test_timeout_is_transient(sleeps):
    script = Script(timeout, ok(text="after timeout"))
    assert provider(script, sleeps).complete("s", "p") == "after timeout"
    assert len(script.requests) == 2


def test_server_not_running_gives_up_with_a_hint(sleeps):
    p = provider(Script(refused), sleeps, max_retries=1, api_key="", base_url=OLLAMA)
    with pytest.raises(ProviderError, match="could not be reached") as info:
        p.complete("s", "p")
    assert "server at this address is running" in str(info.value)
    assert len(sleeps) == 1


def test_empty_answer_is_an_error_and_not_retried(sleeps):
    script = Script(ok(text=None))
    with pytest.raises(ProviderError, match="empty answer"):
        provider(script, sleeps).complete("s", "p")
    assert len(script.requests) == 1


def test_refusal_is_an_error(sleeps):
    with pytest.raises(ProviderError, match="refused"):
        provider(Script(ok(text=None, refusal="I can't help with that.")), sleeps).complete(
            "s", "p")


def test_answer_cut_at_max_tokens_is_an_error(sleeps):
    with pytest.raises(ProviderError, match="output token limit"):
        provider(Script(ok(text="# Half a pa", finish="length")), sleeps).complete("s", "p")


def test_a_non_api_answer_points_at_base_url(sleeps):
    html = httpx.Response(200, text="<html>Ollama is running</html>")
    p = provider(Script(html), sleeps, model="llama3.1:8b", api_key="",
                 base_url="http://localhost:11434")
    with pytest.raises(ProviderError, match="compile.base_url"):
        p.complete("s", "p")


def test_identity(sleeps):
    official = provider(Script(ok()), sleeps)
    assert official.identity == "openai:gpt-4.1-mini"
    assert isinstance(official, LLMProvider)
    local = provider(Script(ok()), sleeps, model="qwen2.5:7b", api_key="", base_url=OLLAMA)
    assert local.identity == "openai:qwen2.5:7b@localhost:11434"


def test_concurrent_calls_from_a_thread_pool(sleeps):
    def echo(request):
        prompt = json.loads(request.content)["messages"][1]["content"]
        return ok(text=f"page for {prompt}")

    p = provider(echo, sleeps)
    prompts = [f"note {i}" for i in range(24)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda q: p.complete("s", q), prompts))
    assert answers == [f"page for {q}" for q in prompts]
