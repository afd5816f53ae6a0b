"""Metadata-only write-back: replace the ``verification`` and ``evidence`` frontmatter keys.

Only the lines of those two top-level keys change. The body, every other key, their order,
quoting and comments, the line endings and a byte-order mark stay byte-identical: the text is
edited as lines, never re-dumped from parsed YAML. A key already there is replaced where it
stands; a new one goes at the end of the frontmatter (a page without frontmatter gets one).
The result is parsed again and must equal the old frontmatter plus the new keys, otherwise
nothing is written (``WritebackError`` says why).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import yaml

from ..errors import MindgraphError
from ..page.markdown import split_frontmatter
from .record import RECORD_KEYS

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # 20x faster on long records
_CLOSING = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?\n?$")
_OPENING = re.compile(r"^---[ \t]*\r?\n$")
_CONTINUATION = re.compile(r"^(?:[ \t]|-(?:[ \t]|\r?\n|$))")


class WritebackError(MindgraphError):
    """The record cannot be written without touching other bytes of the page."""


def set_record_keys(text: str, values: Mapping[str, Any], path: str = "page") -> str:
    """``text`` with each key of ``values`` (verification / evidence) set to its value, or
    removed when the value is None; every other byte unchanged."""
    unknown = set(values) - set(RECORD_KEYS)
    if unknown:
        raise WritebackError(f"write-back may only set {', '.join(RECORD_KEYS)}, "
                             f"not {', '.join(sorted(unknown))}")
    if _mapping(text) is None:
        raise WritebackError(f"{path}: the frontmatter is not a valid YAML mapping; fix it "
                             f"(`mindgraph check` shows the line) and verify again.")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom):].splitlines(keepends=True)
    closing = _closing_line(lines)
    if closing is None:
        if not any(v is not None for v in values.values()):
            return text
        newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
        block = "".join(_render(k, v, newline) for k, v in values.items() if v is not None)
        result = bom + f"---{newline}{block}---{newline}" + "".join(lines)
    else:
        newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
        head = lines[1:closing]
        for key, value in values.items():
            head = _replace(head, key, None if value is None else _render(key, value, newline))
        result = bom + lines[0] + "".join(head) + "".join(lines[closing:])
    _check(text, result, values, path)
    return result


def needs_record_keys(text: str, values: Mapping[str, Any], path: str = "page") -> bool:
    """Whether ``set_record_keys(text, values)`` would change ``text``: False when the page
    already holds these records; WritebackError as that call would raise it.

    For planning, where the records of a long page are large (every claim with its quote:
    5 MB of YAML for a 3 MB page): rendering them and parsing the result back, as the write
    does, took half of `verify`'s time. Here they are compared as parsed, and the layout of
    the other keys is checked with small stand-in records, which land on the same lines; the
    write itself (at --apply) still renders and checks the real ones."""
    old = _mapping(text)
    if old is not None and all(_normal(old.get(key)) == _normal(value)
                               for key, value in values.items()):
        return False
    stand_in = {key: None if value is None else {"status": "planned"}
                for key, value in values.items()}
    set_record_keys(text, stand_in, path)
    return True


def record_values(text: str) -> dict[str, Any]:
    """The verification and evidence mappings a page's frontmatter holds (those present)."""
    data = _mapping(text) or {}
    return {key: data[key] for key in RECORD_KEYS if key in data}


def _closing_line(lines: list[str]) -> int | None:
    if not lines or not _OPENING.match(lines[0]):
        return None
    for index in range(1, len(lines)):
        if _CLOSING.match(lines[index]):
            return index
    return None


def _replace(head: list[str], key: str, block: str | None) -> list[str]:
    """The frontmatter lines with ``key``'s lines replaced by ``block`` (or dropped)."""
    start_re = re.compile(rf"^(?:{re.escape(key)}|'{re.escape(key)}'|\"{re.escape(key)}\")"
                          rf"[ \t]*:(?:[ \t]|\r?\n|$)")
    for start, line in enumerate(head):
        if start_re.match(line):
            end = start
            probe = start + 1
            while probe < len(head):
                if not head[probe].strip():
                    probe += 1
                    continue
                if not _CONTINUATION.match(head[probe]):
                    break
                end = probe
                probe += 1
            return head[:start] + ([block] if block else []) + head[end + 1:]
    if block is None:
        return head
    if head and not head[-1].endswith("\n"):
        head = head[:-1] + [head[-1] + ("\r\n" if block.endswith("\r\n") else "\n")]
    return head + [block]


def _render(key: str, value: Any, newline: str) -> str:
    text = yaml.dump({key: value}, Dumper=_DUMPER, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=10_000)
    return text.replace("\n", newline)


def _check(old_text: str, text: str, values: Mapping[str, Any], path: str) -> None:
    old, after = _mapping(old_text), _mapping(text)
    expected = {k: v for k, v in (old or {}).items() if k not in values}
    expected.update({k: v for k, v in values.items() if v is not None})
    if after is None or _normal(after) != _normal(expected):
        raise WritebackError(f"{path}: writing {', '.join(values)} would change other "
                             f"frontmatter keys (its YAML layout is unusual, e.g. flow style "
                             f"or a key repeated); record not written. Put the frontmatter in "
                             f"block style to let verification update it.")


def _mapping(text: str) -> dict[str, Any] | None:
    """The frontmatter as YAML reads it ({} when there is none, None when it is no mapping)."""
    block, _, _ = split_frontmatter(text.removeprefix("\ufeff"))
    if block is None or not block.strip():
        return {}
    try:
        data = yaml.load(block, Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else ({} if data is None else None)


def _normal(value: Any) -> Any:
    """Values compared as YAML would read them back (tuples and lists alike)."""
    if isinstance(value, Mapping):
        return {str(k): _normal(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(v) for v in value]
    return value
