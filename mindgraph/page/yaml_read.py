"""Untrusted YAML (a note's frontmatter, a note's data block, a model's answer) read within
bounds: at most ``MAX_FRONTMATTER_VALUES`` values once aliases are expanded and
``MAX_FRONTMATTER_DEPTH`` levels, else a ``YAMLLimitError`` naming the field and its line.

The bounds are checked where they cost least. A text of more than ``SCAN_FIRST_CHARS`` is
first counted from libyaml's events, which stop at the first value past the budget: PyYAML
otherwise builds a node, then a Python object, of every value before any is counted (a note's
2 MB of ``kN: v`` lines, 190,000 fields, took 5.5 s to refuse). Then it is read by libyaml
(about ten times faster than PyYAML's own parser); PyYAML's own parser reads it again only
to word an error, and only a short text (a data block of those 190,000 lines took 25 s
there, a frontmatter whose last line was wrong 15 s). What is counted and when it is refused
match ``_plain``, which still bounds what aliases expand to (an alias bomb: 1 KB that expands
into billions of values)."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.events import (AliasEvent, CollectionEndEvent, CollectionStartEvent,
                         DocumentStartEvent, MappingStartEvent, NodeEvent, ScalarEvent)

MAX_FRONTMATTER_VALUES = 10_000    # a YAML alias bomb expands 1 KB into billions of values
MAX_FRONTMATTER_DEPTH = 50
SCAN_FIRST_CHARS = 16_384          # longer texts are counted from events before being read
PURE_RETRY_CHARS = 16_384          # PyYAML's own parser words an error of texts this long


class YAMLLimitError(yaml.MarkedYAMLError):
    """A YAML document past MAX_FRONTMATTER_VALUES values or MAX_FRONTMATTER_DEPTH levels:
    ``problem`` names the field and ``problem_mark.line`` (0-based) is its line, as for a
    syntax error, so callers that report those report this too."""

    def __init__(self, problem: str, line: int):
        super().__init__(problem=problem,
                         problem_mark=yaml.Mark("<yaml>", 0, line, 0, None, None))

    def __str__(self) -> str:
        return str(self.problem)


class _TooBig(Exception):
    pass


class _ConstructErrors:
    """A value that cannot be built (``!!int abc``) is a YAML error that carries its line."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)  # type: ignore[misc]
        except yaml.YAMLError:
            raise
        except Exception as exc:  # noqa: BLE001 - !!timestamp tomorrow is AttributeError, ...
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read {node.value!r} as {node.tag.rsplit(':', 1)[-1]} "
                            f"({exc})", node.start_mark) from exc


class _FrontmatterLoader(_ConstructErrors, yaml.SafeLoader):
    """PyYAML's SafeLoader, but a value that cannot be built (``!!int abc``) is a YAML error
    that carries its line, and a date that does not exist (2023-02-30) stays text."""


# libyaml's parser (when PyYAML was built with it) reads YAML ~10x faster than the pure-Python
# one, which took 80 % of parsing a compiled wiki (every page has frontmatter): 10,000 pages
# cost ~30 s of CPU before the first search. Values are built by SafeLoader's constructors
# either way; a short text libyaml refuses is read again by the pure-Python parser, so that an
# error names the same line and problem as before (libyaml's marks differ).
_FastFrontmatterLoader: type = _FrontmatterLoader
if getattr(yaml, "CSafeLoader", None) is not None:
    class _FastFrontmatterLoader(_ConstructErrors, yaml.CSafeLoader):  # type: ignore[no-redef]
        """_FrontmatterLoader on libyaml's parser."""


def _timestamp_or_text(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except Exception:  # noqa: BLE001 - 2023-02-30, !!timestamp tomorrow: text, as written
        return loader.construct_scalar(node)


for _loader in {_FrontmatterLoader, _FastFrontmatterLoader}:
    _loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_or_text)


def read_yaml(text: str, documents: bool = False) -> Any:
    """``text`` as PyYAML's safe loader builds it (every document, as a list, with
    ``documents``), read by libyaml; a YAML error of a short text is worded by PyYAML's own
    parser, of a long one by libyaml. RecursionError past libyaml's 1,000 levels."""
    def read(loader: type) -> Any:
        if documents:
            return list(yaml.load_all(text, Loader=loader))
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader

    try:
        return read(_FastFrontmatterLoader)
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):      # libyaml's limit: 1,000 levels
            raise RecursionError from None
        if len(text) > PURE_RETRY_CHARS or _FastFrontmatterLoader is _FrontmatterLoader:
            raise
        return read(_FrontmatterLoader)              # its message, or the same error


@dataclass(frozen=True)
class Crossing:
    """Where a text's values first go past the limits: the top-level field (None: the
    document is not a mapping), its 0-based line, and what is wrong with it."""

    field: str | None
    line: int
    words: str          # "is past …" / "holds … items, past …" / "nests deeper …"

    @property
    def subject(self) -> str:
        """"field 'tags'", or "the document"."""
        return f"field '{self.field}'" if self.field is not None else "the document"


@dataclass
class _Open:
    """A collection being read: a mapping or not, the nodes directly in it, whether it is
    (inside) a mapping's key (whose values ``_plain`` does not count)."""

    mapping: bool
    in_key: bool = False
    children: int = 0


def first_crossing(text: str, what: str) -> Crossing | None:
    """Where ``text``'s documents first go past MAX_FRONTMATTER_VALUES values or
    MAX_FRONTMATTER_DEPTH levels, as ``_plain`` would find it, from libyaml's events (None:
    they do not, or ``text`` is not longer than SCAN_FIRST_CHARS, which the load bounds
    cheaply). An alias counts once here: ``_plain`` still counts what it expands to. A YAML
    error met before the crossing is raised (RecursionError past libyaml's nesting limit)."""
    if len(text) <= SCAN_FIRST_CHARS:
        return None
    parser = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    events = yaml.parse(text, Loader=parser)
    counted, document_left, stack = 0, MAX_FRONTMATTER_VALUES, []
    field: tuple[str, int, int] | None = None       # key, line, values left when it began
    try:
        for event in events:
            if isinstance(event, CollectionEndEvent):
                stack.pop()
                continue
            if isinstance(event, DocumentStartEvent):
                field, document_left = None, MAX_FRONTMATTER_VALUES - counted
            if not isinstance(event, NodeEvent):
                continue
            parent = stack[-1] if stack else None
            is_key = parent is not None and (
                parent.in_key or (parent.mapping and parent.children % 2 == 0))
            if parent is not None:
                parent.children += 1
            opens = isinstance(event, CollectionStartEvent)
            if is_key:
                if len(stack) == 1 and stack[0].mapping:
                    key = event.value if isinstance(event, ScalarEvent) else "?"
                    field = (key, event.start_mark.line, MAX_FRONTMATTER_VALUES - counted)
                if opens:
                    stack.append(_Open(isinstance(event, MappingStartEvent), in_key=True))
                continue
            if parent is None and isinstance(event, ScalarEvent):
                continue        # a scalar document (an empty one is null): not counted
            counted += 1
            deep = len(stack) > MAX_FRONTMATTER_DEPTH
            if counted > MAX_FRONTMATTER_VALUES or deep:
                if opens:
                    stack.append(_Open(isinstance(event, MappingStartEvent)))
                return _crossing(events, stack, event, field, document_left, deep, what)
            if opens:
                stack.append(_Open(isinstance(event, MappingStartEvent)))
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):
            raise RecursionError from None
        raise
    return None


def _crossing(events: Any, stack: list[_Open], event: Any,
              field: tuple[str, int, int] | None, document_left: int, deep: bool,
              what: str) -> Crossing:
    """The Crossing at ``event``; the field's (or document's) own items are counted to its
    end, to say whether it alone is too long, as ``_past_limit`` says."""
    in_field = field is not None and stack and stack[0].mapping
    depth = 1 if in_field else 0
    if deep:
        return Crossing(field[0] if in_field else None, field[1] if in_field else 0,
                        _limit_words(None, 0, True, what))
    left = field[2] if in_field else document_left
    if len(stack) <= depth:         # the field's value is a scalar (or an alias)
        return Crossing(field[0] if in_field else None, field[1] if in_field else 0,
                        _limit_words(None, left, False, what,
                                     alias=isinstance(event, AliasEvent)))
    subject, open_now = stack[depth], len(stack)
    try:
        for later in events:
            if isinstance(later, CollectionEndEvent):
                open_now -= 1
                if open_now == depth:
                    break
            elif isinstance(later, NodeEvent):
                if open_now == depth + 1:
                    subject.children += 1
                if isinstance(later, CollectionStartEvent):
                    open_now += 1
    except yaml.YAMLError:
        pass                # counted so far: it is past the limit either way
    items = subject.children // 2 if subject.mapping else subject.children
    return Crossing(field[0] if in_field else None, field[1] if in_field else 0,
                    _limit_words(items, left, False, what))


def load_yaml(text: str, what: str = "a YAML answer") -> Any:
    """One YAML document of untrusted text (an LLM's answer, a note's data block) as plain
    JSON-ready values, read as frontmatter is: at most MAX_FRONTMATTER_VALUES values once
    aliases are expanded and MAX_FRONTMATTER_DEPTH levels, else a YAMLLimitError naming the
    field and its line (an alias bomb is refused in microseconds instead of expanded without
    end); ``what`` the text is, for that message ("the model's frontmatter")."""
    try:
        _refuse_crossing(text, what)
        return _plain_document(read_yaml(text), [MAX_FRONTMATTER_VALUES], text, what)
    except RecursionError:
        raise yaml.YAMLError("nested too deeply") from None


def load_yaml_documents(text: str, what: str = "a YAML block") -> list[Any]:
    """Every non-empty YAML document of ``text`` as plain JSON-ready values, read as
    frontmatter is (bad values are YAML errors with a line; at most MAX_FRONTMATTER_VALUES
    values after aliases, else a YAMLLimitError naming the field and its line)."""
    budget = [MAX_FRONTMATTER_VALUES]
    try:
        _refuse_crossing(text, what)
        return [_plain_document(d, budget, text, what)
                for d in read_yaml(text, documents=True) if d is not None]
    except RecursionError:
        raise yaml.YAMLError("nested too deeply") from None


def _refuse_crossing(text: str, what: str) -> None:
    crossing = first_crossing(text, what)
    if crossing is not None:
        raise YAMLLimitError(f"{crossing.subject} {crossing.words}", crossing.line)


def _plain_document(document: Any, budget: list[int], text: str, what: str) -> Any:
    """``_plain`` of one YAML document of ``text``; past the limits a YAMLLimitError naming
    the top-level field that went past them and its line, when the document is a mapping."""
    if not isinstance(document, dict):
        left = budget[0]
        try:
            return _plain(document, budget)
        except _TooBig as exc:
            deep = exc.args[0] == "deep"
            raise YAMLLimitError(f"the document {past_limit(document, left, deep, what)}",
                                 0) from None
    budget[0] -= 1
    plain = {}
    for key, value in document.items():
        left = budget[0]
        try:
            plain[str(key)] = _plain(value, budget, 1)
        except _TooBig as exc:
            line = key_line(text, str(key))
            raise YAMLLimitError(f"field '{key}' "
                                 f"{past_limit(value, left, exc.args[0] == 'deep', what)}",
                                 line or 0) from None
    return plain


def key_line(text: str, key: str) -> int | None:
    """The 0-based line of the top-level ``key:`` in YAML ``text``, or None."""
    pattern = re.compile(rf"""(['"]?){re.escape(key)}\1\s*:""")
    return next((i for i, line in enumerate(text.split("\n")) if pattern.match(line)), None)


def past_limit(value: Any, left: int, deep: bool, what: str) -> str:
    """What is wrong with a field past MAX_FRONTMATTER_DEPTH or the values budget (``left``
    of it when the field began), and the fix (``what``: "a note's frontmatter", "a data
    block", ...)."""
    items = len(value) if isinstance(value, (list, dict)) else None
    return _limit_words(items, left, deep, what)


def _limit_words(items: int | None, left: int, deep: bool, what: str,
                 alias: bool = False) -> str:
    """``past_limit``'s words for a field of ``items`` items (None: not a collection)."""
    if deep:
        return (f"nests deeper than {MAX_FRONTMATTER_DEPTH} levels (or holds a YAML alias of "
                f"itself). Flatten it.")
    limit = f"the {MAX_FRONTMATTER_VALUES:,}-value limit for {what}"
    elsewhere = ", or move it into the note's body" if "frontmatter" in what else ""
    if items is not None and items >= left:
        return f"holds {items:,} items, past {limit}. Shorten the list{elsewhere}."
    if items is None and not alias:
        return (f"is past {limit}: the fields up to it hold more values than that. Remove "
                f"fields{', or move some into the note' + chr(39) + 's body' if elsewhere else ''}.")
    return (f"is past {limit} once its YAML aliases (&name / *name) are expanded. Write the "
            f"values out, or shorten them.")


def _plain(value: Any, budget: list[int], depth: int = 0) -> Any:
    """A plain copy: dates become ISO strings so that frontmatter is always
    JSON-serialisable; at most ``budget[0]`` values (aliases expanded) and
    ``MAX_FRONTMATTER_DEPTH`` levels, else ``_TooBig``."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig("many")
    if depth > MAX_FRONTMATTER_DEPTH:
        raise _TooBig("deep")
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):                     # !!binary
        return value.decode("utf-8", "replace")
    if isinstance(value, (set, frozenset)):                       # !!set
        value = sorted(value, key=str)
    if isinstance(value, (list, tuple)):                          # tuples: !!pairs, !!omap
        return [_plain(v, budget, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, budget, depth + 1) for k, v in value.items()}
    return value


__all__ = ["Crossing", "MAX_FRONTMATTER_DEPTH", "MAX_FRONTMATTER_VALUES", "YAMLLimitError",
           "first_crossing", "key_line", "load_yaml", "load_yaml_documents", "past_limit",
           "read_yaml"]
