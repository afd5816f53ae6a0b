"""The query string of a REST request, checked before any handler runs: each key a parameter
of the route (or an old name of one, rest_aliases.py), each given once. Anything else is a
422 naming the keys: a misspelt filter (``/lint?rules=…``, ``/search?limt=5``) silently
ignored would answer a question nobody asked."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from .rest_aliases import OLD_NAMES
from .rest_errors import AppError

_KNOWN: dict[int, frozenset[str]] = {}       # id(route) → its query parameters' names


def known_keys(request: Request) -> frozenset[str]:
    """The query keys the matched route declares (their aliases), its old names included."""
    route = request.scope.get("route")
    if route is None or not hasattr(route, "dependant"):
        return frozenset(request.query_params)
    found = _KNOWN.get(id(route))
    if found is None:
        declared = set(_query_names(route.dependant))
        old = OLD_NAMES.get(getattr(route, "path", ""), {})
        found = _KNOWN[id(route)] = frozenset(declared | {k.decode() for k in old})
    return found


def _query_names(dependant: Any) -> list[str]:
    """The query keys of a dependant and of its dependencies, all the way down."""
    names = [p.alias for p in dependant.query_params]
    for sub in dependant.dependencies:
        names += _query_names(sub)
    return names


async def checked_query_keys(request: Request) -> None:
    """Refuse a query key given twice (which value counts would be a guess) or one the route
    does not have (422, naming them and the keys it has)."""
    seen: set[str] = set()
    keys = [key for key, _ in request.query_params.multi_items()]
    repeated = sorted({key for key in keys if key in seen or seen.add(key)})
    if repeated:
        raise AppError(422, "ValidationError",
                       f"give each query parameter once ({', '.join(repeated)} came more than "
                       f"once).")
    known = known_keys(request)
    unknown = sorted(set(keys) - known)
    if unknown:
        path = request.scope.get("route").path if request.scope.get("route") else request.url.path
        raise AppError(422, "ValidationError",
                       f"{path} has no query parameter {', '.join(unknown)}; its parameters: "
                       f"{', '.join(sorted(known)) or 'none'}.")


__all__ = ["checked_query_keys", "known_keys"]
