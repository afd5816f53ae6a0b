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
