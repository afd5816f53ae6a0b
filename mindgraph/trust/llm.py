"""The LLM validator: the configured provider judges each claim against the evidence.

The model answers JSON, checked at the boundary: one verdict per claim number (supported |
unsupported | contradicted) and, for supported or contradicted, a quote copied from the
evidence. A quote that is not in the evidence (whitespace aside) turns the verdict into
*unsupported*: a model cannot support what it cannot quote, and its confidence is never read.
An answer that is not such JSON raises ProviderError, which stops that page only.
"""

from __future__ import annotations

from typing import Any

from ..errors import ProviderError
from ..providers.llm.answers import json_list
from .evidence import EvidenceText
from .record import CLAIM_VERDICTS, ClaimCheck

PROMPT_VERSION = "v1"
SYSTEM = (
    "You check claims against evidence. For every numbered claim decide: supported (the "
    "evidence states it), contradicted (the evidence states otherwise) or unsupported (the "
    "evidence does not say). Answer with JSON only, no prose: "
    '{"claims": [{"n": 1, "verdict": "supported", "quote": "<a sentence copied exactly from '
    'the evidence; empty when unsupported>"}]}')


class LLMValidator:
    """Judges claims with an LLMProvider (anything with ``identity`` and ``complete``)."""

    def __init__(self, provider: Any):
        self.provider = provider

    @property
    def identity(self) -> str:
        """llm:<provider identity>:<prompt version>, written to verification.validator."""
        return f"llm:{self.provider.identity}:{PROMPT_VERSION}"

    def __call__(self, claims: list[str], evidence: list[EvidenceText]) -> list[ClaimCheck]:
        """One check per claim, in order."""
        texts = [e.text for e in evidence if e.text is not None]
        prompt = "\n\n".join(
            [f"Evidence {i}:\n{text}" for i, text in enumerate(texts, 1)]
            + ["Claims:\n" + "\n".join(f"{n}. {c}" for n, c in enumerate(claims, 1))])
        answer = self.provider.complete(SYSTEM, prompt, max_tokens=4096)
        return parse_verdicts(answer, claims, texts, self.provider.identity)


def parse_verdicts(answer: str, claims: list[str], evidence: list[str],
                   who: str = "the model") -> list[ClaimCheck]:
    """The model's answer as checks (ProviderError when it is not the JSON asked for)."""
    try:
        items = json_list(answer, "claims")
    except ValueError as exc:
        raise ProviderError(f"{who} returned no verdict JSON ({exc}: {answer[:80]!r}); the "
                            f"page was not verified. Run verify again or use the offline "
                            f"validator.") from None
    flat = [" ".join(text.split()) for text in evidence]
    found: dict[int, ClaimCheck] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("n"), int):
            continue
        n = item["n"]
        verdict = str(item.get("verdict", ""))
        quote = " ".join(str(item.get("quote") or "").split())
        if not 1 <= n <= len(claims) or verdict not in CLAIM_VERDICTS or n in found:
            continue
        if verdict != "unsupported" and (not quote or not any(quote in t for t in flat)):
            verdict, quote = "unsupported", ""
        found[n] = ClaimCheck(claims[n - 1], verdict, quote if verdict != "unsupported" else "")
    return [found.get(n, ClaimCheck(c, "unsupported")) for n, c in enumerate(claims, 1)]
