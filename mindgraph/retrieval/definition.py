"""Definition questions: "what is a vault", 「保管庫とは」, 「什么是保管库」.

The best answer to "what is X" is the section whose heading *is* X (a glossary entry, the page
named X), not a section that mentions X often. ``defined_term`` reads the subject X of such a
question (None for any other question, and for a subject of more than ``MAX_TERMS`` terms);
``heading_match`` says whether a heading names it: ``"named"`` when the heading is X itself
(case, plural and full-width forms aside), ``"framed"`` when it is "What is X", "About X",
"Xとは", "什么是X" and the like.

Both compare ``term_key``s: Latin words lower-cased and stemmed with the analyzer's stemmer
(vault / Vaults meet), articles dropped; CJK runs NFKC-normalised and kept whole. No other
word is dropped, so "Where is the vault" is not the heading "Vault".
"""

from __future__ import annotations

import re
from typing import Mapping

from ..page.language import page_language
from ..page.model import Page
from ..text.cjk import CJK_RUN
from .analyzer import analyze, normalize, stem
from .results import Candidate

MAX_TERMS = 4
ARTICLES = frozenset({"a", "an", "the"})
MAX_CHARS = 120       # a definition question (or a heading naming a term) is short
_END = "$"            # after ``_prepared``: spaces collapsed, end punctuation gone
_EN = r"(?:what|who)(?:\s+(?:is|are|was|were)|['’]s|['’]re)"
# each pattern captures the subject X of the whole question (anchored: a longer question that
# merely starts this way has more words than X, and is no definition question). Matched on
# ``_prepared`` text of at most MAX_CHARS, with no run of spaces or end marks, so the lazy
# subject tries each of at most MAX_CHARS ends against a short fixed tail: linear, not the
# cubic backtracking of lazy groups between ``\s*``s on a long query (expand.py)
_QUESTIONS = tuple(re.compile(p, re.I) for p in (
    rf"^\s*{_EN}\s+(?P<x>.+?){_END}",
    r"^\s*what\s+(?:does|do)\s+(?P<x>.+?)\s+mean" + _END,
    r"^\s*(?:define|definition\s+of|meaning\s+of|explain)\s+(?P<x>.+?)" + _END,
    r"^\s*(?P<x>.+?)\s*(?::|-|–)?\s*(?:meaning|definition)" + _END,
    r"^\s*(?P<x>.+?)\s*の意味(?:は|とは)?(?:何ですか|ですか)?" + _END,
    r"^\s*(?P<x>.+?)\s*(?:とは|って)(?:\s*(?:何|なに|なん)(?:ですか|でしょうか|か|なの)?)?"
    r"(?:ですか|でしょうか)?" + _END,
    r"^\s*(?:什么是|何为|何谓)\s*(?P<x>.+?)" + _END,
    r"^\s*(?P<x>.+?)\s*(?:是什么|是指什么|指的是什么|是啥|是什么意思|的意思是什么|的定义)(?:呢|啊)?"
    + _END,
))
# the same framings in a heading ("What is a vault?", "About vaults", "Vaultとは", "关于保管库")
_FRAMES = _QUESTIONS + tuple(re.compile(p, re.I) for p in (
    r"^\s*(?:about|introduction\s+to|overview\s+of)\s+(?P<x>.+?)" + _END,
    r"^\s*(?P<x>.+?)\s*(?:について|の概要)" + _END,
    r"^\s*(?:关于|关於)\s*(?P<x>.+?)" + _END,
    r"^\s*(?P<x>.+?)\s*(?:简介|概述)" + _END,
))
_OF = re.compile(r"^(?:the\s+)?(?:meaning|definition)\s+of\s+", re.I)
_TOKEN = re.compile(rf"{CJK_RUN.pattern}|[^\W_]+")


def _prepared(text: str) -> str | None:
    """``text`` normalised, its spaces collapsed and its end marks stripped; None when longer
    than ``MAX_CHARS``."""
    if len(text) > 4 * MAX_CHARS:
        return None
    out = " ".join(normalize(text).split()).strip(" ?!。.")
    return out if len(out) <= MAX_CHARS else None


def term_key(text: str) -> tuple[str, ...]:
    """``text`` as a comparable key: stemmed Latin words without articles, CJK runs whole."""
    out = []
    for token in _TOKEN.findall(normalize(text)):
        if CJK_RUN.fullmatch(token):
            out.append(token)
        elif token not in ARTICLES:
            out.append(stem(token))
    return tuple(out)


def defined_term(query: str) -> tuple[str, ...] | None:
    """The key of the subject of a definition question; None for any other question and for
    a subject of more than ``MAX_TERMS`` index terms (or none)."""
    text = _prepared(query)
    if text is None:
        return None
    for pattern in _QUESTIONS:
        found = pattern.match(text)
        if found is None:
            continue
        subject = _OF.sub("", found.group("x").strip(" \t\"'“”「」『』`*"))
        terms = analyze(subject, query=True)
        key = term_key(subject)
        if key and 1 <= len(terms) <= MAX_TERMS:
            return key
        return None
    return None


def heading_match(heading: str, term: tuple[str, ...]) -> str | None:
    """``"named"`` when ``heading`` is the defined term, ``"framed"`` when it is "What is X"
    (or "About X", "Xとは", "什么是X", ...), else None."""
    if not heading or "`" in heading:     # `commands`: a command's name, not a concept
        return None
    if term_key(heading) == term:
        return "named"
    text = _prepared(heading)
    if text is None:
        return None
    for pattern in _FRAMES:
        found = pattern.match(text)
        if found is not None and term_key(found.group("x")) == term:
            return "framed"
    return None


NAMED, FRAMED = "heading_names_defined_term", "heading_frames_defined_term"
WHY = {NAMED: "the heading names the defined term",
       FRAMED: "the heading asks what the defined term is"}


def name_defined_term(query: str, candidates: Mapping[str, Candidate],
                      pages: Mapping[str, Page], bonus: float, min_score: float,
                      lang: str = "other") -> list[str]:
    """On a definition question, each candidate page with a section whose heading names the
    subject (its title, for the lead section) gains ``bonus`` (half of it for a "What is X"
    heading) and shows that section; the boost says why. Only pages retrieval found and
    that clear ``min_score`` gain: the bonus reorders, it never brings a page in. Returns
    the pages it lifted, best first (the caller keeps them near the top: a bonus alone is
    undone when each retriever's own first pages are given the first places). With the
    question's language ``lang`` known, only pages in it gain: 「Markdownとは」 wants the
    Japanese glossary's Markdown, not the Chinese one's."""
    term = defined_term(query) if bonus > 0 else None
    if term is None:
        return []
    lifted = []
    for path, cand in candidates.items():
        if cand.score < min_score or lang not in ("other", page_language(pages[path])):
            continue
        found = _named_section(pages[path], term)
        if found is None:
            continue
        section_id, kind = found
        lift = bonus if kind == NAMED else bonus / 2
        cand.score += lift
        cand.boosts[kind] = round(lift, 4)
        if section_id is not None:
            cand.section_id = section_id
        lifted.append(path)
    return sorted(lifted, key=lambda p: (-candidates[p].score, p))


def _named_section(page: Page, term: tuple[str, ...]) -> tuple[str | None, str] | None:
    """The section naming ``term`` (a named heading before a framed one; the lead section
    when the title names it), with how it names it."""
    best: tuple[str | None, str] | None = None
    kind = heading_match(page.title, term)
    if kind is not None:
        lead = page.section("lead")
        best = (lead.id if lead is not None and lead.text.strip() else None, _KINDS[kind])
        if kind == "named":
            return best
    for section in page.sections:
        kind = heading_match(section.heading, term)
        if kind == "named":
            return section.id, NAMED
        if kind is not None and best is None:
            best = (section.id, FRAMED)
    return best


_KINDS = {"named": NAMED, "framed": FRAMED}
