"""The offline validator over an index of the evidence: each claim is checked only against
the sentences that carry all of its content words, not against every sentence.

``check_claim`` (offline.py) reads every sentence for every claim: a text of 8,000 claims
against 35,000 evidence sentences took minutes. Here the evidence is indexed once (which
sentences carry each word, each number, and which are negated), and a claim's verdict comes
from those lists: *supported* by the first sentence in every list of its words and numbers
with its negation, else *contradicted* by the first sentence in every list of its words,
else *unsupported* — the verdicts and quotes ``check_claim`` gives, in the same order.

Work is bounded by a ``deadline`` (``time.monotonic()``) that the judge honours between
claims and while indexing: past it, ``OverBudget`` — so a request whose caller has given up
stops working instead of holding its worker.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from ..errors import OverBudget
from .offline import Sentence, analyse
from .record import ClaimCheck

_SCAN_IN_ORDER = 64      # candidates tried one by one before a set intersection
_CHECK_EVERY = 512       # sentences indexed between two looks at the clock


class EvidenceIndex:
    """The analysed sentences of some evidence, with the sentences of each word and number
    (ascending) and of each polarity (negated or not)."""

    def __init__(self, sentences: Iterable[str], deadline: float | None = None,
                 what: str = ""):
        self.sentences: list[Sentence] = []
        self._words: dict[str, list[int]] = {}
        self._numbers: dict[str, list[int]] = {}
        self._polarity: dict[bool, list[int]] = {False: [], True: []}
        self._sets: dict[int, frozenset[int]] = {}
        self._firsts: dict[tuple[int, ...], int | None] = {}   # claims often share words
        self._deadline, self._what = deadline, what
        for i, text in enumerate(sentences):
            if i % _CHECK_EVERY == 0:
                self.in_time()
            sentence = analyse(text)
            self.sentences.append(sentence)
            for word in sentence.words:
                self._words.setdefault(word, []).append(i)
            for number in sentence.numbers:
                self._numbers.setdefault(number, []).append(i)
            self._polarity[sentence.negated].append(i)

    def in_time(self, claims_done: int | None = None) -> None:
        """OverBudget once the deadline has passed."""
        if self._deadline is not None and time.monotonic() > self._deadline:
            done = (f"reading {len(self.sentences):,} evidence sentences"
                    if claims_done is None else f"checking {claims_done:,} claims")
            raise OverBudget(f"The check was stopped at its time budget{self._what} after "
                             f"{done}. Send fewer claims or less evidence at once.")

    def check(self, claim: str) -> ClaimCheck:
        """The verdict on one claim (as ``offline.check_claim`` gives it)."""
        wanted = analyse(claim)
        words = [self._words.get(w) for w in wanted.words]
        if any(found is None for found in words):
            return ClaimCheck(claim, "unsupported")
        numbers = [self._numbers.get(n) for n in wanted.numbers]
        if all(found is not None for found in numbers):
            support = self._first([*words, *numbers, self._polarity[wanted.negated]])
            if support is not None:
                return ClaimCheck(claim, "supported", self.sentences[support].text)
        conflict = self._first(words) if words else (0 if self.sentences else None)
        if conflict is not None:
            return ClaimCheck(claim, "contradicted", self.sentences[conflict].text)
        return ClaimCheck(claim, "unsupported")

    def _first(self, lists: list[list[int]]) -> int | None:
        """The lowest sentence number in every one of ``lists`` (None: there is none)."""
        key = tuple(sorted(map(id, lists)))
        if key not in self._firsts:
            self._firsts[key] = self._first_of(sorted(lists, key=len))
        return self._firsts[key]

    def _first_of(self, lists: list[list[int]]) -> int | None:
        head, rest = lists[0], [self._set(x) for x in lists[1:]]
        # in order first: the first sentence with the words is usually near the start
        for i in head[:_SCAN_IN_ORDER]:
            if all(i in other for other in rest):
                return i
        if len(head) <= _SCAN_IN_ORDER:
            return None
        common = self._set(head).intersection(*rest)     # in C, over the shortest list
        return min(common) if common else None

    def _set(self, numbers: list[int]) -> frozenset[int]:
        found = self._sets.get(id(numbers))
        if found is None:
            found = self._sets[id(numbers)] = frozenset(numbers)
        return found


def judge_claims(claims: list[str], sentences: Iterable[str],
                 deadline: float | None = None, what: str = "") -> list[ClaimCheck]:
    """Every claim's verdict against the sentences, checking the deadline between claims
    (``what`` names the budget in the OverBudget message, e.g. " (serve.request_timeout_s)")."""
    index = EvidenceIndex(sentences, deadline, what)
    out = []
    for claim in claims:
        index.in_time(len(out))
        out.append(index.check(claim))
    return out


__all__ = ["EvidenceIndex", "judge_claims"]
