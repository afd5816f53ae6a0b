"""The offline validator: a deterministic claim check that needs no model and no key.

A claim is *supported* when one sentence of the evidence carries all of its content words
(case, accents of inflection and a plural -s aside) and agrees with it on numbers and dates
(every number of the claim is in the sentence) and on negation (both negated or neither).
When a sentence carries the words but disagrees on a number or a negation, the claim is
*contradicted*, quoting that sentence; otherwise it is *unsupported*. The verdict is ``pass``
only when every claim is supported, ``fail`` when one is contradicted, ``warn`` otherwise,
and ``unverifiable`` when there was no evidence text (or no claim) to check.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .claims import Claim
from .record import ClaimCheck

IDENTITY = "offline:v1"

_CJK_CHARS = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"\d+(?:[.,:/-]\d+)*|[{_CJK_CHARS}]+|[^\W\d_{_CJK_CHARS}]+")
_CJK = re.compile(f"[{_CJK_CHARS}]")
NEGATIONS = frozenset({"not", "no", "never", "none", "nothing", "neither", "nor", "cannot",
                       "without", "nobody", "nowhere"})
_CONTRACTION = re.compile(r"\b(?:(ca|wo|sha)|([a-z]+))n[’']t\b", re.I)
STOPWORDS = frozenset("""a an the and or but if then else of to in on at by for with from as
into onto over under about than that this these those it its it's is are was were be been being
do does did has have had having will would can could should may might must shall so such
there here which who whom whose what when where why how all any both each few more most other
some own same too very just also only you your yours we our ours they their them he she his
her i me my mine us s t re ve ll d one""".split())


@dataclass(frozen=True)
class Sentence:
    """An evidence sentence, analysed once."""

    text: str
    words: frozenset[str]
    numbers: frozenset[str]
    negated: bool


def analyse(text: str) -> Sentence:
    """The content words, numbers and negation of a sentence."""
    words: set[str] = set()
    numbers: set[str] = set()
    negated = False
    normal = _CONTRACTION.sub(_expand, unicodedata.normalize("NFKC", text))
    for token in _TOKEN.findall(normal):
        if token[0].isdigit():
            numbers.add(token.replace(",", ""))
            continue
        lower = token.casefold()
        if lower in NEGATIONS:
            negated = True
            continue
        if _CJK.search(lower):
            # no word boundaries in CJK: character bigrams carry the content
            chars = [c for c in lower if not c.isspace()]
            words.update(a + b for a, b in zip(chars, chars[1:]))
            if len(chars) == 1:
                words.add(chars[0])
            continue
        if lower in STOPWORDS or len(lower) < 2:
            continue
        words.add(_stem(lower))
    return Sentence(text, frozenset(words), frozenset(numbers), negated)


def check_claim(claim: Claim | str, evidence: list[Sentence]) -> ClaimCheck:
    """The verdict on one claim against the sentences of the evidence."""
    text = claim.text if isinstance(claim, Claim) else claim
    wanted = analyse(text)
    conflict = ""
    for sentence in evidence:
        if not wanted.words <= sentence.words:
            continue
        if wanted.numbers <= sentence.numbers and wanted.negated == sentence.negated:
            return ClaimCheck(text, "supported", sentence.text)
        conflict = conflict or sentence.text
    if conflict:
        return ClaimCheck(text, "contradicted", conflict)
    return ClaimCheck(text, "unsupported")


def verdict_of(checks: list[ClaimCheck]) -> str:
    """pass (all supported) | fail (one contradicted) | warn | unverifiable (no claims)."""
    if not checks:
        return "unverifiable"
    if any(c.verdict == "contradicted" for c in checks):
        return "fail"
    return "pass" if all(c.supported for c in checks) else "warn"


def _expand(match: re.Match[str]) -> str:
    """doesn't → does not, can't → can not, won't → will not."""
    head = {"ca": "can", "wo": "will", "sha": "shall"}.get((match.group(1) or "").lower())
    return f"{head or match.group(2)} not"


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word
