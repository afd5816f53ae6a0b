"""Batches for LLM calls that never mix audiences.

One call reads every page in its batch, so a page's text can steer what the model writes about
the others (a prompt injection in one tenant's note rewriting another tenant's summary). With
scopes configured, a batch holds only items of one audience: pages of one scope, pairs of one
pair of scopes.
"""

from __future__ import annotations

from typing import Callable, Hashable, Iterator, Sequence, TypeVar

T = TypeVar("T")


def batches(items: Sequence[T], size: int, audience: Callable[[T], Hashable]) -> Iterator[list[T]]:
    """``items`` in batches of at most ``size``, each of one audience (groups in the order
    their first item comes, items in their order)."""
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(audience(item), []).append(item)
    for group in groups.values():
        for start in range(0, len(group), size):
            yield group[start:start + size]


__all__ = ["batches"]
