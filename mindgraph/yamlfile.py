"""YAML for files people edit by hand: a key given twice in one mapping is an error.

PyYAML keeps the last of two equal keys without a word, so a second ``retrieval:`` section
further down mindgraph.yml silently replaced the first. ``load_strict`` parses like
``yaml.safe_load`` but raises ``DuplicateKeyError`` (a ``yaml.MarkedYAMLError``, so its
``problem_mark`` gives the line) at the second occurrence. Keys merged in with ``<<:`` may be
overridden, as YAML intends.
"""

from __future__ import annotations

from typing import Any

import yaml

_MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping holds the same key twice."""


class _StrictLoader(yaml.SafeLoader):
    pass


def _mapping_without_repeats(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    first_line: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            seen = key in first_line
        except TypeError:                   # an unhashable key: construct_mapping refuses it
            continue
        if seen:
            written = key_node.value if isinstance(key_node, yaml.ScalarNode) else key
            raise DuplicateKeyError(
                None, None, f"'{written}' is given twice (first at line {first_line[key] + 1}); "
                f"keep one", key_node.start_mark)
        first_line[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                              _mapping_without_repeats)


def load_strict(text: str) -> Any:
    """``yaml.safe_load`` that refuses a key repeated within one mapping."""
    return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass


def line_of(text: str, path: tuple[str | int, ...]) -> int | None:
    """The line (1-based) of the key at ``path`` in the YAML ``text`` — ("embedding",
    "model") for ``model:`` under ``embedding:``, an int for a list item — or None when the
    text does not write that key itself (absent, or only merged in with ``<<:``)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = None
    for step in path:
        if isinstance(node, yaml.SequenceNode) and isinstance(step, int) \
                and 0 <= step < len(node.value):
            node = node.value[step]
            line = node.start_mark.line
            continue
        if not isinstance(node, yaml.MappingNode):
            return None
        found = next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)
                      and k.tag != _MERGE_TAG and k.value == str(step)), None)
        if found is None:
            return None
        line, node = found[0].start_mark.line, found[1]
    return None if line is None else line + 1
