"""What a raw note's frontmatter says that the compiler cannot take as written, in words.

A note still compiles (bad input never stops a run); each warning names the note, the line
and what was done with the value, in the form the compiler's errors take ("note.md:3: …"):

- a frontmatter block that is never closed: its lines are compiled as body text, the opening
  '---' left out (``unclosed_opener``, ``without_opener``);
- a date key (``created``, ``date``, ``updated``, … of mindgraph.page.dates) whose value is
  no date the timeline can read: dropped from the page, never copied as if it were a date;
- ``title``, ``type``, ``tags``/``tag`` and ``aliases``/``alias`` values of the wrong kind: a
  number kept as text, a mapping (or, for names, a list inside the list) dropped;
- a title, alias or tag longer than page.parse.MAX_NAME_CHARS: cut;
- a value YAML reads as a comment (``tags: #project``): the field is empty;
- a key written twice: YAML keeps the last value.
"""

from __future__ import annotations

import re
from typing import Any, Iterator, Mapping

import yaml

from ..page.dates import CREATED_KEYS, UPDATED_KEYS, unreadable_date
from ..page.parse import MAX_NAME_CHARS, long_name_message, long_names

_SHOWN = 60
_TOP_KEY = re.compile(r"""^(['"]?)([^\s:#'"\-\[{][^:]*?)\1[ \t]*:(?:[ \t]|$)""")
_OPENER_RE = re.compile(r"\A\ufeff?---[ \t]*(?:\r?\n|\Z)")


def unclosed_opener(text: str, has_frontmatter: bool) -> bool:
    """True when ``text`` opens a frontmatter block ('---' on its first line) that its
    parse found no end of."""
    return not has_frontmatter and _OPENER_RE.match(text) is not None


def without_opener(text: str) -> str:
    """``text`` with its first line (the unclosed '---') made blank: the rest is body text,
    on the lines it has in the note."""
    return _OPENER_RE.sub("\n", text, count=1)


def unclosed_warning(path: str) -> str:
    """The warning for a note whose frontmatter is never closed."""
    return (f"{path}:1: the frontmatter's '---' is never closed, so its lines were compiled "
            f"as body text (the opening '---' left out); end the block with a '---' line.")


def field_warnings(path: str, text: str, frontmatter: Mapping[str, Any],
                   body_line: int) -> list[str]:
    """One warning per frontmatter field the compiler drops or keeps as text (see the module
    docstring); ``body_line`` is the note's first line after the block."""
    if not frontmatter:
        return []
    lines = text.lstrip("\ufeff").split("\n", body_line)[1:body_line - 1]
    out = []
    for key, value in frontmatter.items():
        what = _problem(str(key).lower(), value) if value is not None else \
            _commented_out(lines, str(key))
        if what:
            out.append(f"{path}:{_line_of(lines, str(key))}: frontmatter '{key}' {what}")
    for key, length in long_names(frontmatter):
        out.append(f"{path}:{_line_of(lines, key)}: {long_name_message(key, length)}")
    for key, at in _repeated_keys(lines).items():
        kept = frontmatter.get(key)
        shown = f" ({_shown(kept)})" if kept is not None and not isinstance(kept, dict) else ""
        out.append(f"{path}:{at[-1]}: frontmatter '{key}' is written {len(at)} times (lines "
                   f"{', '.join(map(str, at))}); only the last value{shown} is kept. Remove "
                   f"the others, or merge them into one.")
    return out


def _repeated_keys(lines: list[str]) -> dict[str, list[int]]:
    """Top-level keys the block writes more than once, with their note lines: YAML keeps the
    last value without a word (``tags`` twice: the first tags are gone)."""
    seen: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        key = _TOP_KEY.match(line)
        if key:
            seen.setdefault(key.group(2), []).append(i + 2)
    return {key: at for key, at in seen.items() if len(at) > 1}



def heading_title_warning(path: str, text: str) -> list[str]:
    """The warning for a title taken from a first heading over MAX_NAME_CHARS (cut, as a
    frontmatter title is); none when no such heading is there."""
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith("# "):
            length = len(line[2:].strip())
            if length <= MAX_NAME_CHARS:
                return []
            return [f"{path}:{number}: the first heading, the note's title, holds {length:,} "
                    f"characters, over the {MAX_NAME_CHARS} a title keeps; cut to its first "
                    f"{MAX_NAME_CHARS - 1} and '…'. Keep the heading short and put the long "
                    f"text under it."]
    return []


def _problem(key: str, value: Any) -> str:
    if value is None:
        return ""
    if key in CREATED_KEYS or key in UPDATED_KEYS:
        if unreadable_date(value):
            return (f"is not a date the timeline can read ({_shown(value)}); dropped from "
                    f"the page. Write it as YYYY-MM-DD (a year from 1900 to 2200).")
        return ""
    if key == "title":
        if isinstance(value, str):
            return ""
        if isinstance(value, (int, float)):
            return f"is {_shown(value)}, not text; kept as text. Quote it to say so."
        return (f"is {_kind(value)} ({_shown(value)}), not text; dropped (the title comes from "
                f"the first heading or the file name). Write the title as text.")
    if key == "type":
        if isinstance(value, str):
            return ""
        return (f"is {_shown(value)}, not text; dropped (the page's type is worked out from "
                f"the note). Write a type such as note, howto or reference.")
    if key in ("tags", "tag", "aliases", "alias"):
        return _names_problem(key in ("aliases", "alias"), value)
    return ""


def _names_problem(aliases: bool, value: Any) -> str:
    """For a list of names (tags, aliases): which values are kept as text, which dropped."""
    if isinstance(value, dict):
        return (f"is a mapping ({_shown(value)}), not a list of names; dropped. Write a list: "
                f"[one, two].")
    kept, dropped = [], []
    for item in _items(value, aliases):
        if isinstance(item, str):
            continue
        if isinstance(item, dict) or (aliases and (isinstance(item, (list, bool)))):
            dropped.append(item)
        elif isinstance(item, (int, float)):
            kept.append(item)
    parts = []
    if kept:
        parts.append(f"holds {', '.join(_shown(v) for v in kept)}, not text; kept as text")
    if dropped:
        parts.append(f"holds {', '.join(_shown(v) for v in dropped)}, not a name; dropped")
    if not parts:
        return ""
    return "; ".join(parts) + ". Write each name as text: [one, two]."


def _items(value: Any, aliases: bool) -> Iterator[Any]:
    """The values a list of names holds: tags flatten nested lists (an unquoted [[X]] in
    YAML), aliases take one level only (mindgraph.page.parse)."""
    if not isinstance(value, (list, tuple)):
        yield value
        return
    for item in value:
        if isinstance(item, (list, tuple)) and not aliases:
            yield from _items(item, aliases)
        elif item is not None:
            yield item


def _commented_out(lines: list[str], key: str) -> str:
    """For a field YAML read as empty because its value begins with '#' (``tags: #project``,
    as Obsidian users write tags in the text: a YAML comment), what happened and the fix;
    "" for a field left empty on purpose."""
    line = lines[_line_of(lines, key) - 2] if lines else ""
    found = re.match(rf"^['\"]?{re.escape(key)}['\"]?[ \t]*:[ \t]+(#\S.*?)\s*$", line)
    if not found:
        return ""
    value = found.group(1)
    bare = " ".join(word.lstrip("#") for word in value.split())
    return (f"is empty: '{value[:_SHOWN]}' after '{key}:' is a YAML comment, so the value "
            f"was dropped. Write it without the '#' ({key}: {bare[:_SHOWN]}) or in quotes.")


def _line_of(lines: list[str], key: str) -> int:
    """The note's line of ``key`` in its frontmatter (2 when not found: the block's first)."""
    pattern = re.compile(rf"^['\"]?{re.escape(key)}['\"]?[ \t]*:")
    for i, line in enumerate(lines):
        if pattern.match(line):
            return i + 2
    return 2


def _kind(value: Any) -> str:
    return "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) \
        else type(value).__name__


def _shown(value: Any) -> str:
    if isinstance(value, str):
        shown = value
    else:
        shown = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
        shown = shown.removesuffix("\n...").strip()
    return shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "…"
