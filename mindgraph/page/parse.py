"""Parse one markdown page into a Page: frontmatter, title, aliases, tags, sections, links.

Parsing never fails on content: malformed frontmatter is recorded in
``Page.frontmatter_error`` (with the line) and the body is still read, so one bad note never
stops a run. Only text that is not a string raises.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import re
import unicodedata
from typing import Any, Mapping

import yaml

from ..fsutil import sha256_text
from .html_images import image_links
from .links import extract_links, extract_tags, frontmatter_links, frontmatter_tags
from .markdown import find_headings, mask_code, mask_comments, slugify, split_frontmatter
from .model import Page, Section
from .summary import copied_summary
from .yaml_read import (MAX_FRONTMATTER_VALUES, _FrontmatterLoader, _plain,  # noqa: F401
                        _TooBig, first_crossing, key_line, past_limit, read_yaml)

SECTION_LEVELS = (2, 3, 4)


def parse_page(text: str, path: str, content_hash: str = "",
               max_indexed_chars: int | None = None) -> Page:
    """Parse markdown ``text`` of the page at vault-relative ``path``.

    ``max_indexed_chars`` bounds the section text (what search indexes and embeds): the
    sections past it are left out and the section that crosses it is cut at a line end;
    ``Page.unindexed_chars`` says how much was left out (the body stays whole)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    block, body, fm_lines = split_frontmatter(text)
    frontmatter, fm_error = _load_frontmatter(block, path)
    lines = body.split("\n")
    masked = mask_code(mask_comments(body).split("\n"))
    first_line = fm_lines + 1
    headings = find_headings(lines, masked, first_line)
    summary = copied_summary(lines, masked)
    sections, section_at = _build_sections(lines, headings, first_line, summary)
    sections, unindexed = _cap_sections(sections, max_indexed_chars)
    links = extract_links(masked, first_line, section_at)
    if "<" in body:          # <img src="x.png">: drawn as ![[x.png]] is, so that link
        links.extend(image_links(masked, first_line, section_at))
        links.sort(key=lambda link: link.line)
    links.extend(frontmatter_links(frontmatter))
    title = capped_name(_title(frontmatter, headings, path))
    tags = _dedupe([capped_name(t) for t in frontmatter_tags(frontmatter) + extract_tags(masked)])
    aliases = _dedupe([capped_name(str(a).strip()) for a in _as_list(frontmatter.get("aliases"))
                       + _as_list(frontmatter.get("alias")) if str(a).strip()])
    return Page(path=path, title=title, aliases=tuple(aliases), tags=tuple(tags),
                sections=tuple(sections), links=tuple(links), frontmatter=frontmatter,
                has_frontmatter=block is not None, body=body, body_line=first_line,
                copied_summary=summary, unindexed_chars=unindexed,
                content_hash=content_hash or sha256_text(text), frontmatter_error=fm_error)


# what a YAML document that is not a mapping is, in the user's words
_YAML_KINDS = {"list": "a list", "str": "a line of text", "int": "a number",
               "float": "a number", "bool": "true/false"}


def _load_frontmatter(block: str | None, path: str) -> tuple[dict[str, Any], str | None]:
    if block is None or not block.strip():
        return {}, None
    try:
        crossing = first_crossing(block, "a note's frontmatter")     # long blocks only
        if crossing is not None and crossing.field is None:
            return {}, _not_a_mapping(path, "a list")
        if crossing is not None:
            return {}, (f"{path}:{crossing.line + 2}: frontmatter {crossing.subject} "
                        f"{crossing.words}")
        data = read_yaml(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # +1 for the opening '---', 1-based; libyaml marks the end of the stream past the
        # last line, where PyYAML's parser marks the line
        line = min(mark.line, block.count("\n")) + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return {}, (f"{path}:{line}: frontmatter is not valid YAML ({problem}). "
                    f"Fix the YAML between the '---' lines{_yaml_hint(exc, block)}.")
    except RecursionError:
        return {}, f"{path}:2: frontmatter is nested too deeply. Flatten it."
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, _not_a_mapping(path, _YAML_KINDS.get(type(data).__name__,
                                                        type(data).__name__))
    budget, plain = [MAX_FRONTMATTER_VALUES - 1], {}
    for key, value in data.items():             # field by field, to name the one too big
        left = budget[0]
        try:
            plain[str(key)] = _plain(value, budget, 1)
        except _TooBig as exc:
            return {}, _too_big(path, block, str(key), value, left, exc.args[0] == "deep")
    if "\\" in block and (key := _surrogate_field(plain)) is not None:
        shown = key.encode("utf-8", "backslashreplace").decode("utf-8")
        line = key_line(block, key)
        line = key_line(block, shown) if line is None else line     # the key's own escape
        return {}, (f"{path}:{line + 2 if line is not None else 2}: frontmatter field "
                    f"'{shown}' holds a lone surrogate (an escape from \\ud800 to \\udfff), "
                    f"which no UTF-8 text can hold. Remove the escape, or write the character "
                    f"itself.")
    return plain, None


def _not_a_mapping(path: str, kind: str) -> str:
    return (f"{path}:2: frontmatter must be a mapping of keys (key: value), got {kind}. Write "
            f"each property as 'key: value' between the '---' lines (a list goes under a "
            f"key: 'tags: [a, b]'); a note that starts with a horizontal rule can draw it as "
            f"'***' instead.")


def _surrogate_field(plain: Mapping[str, Any]) -> str | None:
    """The first field whose name or value holds a lone surrogate, which only a YAML escape
    ("\\udfff") writes: it would fail every UTF-8 encoding of the page downstream (the whole
    ingest stopped at the title index's digest)."""
    for key, value in plain.items():
        try:
            json.dumps([key, value], ensure_ascii=False, default=str).encode("utf-8")
        except UnicodeEncodeError:
            return key
    return None


# what an unclosed flow collection or quote reads as, and what was left open
_UNCLOSED = (("expected ',' or ']'", "a '[' list", "']'"),
             ("expected ',' or '}'", "a '{' mapping", "'}'"),
             ("while scanning a quoted scalar", "a quoted value", "its closing quote"))


def _yaml_hint(exc: yaml.YAMLError, block: str) -> str:
    """What the YAML error is most likely about, as a fix: an unclosed '[', '{' or quote
    (with the line it opened on), a ':' inside a plain value, a tab indenting, a value
    beginning with a character YAML reserves (quoted, as its line would be written), or
    nothing more to say."""
    said = f"{getattr(exc, 'problem', '') or ''} {getattr(exc, 'context', '') or ''}"
    opened = getattr(exc, "context_mark", None)
    for sign, what, close in _UNCLOSED:
        if sign in said:
            where = f" on line {opened.line + 2}" if opened is not None else ""
            return f": {what} opened{where} is never closed (add {close})"
    if "mapping values are not allowed" in said:
        return " (quote values that contain ':', or fix the indentation)"
    if "found character '\\t'" in said:
        return ": YAML indents with spaces, not tabs (replace the tab with spaces)"
    start = _UNQUOTED_START.search(said)
    if start:
        sign = start.group(1) or start.group(2) or "!"
        mark = getattr(exc, "problem_mark", None)
        line = block.split("\n")[mark.line] if mark is not None else ""
        field = _FIELD_LINE.match(line)
        shown = (f"{field.group(1)}: \"{field.group(2).strip()}\"" if field and
                 field.group(2).strip()[:1] == sign and '"' not in field.group(2) else f"key: \"{sign}…\"")
        return f": a value that begins with '{sign}' must be in quotes ({shown[:80]})"
    return ""


# what PyYAML says of a plain value beginning with a character YAML reserves: '@' and '`'
# (cannot start any token), '*' and '&' (an alias or anchor), '!' (a tag), '%' (a directive)
_FIELD_LINE = re.compile(r"^[ \t]*([^:#\s][^:]*):[ \t]+(.*)$")
_UNQUOTED_START = re.compile(r"found character '([@`%])' that cannot start any token|"
                             r"but found '([*&])'|could not determine a constructor for the "
                             r"tag '!")


def _too_big(path: str, block: str, key: str, value: Any, left: int, deep: bool) -> str:
    """The message for frontmatter field ``key`` past MAX_FRONTMATTER_DEPTH or past the
    MAX_FRONTMATTER_VALUES budget (``left`` of it when the field began), at the field's
    line (a top-level ``key:`` of the block; the opening '---' is line 1)."""
    line = key_line(block, key)
    where = f"{path}:{line + 2 if line is not None else 2}: frontmatter field '{key}'"
    return f"{where} {past_limit(value, left, deep, 'a note' + chr(39) + 's frontmatter')}"


def _build_sections(lines: list[str], headings: list, first_line: int,
                    summary: tuple[int, int] = (0, 0)):
    """Sections at H2/H3/H4 holding their own text only, plus the lead text (without a
    summary callout that only repeats the body: ``summary``, body line offsets)."""
    boundaries = [h for h in headings if h.level in SECTION_LEVELS]
    last_line = first_line + len(lines) - 1
    sections: list[Section] = []
    starts: list[tuple[int, str]] = []
    stop = boundaries[0].line - 1 if boundaries else last_line
    unsummarised = lines[:summary[0]] + [""] * (summary[1] - summary[0]) + lines[summary[1]:]
    lead_text = _text(unsummarised, first_line, first_line, stop, skip_h1=True)
    if lead_text:
        sections.append(Section("lead", "", 0, (), lead_text, first_line, stop))
    starts.append((first_line, "lead"))
    stack: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for i, heading in enumerate(boundaries):
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, heading.text))
        path = tuple(text for _, text in stack)
        base = "/".join(slugify(part) for part in path)
        seen[base] = seen.get(base, 0) + 1
        section_id = base if seen[base] == 1 else f"{base}-{seen[base]}"
        end = boundaries[i + 1].line - 1 if i + 1 < len(boundaries) else last_line
        text = _text(lines, first_line, heading.line + 1, end, skip_h1=False)
        sections.append(Section(section_id, heading.text, heading.level, path, text,
                                heading.line, end))
        starts.append((heading.line, section_id))

    return sections, _section_lookup(starts)


def _cap_sections(sections: list[Section], limit: int | None) -> tuple[list[Section], int]:
    """The sections whose text fits ``limit`` characters in all (the last one cut at a line
    end), and how many characters were left out."""
    total = sum(len(s.text) for s in sections)
    if limit is None or total <= limit:
        return sections, 0
    kept: list[Section] = []
    room = limit
    for section in sections:
        if len(section.text) <= room:
            kept.append(section)
            room -= len(section.text)
            continue
        cut = section.text.rfind("\n", 0, room + 1)
        text = section.text[:cut if cut > 0 else room].rstrip()
        if text:
            kept.append(dataclasses.replace(section, text=text))
        break
    return kept, total - sum(len(s.text) for s in kept)


def _section_lookup(starts: list[tuple[int, str]]):
    """A function from a 1-based line to the id of the section holding it (bisection)."""
    keys = [s for s, _ in starts]

    def section_at(line: int) -> str:
        index = bisect.bisect_right(keys, line) - 1
        return starts[index][1] if index >= 0 else "lead"

    return section_at


def _text(lines: list[str], first_line: int, start: int, end: int, skip_h1: bool) -> str:
    chunk = lines[start - first_line: end - first_line + 1]
    if skip_h1:
        chunk = [ln for ln in chunk if not (ln.startswith("# ") and ln.strip() != "#")]
    return "\n".join(chunk).strip()


# A title, alias or tag is a name shown on one line (search results, graph nodes, link
# suggestions); a note under the size cap could make one 1.5 MB. Longer ones are cut, with
# a warning naming the file and field (long_names; ingest's frontmatter_warnings).
MAX_NAME_CHARS = 250


def capped_name(name: str) -> str:
    """``name`` cut to MAX_NAME_CHARS (its last character then "…"), never inside a
    character sequence: no joiner, variation selector or combining mark is left hanging."""
    if len(name) <= MAX_NAME_CHARS:
        return name
    cut = name[:MAX_NAME_CHARS - 1]
    if name[MAX_NAME_CHARS - 1] in _JOINING or unicodedata.combining(name[MAX_NAME_CHARS - 1]):
        cut = cut[:-1]          # the last character carried on into the part cut off
    while cut and (cut[-1] in _JOINING or unicodedata.combining(cut[-1])):
        cut = cut[:-1]
    return cut.rstrip() + "…"


_JOINING = "\u200d\ufe0e\ufe0f"     # zero-width joiner, text and emoji variation selectors


def long_names(frontmatter: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(field, length) of each frontmatter title, alias or tag over MAX_NAME_CHARS."""
    found = []
    for key in ("title", "aliases", "alias", "tags", "tag"):
        value = frontmatter.get(key)
        items = [value] if key == "title" else \
            frontmatter_tags({key: value}) if key in ("tags", "tag") else _as_list(value)
        longest = max((len(str(v).strip()) for v in items
                       if isinstance(v, (str, int, float)) and not isinstance(v, bool)),
                      default=0)
        if longest > MAX_NAME_CHARS:
            found.append((key, longest))
    return found


def long_name_message(key: str, length: int) -> str:
    """What is done with a frontmatter title, alias or tag ``length`` characters long."""
    what = "the title" if key == "title" else f"a name in '{key}'"
    return (f"frontmatter '{key}' holds a value of {length:,} characters, over the "
            f"{MAX_NAME_CHARS} {what} keeps; cut to its first {MAX_NAME_CHARS - 1} and '…'. "
            f"Keep names short and put the long text in the body.")


def _title(frontmatter: dict[str, Any], headings: list, path: str) -> str:
    title = frontmatter.get("title")
    if isinstance(title, (str, int, float)) and str(title).strip():
        return str(title).strip()
    for heading in headings:
        if heading.level == 1:
            return heading.text
        break
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _as_list(value: Any) -> list[Any]:
    """A scalar or a list of scalars as a list; mappings and nested lists are not names."""
    items = value if isinstance(value, (list, tuple)) else [value]
    return [v for v in items if isinstance(v, (str, int, float)) and not isinstance(v, bool)]


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.lower()
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
