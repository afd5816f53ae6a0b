"""The LLM validator against fake chat-completions HTTP responses: verdicts validated at the
boundary (a quote not in the evidence supports nothing), and provider faults (429, 502,
timeouts, garbage JSON) stop only the affected page, with the reason, writing nothing."""

from __future__ import annotations

import json

import httpx
import pytest

from trust_support import plan_of

from mindgraph.config import load_settings
from mindgraph.providers.llm import OpenAIProvider
from mindgraph.trust.service import TrustService


def _answer(content: str) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1741569952,
        "model": "gpt-4.1-mini", "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant",
                                                          "content": content}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})


def _provider(handler) -> OpenAIProvider:
    client = httpx.Client(transport=httpx.MockTransport(handler))
    return OpenAIProvider(api_key="sk-test", model="gpt-4.1-mini", max_retries=0,
                          key_source="$OPENAI_API_KEY", http_client=client,
                          sleep=lambda s: None)


def _verdicts(*items) -> str:
    return json.dumps({"claims": [dict(zip(("n", "verdict", "quote"), i)) for i in items]})


def _tree(base):
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in sorted(base.rglob("*"))
            if p.is_file() and ".mindgraph" not in p.parts}


def test_llm_verdicts_with_real_quotes_verify_and_name_the_validator(compiled):
    prompts = []

    def handler(request):
        prompts.append(json.loads(request.content)["messages"][-1]["content"])
        return _answer("```json\n" + _verdicts(
            (1, "supported", "Sync keeps 12 months of version history."),
            (2, "supported", "Each vault holds up to 10 GB.")) + "\n```")

    service = TrustService(load_settings(compiled))
    planned = service.plan(["Sync.md"], llm=_provider(handler))
    (verdict,) = planned.verdicts
    assert verdict.verdict == "pass" and verdict.verification.level == 2
    assert verdict.verification.validator == "llm:openai:gpt-4.1-mini:v1"
    assert "1. Sync keeps 12 months of version history." in prompts[0]
    assert "Evidence 1:\n# Sync" in prompts[0]


def test_a_quote_the_evidence_does_not_hold_supports_nothing(compiled):
    answer = _verdicts((1, "supported", "Sync keeps 12 months of version history."),
                       (2, "supported", "Each vault holds unlimited data, trust me."))
    planned = TrustService(load_settings(compiled)).plan(
        ["Sync.md"], llm=_provider(lambda r: _answer(answer)))
    (verdict,) = planned.verdicts
    assert verdict.verdict == "warn" and verdict.verification.status == "reviewed"
    claims = verdict.evidence.sources[0].claims
    assert [(c.verdict, c.quote) for c in claims] == [
        ("supported", "Sync keeps 12 months of version history."), ("unsupported", "")]


def test_provider_faults_skip_only_the_affected_page_and_write_nothing(compiled):
    faults = {
        "429": lambda r: httpx.Response(429, json={"error": {"message": "slow down",
                                                             "type": "rate_limit"}}),
        "502": lambda r: httpx.Response(502, text="bad gateway"),
        "timeout": lambda r: (_ for _ in ()).throw(httpx.ReadTimeout("timed out", request=r)),
        "garbage": lambda r: _answer("I think it is mostly fine!"),
    }
    before = _tree(compiled)
    for name, handler in faults.items():
        planned = TrustService(load_settings(compiled)).plan(["Sync.md"],
                                                            llm=_provider(handler))
        assert planned.verdicts == () and planned.path is None, name
        (skipped,) = planned.skipped
        assert skipped[0] == "Sync.md" and skipped[1], name
    assert "no verdict JSON" in skipped[1]
    assert _tree(compiled) == before
    # each faulty run is on record: FAILED, nothing planned, the page and the fault named
    runs = TrustService(load_settings(compiled)).runs()
    assert [(r["process_status"], r["result_status"]) for r in runs] == \
        [("FAILED", "DISCARDED")] * 4
    assert runs[0]["skipped"][0].startswith("Sync.md: ") and "429" in runs[0]["skipped"][0]
    assert runs[-1]["skipped"] == [f"Sync.md: {skipped[1]}"]


def test_verify_validator_llm_needs_a_configured_provider(compiled, mg):
    result = mg(compiled, "verify", "--validator", "llm")
    assert result.exit_code == 2 and "--validator llm needs an LLM" in result.output
    assert plan_of(mg, compiled, "--validator", "offline")["targets"] == 3


def _anthropic(text: str | None, status: int = 200):
    import anthropic._base_client

    from mindgraph.providers.llm import AnthropicProvider

    http = getattr(anthropic._base_client, "httpx2", None) or anthropic._base_client.httpx
    body = ({"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-x",
             "stop_reason": "end_turn", "stop_sequence": None,
             "content": [{"type": "text", "text": text}],
             "usage": {"input_tokens": 1, "output_tokens": 1}} if status == 200 else
            {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
    client = http.Client(transport=http.MockTransport(lambda r: http.Response(status,
                                                                              json=body)))
    return AnthropicProvider("sk-ant-test", model="claude-x", max_retries=0,
                             key_source="$ANTHROPIC_API_KEY", http_client=client,
                             sleep=lambda s: None)


def _gemini(text: str | None, status: int = 200):
    from mindgraph.providers.llm import GeminiProvider

    body = ({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                               "totalTokenCount": 2}, "modelVersion": "gemini-x"}
            if status == 200 else
            {"error": {"code": status, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}})
    client = httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(status,
                                                                                 json=body)))
    return GeminiProvider("AIza-test", model="gemini-x", max_retries=0,
                          key_source="$GEMINI_API_KEY", http_client=client,
                          sleep=lambda s: None)


def _openai(text: str | None, status: int = 200):
    return _provider(lambda r: _answer(text) if status == 200 else httpx.Response(
        status, json={"error": {"message": "slow down", "type": "rate_limit"}}))


@pytest.mark.parametrize("make, identity", [
    (_anthropic, "llm:anthropic:claude-x:v1"), (_gemini, "llm:gemini:gemini-x:v1"),
    (_openai, "llm:openai:gpt-4.1-mini:v1")])
def test_every_provider_judges_and_a_confidence_it_adds_is_never_read(compiled, make,
                                                                      identity):
    # the model is "sure" of the unsupported claim and unsure of the quoted one: neither
    # number is read; only the quote in the evidence makes a claim supported
    answer = json.dumps({"claims": [
        {"n": 1, "verdict": "supported", "quote": "Sync keeps 12 months of version history.",
         "confidence": 0.01},
        {"n": 2, "verdict": "unsupported", "quote": "", "confidence": 1.0}]})
    planned = TrustService(load_settings(compiled)).plan(["Sync.md"], llm=make(answer))
    (verdict,) = planned.verdicts
    assert verdict.verification.validator == identity
    assert (verdict.verdict, verdict.verification.status, verdict.verification.level) == \
        ("warn", "reviewed", 2)
    assert [c.verdict for c in verdict.evidence.sources[0].claims] == \
        ["supported", "unsupported"]
    assert "confidence" not in json.dumps(verdict.to_dict())
    limited = TrustService(load_settings(compiled)).plan(["Sync.md"], llm=make(None, 429))
    assert limited.verdicts == () and limited.skipped[0][0] == "Sync.md"
