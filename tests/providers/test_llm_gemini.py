"""GeminiProvider against fake generateContent responses (shapes as the real API sends them)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from llm_fakes import Script, timeout_with

from mindgraph.errors import ProviderError, TransientProviderError
from mindgraph.providers.llm import GeminiProvider, LLMProvider

MODEL = "gemini-3.8-flash"


def candidate(text: str | None = "# Title\n\nA page.", finish: str = "STOP") -> dict:
    """A generateContent success body with one candidate."""
    content = {"role": "model", "parts": [{"text": text}] if text is not None else []}
    return {
        "candidates": [{"content": content, "finishReason": finish, "index": 0}],
        "usageMetadata": {"promptTokenCount": 31, "candidatesTokenCount": 9,
                          "totalTokenCount": 40},
        "modelVersion": MODEL, "responseId": "mOdqaJ6fN4qD1dkP2Y6n0QM",
    }


def ok(**kwargs) -> httpx.Response:
    return httpx.Response(200, json=candidate(**kwargs))


def error(code: int, status: str, text: str, details=None, headers=None) -> httpx.Response:
    """A Google API error response."""
    body = {"error": {"code": code, "message": text, "status": status}}
    if details:
        body["error"]["details"] = details
    return httpx.Response(code, json=body, headers=headers or {})


timeout = timeout_with(httpx)


def provider(handler, sleeps, max_retries=2) -> GeminiProvider:
    client = httpx.Client(transport=httpx.MockTransport(handler))
    return GeminiProvider("AIza-test", model=MODEL, temperature=0.3, max_retries=max_retries,
                          key_source="$GEMINI_API_KEY", http_client=client, sleep=sleeps.append)


def test_success_sends_model_system_temperature_and_prompt(sleeps):
    script = Script(ok(text="# Rust\n\nA language."))
    answer = provider(script, sleeps).complete("You write wiki pages.", "raw note", max_tokens=900)
    assert answer == "# Rust\n\nA language."
    [request] = script.requests
    assert request.url.path.endswith(f"/models/{MODEL}:generateContent")
    assert request.headers["x-goog-api-key"] == "AIza-test"
    body = json.loads(request.content)
    assert body["contents"] == [{"role": "user", "parts": [{"text": "raw note"}]}]
    assert body["systemInstruction"]["parts"] == [{"text": "You write wiki pages."}]
    assert body["generationConfig"] == {"temperature": 0.3, "maxOutputTokens": 900}


def test_rate_limit_waits_for_the_retry_info_delay(sleeps):
    retry_info = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}]
    script = Script(error(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.",
                          retry_info), ok(text="done"))
    assert provider(script, sleeps).complete("s", "p") == "done"
    assert len(script.requests) == 2
    assert sleeps == [17.0]


def test_server_errors_give_up_after_max_retries(sleeps):
    script = Script(error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."))
    with pytest.raises(ProviderError) as info:
        provider(script, sleeps, max_retries=2).complete("s", "p")
    assert not isinstance(info.value, TransientProviderError)
    assert "overloaded" in str(info.value) and "gave up after 3 attempts" in str(info.value)
    assert len(script.requests) == 3 and len(sleeps) == 2


def test_500_then_success(sleeps):
    script = Script(error(500, "INTERNAL", "An internal error has occurred."), ok(text="done"))
    assert provider(script, sleeps).complete("s", "p") == "done"
    assert len(script.requests) == 2


def test_invalid_key_fails_at_once_and_names_the_variable(sleeps):
    # Gemini reports a bad key as 400 INVALID_ARGUMENT with reason API_KEY_INVALID.
    info_detail = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "API_KEY_INVALID", "domain": "googleapis.com",
                    "metadata": {"service": "generativelanguage.googleapis.com"}}]
    script = Script(error(400, "INVALID_ARGUMENT",
                          "API key not valid. Please pass a valid API key.", info_detail))
    with pytest.raises(ProviderError) as info:
        provider(script, sleeps).complete("s", "p")
    assert not isinstance(info.value, TransientProviderError)
    assert "$GEMINI_API_KEY" in str(info.value)
    assert len(script.requests) == 1 and sleeps == []


def test_unauthenticated_401_fails_at_once(sleeps):
    script = Script(error(401, "UNAUTHENTICATED", "Request had invalid authentication."))
    with pytest.raises(ProviderError, match=r"\$GEMINI_API_KEY"):
        provider(script, sleeps).complete("s", "p")
    assert len(script.requests) == 1


def test_unknown_model_fails_at_once(sleeps):
    script = Script(error(404, "NOT_FOUND", f"models/{MODEL} is not found for API version v1"))
    with pytest.raises(ProviderError, match="compile.model"):
        provider(script, sleeps).complete("s", "p")
    assert len(script.requests) == 1


def test_timeout_is_transient(sleeps):
    script = Script(timeout, ok(text="after timeout"))
    assert provider(script, sleeps).complete("s", "p") == "after timeout"
    assert len(script.requests) == 2


def test_timeout_without_retries_left_is_an_error(sleeps):
    with pytest.raises(ProviderError, match="timed out"):
        provider(Script(timeout), sleeps, max_retries=0).complete("s", "p")


def test_empty_answer_is_an_error_and_not_retried(sleeps):
    script = Script(ok(text=None))
    with pytest.raises(ProviderError, match="empty answer"):
        provider(script, sleeps).complete("s", "p")
    assert len(script.requests) == 1


def test_blocked_prompt_is_an_error(sleeps):
    body = {"promptFeedback": {"blockReason": "SAFETY"},
            "usageMetadata": {"promptTokenCount": 8, "totalTokenCount": 8}}
    with pytest.raises(ProviderError, match="blocked the prompt \\(SAFETY\\)"):
        provider(Script(httpx.Response(200, json=body)), sleeps).complete("s", "p")


def test_answer_cut_at_max_tokens_is_an_error(sleeps):
    with pytest.raises(ProviderError, match="output token limit"):
        provider(Script(ok(text="# Half a pa", finish="MAX_TOKENS")), sleeps).complete("s", "p")


def test_identity_and_protocol(sleeps):
    p = provider(Script(ok()), sleeps)
    assert p.identity == "gemini:gemini-3.8-flash"
    assert isinstance(p, LLMProvider)


def test_concurrent_calls_from_a_thread_pool(sleeps):
    def echo(request):
        prompt = json.loads(request.content)["contents"][0]["parts"][0]["text"]
        return ok(text=f"page for {prompt}")

    p = provider(echo, sleeps)
    prompts = [f"note {i}" for i in range(24)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda q: p.complete("s", q), prompts))
    assert answers == [f"page for {q}" for q in prompts]
