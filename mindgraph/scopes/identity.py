"""Who is asking: an identity is a tenant, an agent and the teams the agent belongs to.

An identity is only ever taken from configuration: the server maps an authenticated bearer
token to one (scopes/auth.py); the CLI and stdio MCP act as the configured local identity.
The built-in ``LOCAL`` identity (the workspace's owner at the keyboard) sees every page, and
is the only one that sees pages whose scope cannot be determined.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .mapping import DocumentScope


@dataclass(frozen=True)
class Identity:
    """A caller: ``name`` (from the config), ``tenant``, ``agent`` and its ``teams``."""

    name: str
    tenant: str = ""
    agent: str = ""
    teams: frozenset[str] = field(default_factory=frozenset)
    is_local: bool = False      # the workspace owner: sees everything, every tenant

    def describe(self) -> str:
        """"alice (tenant acme, agent alice, teams search, ops)" for messages and logs."""
        if self.is_local:
            return f"{self.name} (local: every page)"
        teams = ", ".join(sorted(self.teams)) or "none"
        return f"{self.name} (tenant {self.tenant}, agent {self.agent}, teams {teams})"

    def personal_scope(self) -> "DocumentScope":
        """The scope of this identity's own personal documents."""
        from .mapping import DocumentScope
        return DocumentScope(self.tenant, "personal", self.agent)


LOCAL = Identity(name="local", is_local=True)

__all__ = ["Identity", "LOCAL"]
