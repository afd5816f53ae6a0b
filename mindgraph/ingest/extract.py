"""Deterministic facts taken from a note's text: summary sentences, salient terms, type.

Everything here depends on the note alone (never on other notes), so a page compiles the same
way whatever else is in the vault, and one changed note never changes another's summary.
"""

from __future__ import annotations

import functools
import math
import operator
import re
import unicodedata
from collections import Counter
from itertools import chain
from typing import Any, Iterable, Mapping

from ..page.links import replace_links
from ..text.cjk import CJK_RUN, KATAKANA_WORD, run_language, text_hint, words
from .normalise import HEADING_STARTS, code_mask, heading_of

SUMMARY_SENTENCES = 2
SUMMARY_CHARS = 320
MAX_TERM_TAGS = 3

_STOPWORDS = frozenset("""a about above after again against all also although always am among an
and another any are around as at available be because been before being below between both but
by can cannot could did do does doing done down during each either else enough even ever every
example few find following for from further get gets getting give given go goes going had has
have having he her here hers how however i if in include includes including into is it its
itself just keep know last later less let like likely lot made make makes making many may me
might more most much must my need needs never new next no not note now of off often on once one
only onto or other others otherwise our out over own per please possible rather really same see
select set several shall she should show shown since so some something still such sure take
than that the their them then there these they thing things this those though through thus to
together too two under until up upon us use used uses using very via want was way ways we well
were what whatever when where whether which while who whom whose why will with within without
would yes yet you your yours also able across already instead first second third usually want
wants below above click open opens""".split())
# Nouns too common in help pages to tell one from another ("note" is in _STOPWORDS too).
_CJK_GENERIC = frozenset("""ノート 場合 方法 使用 機能 必要 以下 次 例 際 一部 全て 可能 ため 以外
笔记 使用 功能 需要 以下 例如 方法 时候 可以 进行 其他 所有 情况""".split())
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*[A-Za-z0-9]|[A-Za-z]")
# The same words in text that is not ASCII: any alphabet's letters (café, Zürich, naïve,
# Ελλάδα, Москва), not CJK (counted as nouns or bigrams instead), in NFC (a combining accent
# composed with its letter). The ASCII one stays for ASCII text: the same words, faster; here
# single classes, the rare ' and - groups apart (no alternation tried at every character).
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_LETTER = rf"[^\W\d_{_CJK_CHARS}]"
_ALNUM = rf"[^\W_{_CJK_CHARS}]"
_ANY_WORD_RE = re.compile(rf"{_LETTER}{_ALNUM}*(?:['\-]+{_ALNUM}+)*")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CJK_RUNS_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[*_]?[A-Z0-9])|(?<=[。！？])")
_LIST_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_TROUBLE_RE = re.compile(r"troubleshoot|\berrors?\b|\bfail|not work|problem|\bissues?\b|"
                         r"\bfix(?:ing)?\b|トラブル|問題|错误|故障", re.I)


_HTML_TAG_RE = re.compile(r"<[^<>\n]+>")
# bounded: an unclosed marker must not rescan the rest of a long line from each one
_STRONG_RE = re.compile(r"(\*\*|__|~~|==)(.{1,300}?)\1")
_EMPHASIS_RE = re.compile(r"(?<![\w*])[*_](\S(?:.{0,300}?\S)?)[*_](?![\w*])")
_CODE_SPAN_RE = re.compile(r"`([^`]*)`")
_BLOCK_ID_RE = re.compile(r"\s\^[\w-]+\s*$")
_MARKUP_RE = re.compile(r"<[^<>\n]+>|https?://\S+")
_LATIN_RUNS_RE = re.compile(r"[A-Za-z]+")
_NOT_TAG_RE = re.compile(r"[^\w\-]+")
# a match's group as its replacement: what the template r"\1" gives, without the Python
# call re makes to expand a template on each sub (~8,000 of them over a vault)
_FIRST_GROUP, _SECOND_GROUP = operator.itemgetter(1), operator.itemgetter(2)


def plain_text(line: str) -> str:
    """A markdown line as plain text: links by their display text, no emphasis or code marks
    (each pattern tried only on a line holding a character it needs)."""
    line = replace_links(line, _wikilink_text, embed="")
    if "<" in line:
        line = _HTML_TAG_RE.sub("", line)
    if "*" in line or "_" in line or "~" in line or "=" in line:
        line = _STRONG_RE.sub(_SECOND_GROUP, line)
        if "*" in line or "_" in line:
            line = _EMPHASIS_RE.sub(_FIRST_GROUP, line)
    if "`" in line:
        line = _CODE_SPAN_RE.sub(_FIRST_GROUP, line)
    if "^" in line:
        line = _BLOCK_ID_RE.sub("", line)
    return " ".join(line.split())


def _wikilink_text(target: str, heading: str | None, _block: str | None,
                   alias: str | None) -> str:
    if alias:
        return alias
    return target.rsplit("/", 1)[-1] or (heading or "")


def prose_blocks(body: str) -> list[str]:
    """Paragraphs of prose (no code, headings, tables, lists, quotes or callouts), plain text."""
    lines = body.split("\n")
    in_code = code_mask(lines)
    blocks: list[str] = []
    current: list[str] = []
    for line, code in zip(lines, in_code):
        stripped = line.strip()
        # heading_of and _LIST_RE only where the first character allows one (a heading's
        # "#", a list item's marker or digit: str.strip and \s skip the same whitespace)
        if code or not stripped \
                or stripped.startswith(("|", ">", "<", "![[", "---", "***", "%%")) \
                or (stripped[0] == "#" and heading_of(line) is not None) \
                or ((stripped[0] in "-*+" or stripped[0].isdigit()) and _LIST_RE.match(line)):
            if current:
                blocks.append(" ".join(current))
                current = []
            continue
        text = plain_text(stripped)
        if text:
            current.append(text)
    if current:
        blocks.append(" ".join(current))
    return blocks


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph (Latin and CJK punctuation)."""
    return [s.strip() for s in _SENTENCE_END_RE.split(text) if s and s.strip()]


def latin_words(text: str) -> list[str]:
    """The words of ``text`` written in letters (not CJK), as written."""
    if text.isascii():
        return _WORD_RE.findall(text)
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", text)
    return _ANY_WORD_RE.findall(text)


def tokens(text: str) -> list[str]:
    """Lower-case content words (stopwords out); CJK text gives character bigrams."""
    out = [w for w in map(str.lower, latin_words(text))
           if len(w) > 2 and w not in _STOPWORDS]
    if text.isascii():          # a flag of the string: no CJK run to look for
        return out
    for run in _CJK_RUNS_RE.findall(text):
        # each pair of neighbouring characters (a run of one: the character)
        out.extend(map(operator.add, run, run[1:]) if len(run) > 1 else (run,))
    return out


def summary(body: str) -> str:
    """The note's opening sentence (which usually defines its subject) and its most central
    other sentence, in their original order, within SUMMARY_CHARS.

    Centrality is the sum of the note's own term frequencies over a sentence's distinct terms,
    normalised by length, with a mild preference for earlier sentences.
    """
    sentences = [s for block in prose_blocks(body) for s in split_sentences(block)
                 if _long_enough(s)]
    if not sentences:
        return ""
    chosen = [0]
    if len(sentences) > 1 and SUMMARY_SENTENCES > 1:
        tokenised = [tokens(s) for s in sentences]
        tf = Counter(chain.from_iterable(tokenised))
        scored = []
        for position, toks in enumerate(tokenised[1:], start=1):
            score = sum(map(tf.__getitem__, set(toks))) / math.sqrt(len(toks) + 1)
            scored.append((-score / (1 + 0.1 * position), position))
        chosen.append(min(scored)[1])
    text = ""
    for position in sorted(chosen):
        gap = "" if text.endswith(("。", "！", "？")) else " "   # CJK runs on without spaces
        candidate = (text + gap + sentences[position]).strip()
        if text and len(candidate) > SUMMARY_CHARS:
            break
        text = candidate
    if len(text) > SUMMARY_CHARS:
        text = text[:SUMMARY_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return text


def _long_enough(sentence: str) -> bool:
    if sentence.rstrip().endswith((":", "：")):   # introduces a list: says little on its own
        return False
    if not sentence.isascii() and _CJK_RE.search(sentence):
        return len(sentence) >= 8
    return len(sentence) >= 25 and len(sentence.split()) >= 4


def outline(body: str) -> str:
    """A fallback summary for notes without prose: their sections or their first line."""
    lines = body.split("\n")
    in_code = code_mask(lines)
    headings = [h[1] for i, line in enumerate(lines)
                if not in_code[i] and (h := heading_of(line)) is not None]
    if headings:
        shown = ", ".join(plain_text(h) for h in headings[:6])
        more = f" and {len(headings) - 6} more" if len(headings) > 6 else ""
        return f"Sections: {shown}{more}."
    for i, line in enumerate(lines):
        text = plain_text(_LIST_RE.sub("", line).lstrip("> |").strip())
        if not in_code[i] and text:
            return text if len(text) <= SUMMARY_CHARS else text[:SUMMARY_CHARS] + "…"
    if any(in_code):
        return f"Code only ({sum(in_code)} lines)."
    return "This note has no body text."


def salient_terms(body: str, title: str, limit: int = MAX_TERM_TAGS) -> list[str]:
    """The note's most frequent content words (heading words count three times), as tags.

    A note written mostly in Chinese or Japanese is tagged from its CJK nouns (cut by the
    dictionaries of ``mindgraph.text.cjk``; its Latin words there are mostly UI labels and key
    names); any other note from its Latin words, plurals folded into their singular.
    """
    lines = body.split("\n")
    in_code = code_mask(lines)
    prose, headings = [], []
    for line, code in zip(lines, in_code):
        # heading_of only for a line that may be one (most are not: no call for them)
        if code:
            continue
        if line.startswith(HEADING_STARTS) and (heading := heading_of(line)) is not None:
            headings.append(heading[1])
        else:
            prose.append(line)
    texts = (("\n".join(prose), 1), ("\n".join(headings), 3))
    # characters counted a run at a time (a list of every character took 10x as long)
    cjk = 0 if body.isascii() else sum(map(len, _CJK_RUNS_RE.findall(body)))
    # Latin letters counted only when it matters (a fifth of the whole body is enough)
    if cjk and (cjk > 0.2 * len(body)
                or cjk > 0.2 * max(1, sum(map(len, _LATIN_RUNS_RE.findall(body))) + cjk)):
        counts = _cjk_nouns(texts, title, text_hint(body))
    else:
        counts = _latin_words(texts, title)
    # counted three times or more, the most first (then alphabetically: words are distinct)
    ranked = sorted([(-c, w) for w, c in counts.items() if c >= 3])
    return [w for _, w in ranked][:limit]


def _latin_words(texts: Iterable[tuple[str, int]], title: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    count = counts.get      # not counts[word] += …: Counter's __missing__ is a Python call
    for text, weight in texts:
        # each distinct spelling once (a note says most of its words many times)
        for written, times in Counter(latin_words(_strip_markup(text))).items():
            word = _content_word(written)
            if word:
                counts[word] = count(word, 0) + weight * times
    for word in latin_words(title):
        word = word.lower()
        if word in counts:
            counts[word] += 2
    # Fold plurals into a singular that also occurs ("notes"/"note", "properties"/"property"),
    # in alphabetical order (every suffix below ends in s: only such words are looked at).
    for word in sorted([w for w in counts if w[-1] == "s"]):
        for suffix, base in (("ies", "y"), ("es", ""), ("s", "")):
            single = word[: -len(suffix)] + base
            if word.endswith(suffix) and single != word and single in counts:
                counts[single] += counts.pop(word)
                break
    return counts


@functools.lru_cache(maxsize=65536)
def _content_word(written: str) -> str:
    """A Latin word as counted (lower case, no edge quotes or hyphens), or "" for one that
    is too short, a stop word (or one with a letter added) or a number."""
    word = written.lower().strip("'-")
    if len(word) >= 4 and word not in _STOPWORDS and word[:-1] not in _STOPWORDS \
            and not word.isdigit():
        return word
    return ""


def _cjk_nouns(texts: Iterable[tuple[str, int]], title: str, hint: str | None
               ) -> Counter[str]:
    """Nouns of two characters or more, a katakana compound as one word (プラグ+イン)."""
    counts: Counter[str] = Counter()
    for text, weight in texts:
        # each distinct noun once (a note says its nouns many times)
        for noun, times in Counter(_nouns(_strip_markup(text), hint)).items():
            counts[noun] = counts.get(noun, 0) + weight * times
    for noun in set(_nouns(title, hint)):
        if noun in counts:
            counts[noun] += 2
    return counts


def _nouns(text: str, hint: str | None) -> list[str]:
    """The nouns of every CJK run of ``text``, in order."""
    return [noun for run in CJK_RUN.findall(text) for noun in _run_nouns(run, hint)]


@functools.lru_cache(maxsize=16384)     # runs repeat (headings, UI labels, set phrases)
def _run_nouns(run: str, hint: str | None) -> tuple[str, ...]:
    """The nouns ``_nouns`` counts in one CJK run (``hint``: the text's, for Han alone), in
    order: not a single character, nor one too generic to tell pages apart."""
    found: list[str] = []
    add = found.append          # (locals: a vault's runs give ~150,000 words)
    katakana = KATAKANA_WORD.fullmatch
    pending = ""
    for word in words(run, run_language(run, hint)):
        if not word.noun:
            if pending:
                add(pending)
                pending = ""
            continue
        text = word.text
        if katakana(text):
            pending += text          # katakana nouns written together are one word
            continue
        if pending:
            add(pending)
            pending = ""
        if not word.function:
            add(text)
    if pending:
        add(pending)
    return tuple([noun for noun in found if len(noun) >= 2 and noun not in _CJK_GENERIC])


def _strip_markup(text: str) -> str:
    """Link targets, URLs and HTML out of a whole text, so only words people read remain."""
    text = replace_links(text, _wikilink_text, embed="")
    if "<" not in text and "http" not in text:     # nothing the pattern could match
        return text
    return _MARKUP_RE.sub(" ", text)


def folder_tag(path: str) -> str:
    """A nested tag from the note's folder ("Plugins/Core/x.md" → "plugins/core"), or ""."""
    folders = path.split("/")[:-1]
    parts = [_NOT_TAG_RE.sub("-", f.strip().lower()).strip("-") for f in folders]
    return "/".join(p for p in parts if p)


def page_type(frontmatter: Mapping[str, Any], title: str, body: str) -> str:
    """``type`` from the frontmatter, else index (mostly links), troubleshooting, or note."""
    given = frontmatter.get("type")
    if isinstance(given, str) and given.strip():
        return given.strip()
    if _TROUBLE_RE.search(title):
        return "troubleshooting"
    lines = [ln for ln in body.split("\n") if ln.strip() and not (
        ln.startswith(HEADING_STARTS) and heading_of(ln) is not None)]
    linked = sum(1 for ln in lines if "[[" in ln and _LIST_RE.match(ln))
    if len(lines) >= 5 and linked / len(lines) >= 0.6:
        return "index"
    return "note"
