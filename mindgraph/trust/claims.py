"""A page body split into checkable statements, and evidence text split into sentences.

A claim is a sentence of a paragraph or a list item, outside fenced code, callouts and
quotes (``>`` lines), headings, tables, HTML comments and the frontmatter. Markdown is
reduced to its words: ``[[Page|shown]]`` → shown, ``[text](url)`` → text, emphasis and
inline-code backticks dropped. A statement without a word of three letters (or a CJK
character) is no claim ("1.", "→ 2").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..page.markdown import mask_code, mask_comments, split_frontmatter

_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_RULE = re.compile(r"^ {0,3}([-*_])(\s*\1){2,}\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[*_]*[A-Z0-9À-ÖØ-Þ])|(?<=[。！？])")
_WIKILINK = re.compile(r"!?\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|~~|==|`)")
_TAG = re.compile(r"(?<![\w/])#(?=[^\s#])")
_CLAUSE = re.compile(r"[:;]\s+|\s+[–—]\s+")
_WORDY = re.compile(r"[^\W\d_]{3,}|[\u3040-\u30ff\u3400-\u9fff]")


@dataclass(frozen=True)
class Claim:
    """One checkable statement: its text and the 1-based line it starts on."""

    text: str
    line: int


def page_claims(text: str) -> list[Claim]:
    """The claims of a page's text (frontmatter skipped; 1-based file lines)."""
    _, body, head = split_frontmatter(text)
    return [Claim(c.text, c.line + head) for c in _statements(body, skip_quotes=True)
            if _WORDY.search(c.text)]


def evidence_sentences(text: str) -> list[str]:
    """Every sentence of an evidence text (code, quotes and callouts included: evidence is
    what was written, whatever its form)."""
    _, body, _ = split_frontmatter(text)
    out = []
    for claim in _statements(body, skip_quotes=False, keep_code=True):
        out.append(claim.text)
        # its clauses too, so "X: Y is not Z" supports "X" without Y's negation
        parts = [p.strip() for p in _CLAUSE.split(claim.text) if p.strip()]
        if len(parts) > 1:
            out.extend(parts)
    return out


def plain(markdown: str) -> str:
    """Inline markdown reduced to its words."""
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1).rsplit("/", 1)[-1], markdown)
    text = _MDLINK.sub(lambda m: m.group(1), text)
    text = _EMPHASIS.sub("", text)
    text = _TAG.sub("", text)
    return " ".join(text.split())


def _statements(body: str, *, skip_quotes: bool, keep_code: bool = False) -> list[Claim]:
    lines = body.split("\n")
    masked = mask_code(mask_comments(body).split("\n"))
    out: list[Claim] = []
    paragraph: list[str] = []
    start = 0

    def flush() -> None:
        if paragraph:
            out.extend(_sentences(" ".join(paragraph), start))
            paragraph.clear()

    for number, (line, shown) in enumerate(zip(lines, masked), start=1):
        code = not shown.strip() and line.strip() != ""
        if code and not keep_code:
            flush()
            continue
        stripped = line.strip()
        if keep_code:
            stripped = stripped.lstrip(">").strip() if stripped.startswith(">") else stripped
            if stripped.startswith("[!"):
                stripped = stripped.split("]", 1)[-1].lstrip("-+ ")
        elif stripped.startswith(">") and skip_quotes:
            flush()
            continue
        if not stripped or _RULE.match(stripped) or stripped.startswith(("|", "```", "~~~")):
            flush()
            continue
        if _HEADING.match(stripped):
            flush()
            if keep_code:
                out.append(Claim(plain(stripped.lstrip("#").strip()), number))
            continue
        item = _LIST_ITEM.match(stripped)
        if item:
            flush()
            paragraph.append(stripped[item.end():])
            start = number
            continue
        if not paragraph:
            start = number
        paragraph.append(stripped)
    flush()
    return out


def _sentences(text: str, line: int) -> list[Claim]:
    return [Claim(s, line) for s in (plain(part) for part in _SENTENCE_END.split(text)) if s]
