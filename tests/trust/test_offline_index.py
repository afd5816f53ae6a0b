"""The indexed offline validator gives check_claim's verdicts and quotes, claim for claim, and
stops at its deadline; POST /validate and the validate tool refuse more claims or evidence
sentences than their settings allow (413, naming the setting)."""

from __future__ import annotations

import json
import random
import time

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from mindgraph.config import settings_from_dict
from mindgraph.core import Mindgraph
from mindgraph.errors import OverBudget
from mindgraph.serve.mcp import create_mcp_server
from mindgraph.serve.rest import create_app
from mindgraph.trust.claims import evidence_sentences, page_claims
from mindgraph.trust.offline import analyse, check_claim
from mindgraph.trust.offline_index import EvidenceIndex, judge_claims
from mindgraph.trust.validate import validate_text
from trust_support import LOCAL

EVIDENCE = """Sync keeps 12 months of version history. Each vault holds up to 10 GB.
Sync doesn't encrypt attachments: it never uploads them. Plans cost 4 or 8 dollars.

- Released on 2024-05-01.
- 同期は暗号化されます。

The history is not kept on the free plan. Vaults hold notes; notes hold text."""

CLAIMS = ["Sync keeps 12 months of version history.", "Sync keeps 24 months of history.",
          "Each vault holds up to 10 GB.", "Sync does not encrypt attachments.",
          "Sync encrypts attachments.", "Released on 2024-05-01.",
          "Released on 2024-05-02.",
          "同期は暗号化されます。", "The history is kept on the free plan.", "Plans cost 8.",
          "Toasters run Sync.", "Vaults hold notes.", "It is what it is."]


def _reference(claims, sentences):
    analysed = [analyse(s) for s in sentences]
    return [check_claim(c, analysed) for c in claims]


def test_the_index_gives_check_claims_verdicts_and_quotes():
    sentences = evidence_sentences(EVIDENCE)
    assert judge_claims(CLAIMS, sentences) == _reference(CLAIMS, sentences)
    assert {c.verdict for c in judge_claims(CLAIMS, sentences)} == {
        "supported", "contradicted", "unsupported"}


def test_the_index_agrees_with_check_claim_on_random_texts():
    """Small vocabularies, so that words, numbers and negations collide in every way, and
    long lists, so that the intersections past the in-order scan are taken too."""
    rng = random.Random(20261206)
    words = ["alpha", "beta", "gamma", "delta", "vault", "sync", "history", "plan"]

    def sentence():
        parts = rng.sample(words, rng.randint(1, 4))
        if rng.random() < 0.4:
            parts.append(str(rng.randint(1, 6)))
        if rng.random() < 0.3:
            parts.insert(1, "not")
        return " ".join(parts).capitalize() + "."

    for _ in range(5):
        sentences = [sentence() for _ in range(rng.choice([10, 300]))]
        claims = [sentence() for _ in range(200)]
        assert judge_claims(claims, sentences) == _reference(claims, sentences)


def test_an_index_stops_at_its_deadline():
    with pytest.raises(OverBudget, match="time budget"):
        EvidenceIndex(["Alpha beta."] * 2000, deadline=time.monotonic() - 1)
    with pytest.raises(OverBudget):
        judge_claims(["Alpha."], ["Alpha beta."], deadline=time.monotonic() - 1)


def test_the_attack_shape_is_quick_now_and_keeps_its_verdicts():
    """The tester's shape, smaller: list items as claims against sentences carrying all their
    words but not their numbers (every one a contradiction to scan past). check_claim reads
    every sentence for every claim; the index answers each from its lists."""
    text = "\n".join(f"- Alpha beta runs {i}." for i in range(2000))
    evidence = " ".join(f"Alpha beta runs {100000 + i}." for i in range(20000))
    started = time.perf_counter()
    answer = validate_text(text, [evidence])
    took = time.perf_counter() - started
    assert answer["claims"] == 2000 and answer["verdict"] == "fail"
    assert {c["verdict"] for c in answer["checks"]} == {"contradicted"}
    assert answer["checks"][5]["quote"] == "Alpha beta runs 100000."
    assert took < 5, took       # 0.46 s here; check_claim took 10.5 s for this


def _app(workspace, **serve):
    (workspace / "wiki").mkdir(exist_ok=True)
    mg = Mindgraph(settings_from_dict({"serve": serve}, base_dir=workspace))
    return TestClient(create_app(mg), base_url=LOCAL)


def test_post_validate_refuses_more_claims_or_sentences_than_allowed(tmp_path):
    client = _app(tmp_path, validate_max_claims=3, validate_max_evidence_sentences=4)
    many = client.post("/validate", json={"text": "\n".join(f"- Claim {i} here."
                                                            for i in range(4)),
                                          "evidence": ["Claim here."]})
    assert many.status_code == 413, many.text
    assert many.json()["error"] == "TooLarge"
    assert "4 claims" in many.json()["detail"]
    assert "serve.validate_max_claims" in many.json()["detail"]
    long = client.post("/validate", json={"text": "Claim here.",
                                          "evidence": ["One. Two. Three.", "Four. Five."]})
    assert long.status_code == 413
    assert "5 sentences" in long.json()["detail"]
    assert "serve.validate_max_evidence_sentences" in long.json()["detail"]
    fits = client.post("/validate", json={"text": "- Claim 1 here.\n- Claim 2 here.",
                                          "evidence": ["Claim 1 here. Claim 3 here."]})
    assert fits.status_code == 200
    assert [c["verdict"] for c in fits.json()["checks"]] == ["supported", "contradicted"]


def test_the_validate_tool_refuses_them_too(tmp_path):
    (tmp_path / "wiki").mkdir()
    mg = Mindgraph(settings_from_dict({"serve": {"validate_max_claims": 1}},
                                      base_dir=tmp_path))

    async def main():
        async with Client(create_mcp_server(mg)) as client:
            return await client.call_tool("validate", {"text": "One claim. Two claims.",
                                                       "evidence": ["One claim."]})

    result = anyio.run(main)
    assert result.is_error
    assert "serve.validate_max_claims" in result.content[0].text


def test_a_legitimate_validation_is_unchanged_by_the_limits(tmp_path):
    client = _app(tmp_path)
    text = "\n".join(f"- {c}" for c in CLAIMS)
    answer = client.post("/validate", json={"text": text, "evidence": [EVIDENCE]}).json()
    expected = _reference([c.text for c in page_claims(text)], evidence_sentences(EVIDENCE))
    assert [(c["claim"], c["verdict"], c["quote"]) for c in answer["checks"]] == [
        (c.claim, c.verdict, c.quote) for c in expected]
    assert answer == json.loads(json.dumps(validate_text(text, [EVIDENCE])))
