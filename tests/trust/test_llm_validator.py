"""The LLM validator against fake chat-completions HTTP responses: verdicts validated at the
boundary (a quote not in the evidence supports nothing), and provider faults (429, 502,
timeouts, garbage JSON) stop only the affected page, with the reason, writing nothing."""

from __future__ import annotations

import json

import httpx

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


def test_verify_validator_llm_needs_a_configured_provider(compiled, mg):
    result = mg(compiled, "verify", "--validator", "llm")
    assert result.exit_code == 2 and "--validator llm needs an LLM" in result.output
    assert plan_of(mg, compiled, "--validator", "offline")["targets"] == 3
