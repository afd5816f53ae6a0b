"""The frontmatter of a compiled page as YAML: the plain shapes written here, the rest by PyYAML.

Every compiled page's frontmatter went through ``yaml.dump`` (libyaml's emitter), ~90 µs a
page in the compile's workers, for mappings that are nearly always the same plain shapes:
strings, booleans, integers, lists of strings and the provenance record. ``dump`` writes
those directly and gives back exactly what ``yaml.dump`` writes with the page's options
(block style, keys in their order, unicode as is, width 10,000); any value it is not sure of
(a string YAML would quote, a float, a date, a shared list that would get an anchor, a long
or odd key) sends the whole mapping to PyYAML. tests/ingest/test_frontmatter_yaml.py checks the
two agree over many shapes.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import yaml
from yaml.nodes import ScalarNode

# libyaml's emitter when present (5x faster); its output matches the pure-Python one here.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_STR_TAG = "tag:yaml.org,2002:str"
_RESOLVE = yaml.resolver.Resolver().resolve   # how a plain scalar would read back
_RESOLVED_FIRST = frozenset(yaml.resolver.Resolver.yaml_implicit_resolvers)  # may read as not str
MAX_PLAIN = 2_000       # longer strings: PyYAML (a plain line folds past the width)
MAX_KEY_BYTES = 120     # libyaml writes a key over 128 bytes as a complex key ("? ")

# A character libyaml does not write as is, in single quotes either (controls, NEL, NBSP, the
# line and paragraph separators, BOM, surrogates, U+FFFE/F, and past U+FFFF, which libyaml
# escapes: an emoji is written "\U0001F600"): PyYAML then.
_SPECIAL = re.compile(
    r"[\x00-\x1f\x7f-\xa0\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff\U00010000-\U0010ffff]")
# What makes it quote a string in block context (libyaml's analyze_scalar: an indicator first,
# a "- ", "? " or ": " first, a document marker, ": " or " #" inside, a space at either end;
# and, below, a string that would read back as another type).
_QUOTED = re.compile(r"\A[#,\[\]{}&*!|>'\"%@`]|\A[-?:](?: |\Z)|\A---|\A\.\.\.|: |:\Z| #|\A | \Z")
_NOT_PLAIN = re.compile(f"{_SPECIAL.pattern}|{_QUOTED.pattern}")
_WRITTEN: dict[str, str | None] = {}    # string → as written: keys and common values repeat


def dump(meta: Mapping[str, Any]) -> str:
    """``meta`` as ``yaml.dump`` writes it for a page's frontmatter."""
    lines: list[str] = []
    if meta and _mapping(meta, "", lines, set()):
        return "".join(lines)
    return yaml.dump(dict(meta), Dumper=_DUMPER, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=10_000)


def _string(text: str) -> str | None:
    """``text`` as YAML writes it (plain, else in single quotes), or None: PyYAML's to say."""
    written = _WRITTEN.get(text, "")
    if written != "":
        return written
    if len(text) > MAX_PLAIN or _SPECIAL.search(text):
        written = None
    elif text and not _NOT_PLAIN.search(text) and (
            text[0] not in _RESOLVED_FIRST or _RESOLVE(ScalarNode, text, (True, False)) == _STR_TAG):
        written = text
    else:
        written = "'" + text.replace("'", "''") + "'"
    if len(_WRITTEN) < 10_000:
        _WRITTEN[text] = written
    return written


def _scalar(value: Any) -> str | None:
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if kind is int:
        return str(value)
    return None         # float, dates, bytes, …: PyYAML's representers


def _mapping(mapping: Mapping[str, Any], indent: str, lines: list[str], seen: set[int],
             first: str | None = None) -> bool:
    """Append a block mapping's lines (the first after ``first``, a list item's "- ")."""
    for key, value in mapping.items():
        name = _string(key) if type(key) is str else None
        if name is None or name[0] == "'" or len(name.encode("utf-8")) > MAX_KEY_BYTES:
            return False        # a quoted or long key: PyYAML
        lead = first if first is not None else indent
        first = None
        if not _entry(f"{lead}{name}:", value, indent, lines, seen):
            return False
    return True


def _entry(head: str, value: Any, indent: str, lines: list[str], seen: set[int],
           item: bool = False) -> bool:
    """Append ``head`` (``key:``, or ``-`` for a list ``item``) and its value, at ``indent``."""
    kind = type(value)
    if kind is list or kind is dict:
        if id(value) in seen:
            return False        # the same list or dict twice: PyYAML writes an anchor
        seen.add(id(value))
        if not value:
            lines.append(f"{head} {'[]' if kind is list else '{}'}\n")
            return True
        if kind is dict:
            if item:
                return _mapping(value, indent + "  ", lines, seen, first=f"{head} ")
            lines.append(head + "\n")
            return _mapping(value, indent + "  ", lines, seen)
        if item:
            return False        # a list in a list: PyYAML
        lines.append(head + "\n")
        for element in value:
            if not _entry(f"{indent}-", element, indent, lines, seen, item=True):
                return False
        return True
    scalar = _scalar(value)
    if scalar is None:
        return False
    lines.append(f"{head} {scalar}\n")
    return True
