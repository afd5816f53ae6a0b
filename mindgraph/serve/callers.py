"""Who is calling: the one function every documents route (REST and MCP) takes the caller's
view from.

Until identities are configured (mindgraph/scopes/), every caller acts as the local identity,
which sees every page and writes the API's notes to raw/api-notes/.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class _LocalIdentity:
    name: str = "local"
    tenant: str = ""
    agent: str = ""
    teams: frozenset[str] = field(default_factory=frozenset)
    is_local: bool = True

    def describe(self) -> str:
        return "local (every page)"


@dataclass(frozen=True)
class _LocalView:
    identity: _LocalIdentity = _LocalIdentity()

    def sees(self, page: Any) -> bool:
        return True

    def scope_of(self, page: Any) -> None:
        return None


LOCAL_VIEW = _LocalView()


def caller_view(request: Any = None) -> Any:
    """The view of the caller of ``request`` (the local identity's, for now)."""
    return LOCAL_VIEW


__all__ = ["caller_view"]
