"""A link edge's attributes, held compactly: a read-only mapping over one tuple of values.

At 100,000 notes the graph holds 1,020,000 link edges; as dictionaries (the edge's, a list of
sources, a dictionary per source) they took ~530 bytes each, 0.5 GB of a `serve` process's
memory. ``EdgeData`` keeps the values in a tuple beside a key tuple shared by every edge of its
shape, and each source as a tuple (its keys ``SOURCE_KEYS``), ~260 bytes an edge. Reading it
is reading a dictionary: ``data["kind"]``, ``data.get("label")``, ``data.items()``, equality
with a dict; ``data["sources"]`` gives a new list of dictionaries each time.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

SOURCE_KEYS = ("line", "syntax", "section", "heading", "target", "rule")

_SHAPES: dict[tuple[str, ...], tuple[str, ...]] = {}


class EdgeData(Mapping):
    """The attributes of one edge (read-only)."""

    __slots__ = ("_keys", "_values")

    def __init__(self, keys: tuple[str, ...], values: tuple[Any, ...]):
        self._keys = _SHAPES.setdefault(keys, keys)   # one key tuple per shape of edge
        self._values = values

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> "EdgeData":
        """The compact form of an edge's attribute dictionary (sources as tuples)."""
        keys = tuple(data)
        values = tuple(
            tuple(tuple(source[k] for k in SOURCE_KEYS) for source in value)
            if key == "sources" else value for key, value in data.items())
        return cls(keys, values)

    def __getitem__(self, key: str) -> Any:
        try:
            value = self._values[self._keys.index(key)]
        except ValueError:
            raise KeyError(key) from None
        if key == "sources":
            return [dict(zip(SOURCE_KEYS, source)) for source in value]
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __repr__(self) -> str:
        return repr(dict(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (EdgeData, (self._keys, self._values))
