"""The LLM judge for lint: which pairs of similar statements on two pages contradict.

Offline, lint flags only statements whose quantities disagree. With an LLM configured it
also sends similar statements without numbers (the same subject, said twice), in batches of
BATCH pairs, and keeps the pairs the model calls contradictory with a reason. The answer is
JSON, checked at the boundary: an answer that is not the JSON asked for raises ProviderError
and lint falls back to the offline findings, saying so.
"""

from __future__ import annotations

from typing import Any

from ..errors import ProviderError
from ..providers.llm.answers import json_list
from .facts import Conflict
from .statements import Statement

PROMPT_VERSION = "v1"
BATCH = 25            # pairs per call
MAX_PAIRS = 400       # pairs judged per run at most (the rest is said in the report's notes)
SYSTEM = (
    "You compare statements taken from two pages of one wiki. For every numbered pair decide "
    "whether the two statements contradict each other (they cannot both be true of the same "
    "thing) or are consistent (they agree, or are about different things). Answer with JSON "
    'only, no prose: {"pairs": [{"n": 1, "verdict": "contradicts", "reason": "<one short '
    'sentence>"}, {"n": 2, "verdict": "consistent", "reason": ""}]}')
VERDICTS = ("contradicts", "consistent")


class LLMJudge:
    """Judges candidate pairs with an LLMProvider (anything with ``identity`` and
    ``complete``); ``calls`` counts the requests made."""

    def __init__(self, provider: Any):
        self.provider = provider
        self.calls = 0

    @property
    def identity(self) -> str:
        """llm:<provider identity>:<prompt version>, named in each finding it confirmed."""
        return f"llm:{self.provider.identity}:{PROMPT_VERSION}"

    def __call__(self, pairs: list[tuple[Statement, Statement]]) -> list[Conflict]:
        """The pairs the model says contradict, each with its reason."""
        confirmed: list[Conflict] = []
        for start in range(0, len(pairs), BATCH):
            batch = pairs[start:start + BATCH]
            prompt = "\n\n".join(
                f"Pair {n}:\nA ({a.page}): {a.text}\nB ({b.page}): {b.text}"
                for n, (a, b) in enumerate(batch, 1))
            self.calls += 1
            answer = self.provider.complete(SYSTEM, prompt, max_tokens=4096)
            for n, reason in parse_contradictions(answer, len(batch), self.provider.identity):
                a, b = batch[n - 1]
                confirmed.append(Conflict(a, b, ("", ""), reason=reason))
        return confirmed


def parse_contradictions(answer: str, count: int, who: str = "the model") -> list[tuple[int, str]]:
    """(pair number, reason) of each pair the answer calls contradictory; ProviderError when the
    answer is not the JSON asked for."""
    try:
        items = json_list(answer, "pairs")
    except ValueError as exc:
        raise ProviderError(f"{who} returned no verdict JSON ({exc}: {answer[:80]!r}); lint "
                            f"kept the offline findings.") from exc
    found: dict[int, str] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        n, verdict = item.get("n"), item.get("verdict")
        if isinstance(n, int) and 1 <= n <= count and verdict == "contradicts":
            reason = item.get("reason")
            found[n] = reason.strip()[:300] if isinstance(reason, str) and reason.strip() \
                else "the model says they contradict"
    return sorted(found.items())
