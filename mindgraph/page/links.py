"""Extract links and tags from masked markdown lines, the way Obsidian reads them.

Wikilinks ``[[T]]``, ``[[T|alias]]``, ``[[T#Heading]]``, ``[[T#^block]]``, ``[[#Heading]]``,
embeds ``![[...]]``, escaped pipes ``[[T\\|alias]]`` (inside tables), markdown links
``[text](Some%20Note.md)``; frontmatter typed links (``related:``, ``depends_on:``, ...).
Links to attachments (images, audio, video, PDF, ...) are flagged, not treated as pages.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import unquote

from .model import ATTACHMENT_EXTENSIONS, TYPED_RELATIONS, Link

MANUAL_LINKS_KEY = "manual_links"    # [{to, kind, context, id}], written by the compiler
INFERRED_LINKS_KEY = "inferred_links"  # [{to, kind, score, judge}], written by mindgraph enrich
RELATIONS = ("wikilink", *TYPED_RELATIONS)

# Every repetition below stops at a line end and at the next opener, or is bounded: the regex
# engine retries from every "[" of a line, and an unbounded scan from each made a line of
# 20,000 "[a](" take minutes (quadratic); these stay linear (tests/page/test_links.py).
# Each opens with a lookahead of what its first character must be: it changes no match, but
# the engine then rejects every other position at once instead of trying the optional "!"
# (a third less work over a note's text, which is mostly not links).
WIKILINK_RE = re.compile(r"(?=[!\[])(!?)\[\[([^\[\]\n]+?)\]\]")
MDLINK_RE = re.compile(r"(?=[!\[])(!?)\[((?:[^\[\]\n]|\[[^\[\]\n]*\]){0,300})\]"
                       r"\(\s*(<[^<>\n]*>|[^()\s]+(?:\([^()\s]*\)[^()\s]*)*)"
                       r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
# An Obsidian tag: after whitespace or line start; letters of any script, digits, _ - /;
# at least one character that is not a digit (checked in extract_tags).
TAG_RE = re.compile(r"(?:(?<=\s)|^)#([\w\-/]+)")
_TAG_CHARS_RE = re.compile(r"^[\w\-/]+$")
_LINK_URL_RE = re.compile(r"\]\([^)]*\)")     # a Markdown link's (url): no #tag in it
_BARE_URL_RE = re.compile(r"https?://\S+")
_TAG_SEPARATORS_RE = re.compile(r"[,\s]+")

_RELATION_KEYS = {
    "related": "related", "depends_on": "depends_on", "depends-on": "depends_on",
    "extends": "extends", "supersedes": "supersedes", "contradicts": "contradicts",
    "reference": "reference", "references": "reference", "see_also": "related",
}


def is_attachment_target(target: str) -> bool:
    """True when the link target names a non-markdown file (by a known extension)."""
    name = target.rsplit("/", 1)[-1]
    if "." not in name:
        return False
    return name.rsplit(".", 1)[-1].lower() in ATTACHMENT_EXTENSIONS


def parse_wikilink_inner(inner: str) -> tuple[str, str | None, str | None, str | None]:
    """Split the inside of ``[[...]]`` into (target, heading, block, alias)."""
    alias = None
    # "\|" is an escaped pipe (needed inside tables); it separates the alias just like "|".
    inner = inner.replace("\\|", "|")
    if "|" in inner:
        inner, alias = inner.split("|", 1)
        alias = alias.strip() or None
    target, heading, block = inner, None, None
    if "#" in inner:
        target, fragment = inner.split("#", 1)
        fragment = fragment.strip()
        if fragment.startswith("^"):
            block = fragment[1:].strip() or None
        else:
            parts = [p.strip() for p in fragment.split("#") if p.strip()]
            heading = "#".join(parts) or None
    return target.strip(), heading, block, alias


def replace_links(text: str, words: Callable[[str, str | None, str | None, str | None], str],
                  embed: str = " ") -> str:
    """``text`` with every link replaced by its words: a wikilink by ``words(target, heading,
    block, alias)``, a markdown link by its text, an embed (``![[...]]``, ``![...](...)``)
    by ``embed``."""
    if "[" not in text:
        return text
    text = WIKILINK_RE.sub(lambda m: embed if m.group(1) else
                           words(*parse_wikilink_inner(m.group(2))), text)
    return MDLINK_RE.sub(lambda m: embed if m.group(1) else m.group(2), text)


def _markdown_target(raw: str) -> tuple[str, str | None, str | None] | None:
    """(target, heading, block) of a markdown link, or None for external URLs."""
    raw = raw.strip()
    if raw.startswith("<") and raw.endswith(">"):
        raw = raw[1:-1].strip()
    if not raw or SCHEME_RE.match(raw) or raw.startswith("//"):
        return None
    path, _, fragment = raw.partition("#")
    path = unquote(path)
    fragment = unquote(fragment).strip()
    heading = block = None
    if fragment.startswith("^"):
        block = fragment[1:] or None
    elif fragment:
        heading = fragment
    if not path and not heading and not block:
        return None
    return path.strip(), heading, block


def extract_links(masked_lines: list[str], first_line: int,
                  section_at: Any) -> list[Link]:
    """All body links; ``section_at(line)`` gives the section id for a 1-based line."""
    links: list[Link] = []
    for offset, line in enumerate(masked_lines):
        if "[" not in line:
            continue
        number = first_line + offset
        section_id = section_at(number)
        for match in WIKILINK_RE.finditer(line):
            target, heading, block, alias = parse_wikilink_inner(match.group(2))
            if not target and not heading and not block:
                continue
            embed = bool(match.group(1))
            links.append(Link(target=target, syntax="embed" if embed else "wikilink",
                              heading=heading, block=block, alias=alias, line=number,
                              section_id=section_id,
                              is_attachment=is_attachment_target(target)))
        if "](" not in line:
            continue
        stripped = WIKILINK_RE.sub(lambda m: " " * len(m.group(0)), line)
        for match in MDLINK_RE.finditer(stripped):
            parsed = _markdown_target(match.group(3))
            if parsed is None:
                continue
            target, heading, block = parsed
            links.append(Link(target=target, syntax="embed" if match.group(1) else "markdown",
                              heading=heading, block=block, alias=match.group(2).strip() or None,
                              line=number, section_id=section_id,
                              is_attachment=is_attachment_target(target)))
    return links


def as_written(line: str, link: Link) -> str | None:
    """``link`` as it is written on ``line`` (its body line): ``![pic](img/x.jpg)``,
    ``[[Note#Part|shown]]``; None when no link there parses to it (a frontmatter link)."""
    for match in WIKILINK_RE.finditer(line):
        target, heading, block, _ = parse_wikilink_inner(match.group(2))
        if (bool(match.group(1)), target, heading, block) == \
                (link.syntax == "embed", link.target, link.heading, link.block):
            return match.group(0)
    stripped = WIKILINK_RE.sub(lambda m: " " * len(m.group(0)), line)
    for match in MDLINK_RE.finditer(stripped):
        if (match.group(1) == "!") == (link.syntax == "embed") and \
                _markdown_target(match.group(3)) == (link.target, link.heading, link.block):
            return line[match.start():match.end()]
    return None


def frontmatter_links(frontmatter: Mapping[str, Any]) -> list[Link]:
    """Typed links from frontmatter keys such as ``related:`` and ``depends_on:``."""
    links: list[Link] = []
    for key, value in frontmatter.items():
        relation = _RELATION_KEYS.get(str(key).lower())
        if relation is None or relation not in TYPED_RELATIONS:
            continue
        for item in _as_list(value):
            text = str(item).strip()
            match = WIKILINK_RE.fullmatch(text)
            if match:
                target, heading, block, alias = parse_wikilink_inner(match.group(2))
            else:
                target, heading, block, alias = parse_wikilink_inner(text.strip("[]"))
            if not target:
                continue
            links.append(Link(target=target, syntax="frontmatter", relation=relation,  # type: ignore[arg-type]
                              heading=heading, block=block, alias=alias, line=0,
                              section_id="lead", is_attachment=is_attachment_target(target)))
    return (links + manual_links(frontmatter.get(MANUAL_LINKS_KEY))
            + inferred_links(frontmatter.get(INFERRED_LINKS_KEY)))


def manual_links(value: Any) -> list[Link]:
    """The links API's typed links (``manual_links:`` entries with ``to`` and ``kind``);
    entries of another shape are left out."""
    links: list[Link] = []
    for item in value if isinstance(value, list) else ():
        if not isinstance(item, dict):
            continue
        target, kind = str(item.get("to") or "").strip(), item.get("kind")
        if not target or kind not in RELATIONS:
            continue
        context = item.get("context")
        links.append(Link(target=target, syntax="manual", relation=kind, line=0,
                          section_id="lead", context=str(context) if context else None,
                          link_id=str(item["id"]) if item.get("id") else None))
    return links


def inferred_links(value: Any) -> list[Link]:
    """Enrichment's links (``inferred_links:`` entries with ``to``, ``kind``, ``score`` and
    ``judge``, mindgraph/enrich/); entries of another shape are left out."""
    links: list[Link] = []
    for item in value if isinstance(value, list) else ():
        if not isinstance(item, dict):
            continue
        target, kind, score = str(item.get("to") or "").strip(), item.get("kind"), item.get("score")
        if not target or kind not in TYPED_RELATIONS or not isinstance(score, (int, float)):
            continue
        links.append(Link(target=target, syntax="inferred", relation=kind, line=0,
                          section_id="lead", score=float(score),
                          judge=str(item.get("judge") or "") or None))
    return links


def extract_tags(masked_lines: Iterable[str]) -> list[str]:
    """Inline ``#tags`` and ``#nested/tags`` outside code, in order of first appearance."""
    tags: list[str] = []
    for line in masked_lines:
        if "#" not in line:
            continue
        # Drop link syntax first: "[[Note#Heading]]" and "(url#frag)" are not tags.
        line = WIKILINK_RE.sub(" ", line)
        line = _LINK_URL_RE.sub(" ", line)
        line = _BARE_URL_RE.sub(" ", line)
        for match in TAG_RE.finditer(line):
            tag = match.group(1).rstrip("/")
            if tag and _TAG_CHARS_RE.match(tag) and not tag.replace("/", "").isdigit():
                tags.append(tag)
    return tags


def frontmatter_tags(frontmatter: Mapping[str, Any]) -> list[str]:
    """Tags from frontmatter ``tags:``/``tag:`` (list, or a comma/space separated string)."""
    tags: list[str] = []
    for key in ("tags", "tag"):
        for item in _as_list(frontmatter.get(key)):
            for part in _TAG_SEPARATORS_RE.split(str(item)):
                part = part.strip().lstrip("#")
                if part:
                    tags.append(part)
    return tags


def _as_list(value: Any) -> list[Any]:
    """Flatten a YAML value into a list of scalars (unquoted [[X]] in YAML is a nested list)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple, set)):
        out: list[Any] = []
        for item in value:
            out.extend(_as_list(item))
        return out
    if isinstance(value, dict):
        return []
    return [value]
