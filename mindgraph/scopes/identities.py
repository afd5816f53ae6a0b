"""The ``scopes:`` section of mindgraph.yml → identities, their tokens and the folder mapping.

    scopes:
      identities:
        - {name: alice, tenant: acme, agent: alice, teams: [search], token_env: MG_TOKEN_ALICE}
      folders:                  # optional; these three are the default
        - {path: "{tenant}/personal/{agent}", scope: personal}
        - {path: "{tenant}/team/{team}", scope: team}
        - {path: "{tenant}/shared", scope: shared}
      local: ""                 # who the CLI and stdio MCP act as ("": everything)

A token is never written in the file: ``token_env`` names the environment variable that holds
it, read when a server starts (``Scopes.tokens``). A token shorter than 32 characters, or the
same token for two identities (the server's ``serve.token_env`` included), is a ConfigError
naming the file and the fix. No identities configured: scoping is off and every caller is the
local identity, as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..config import Settings
from ..errors import ConfigError
from .identity import LOCAL, Identity
from .mapping import NAME, FolderMapping

MIN_TOKEN_CHARS = 32
TOKEN_RECIPE = "python -c 'import secrets; print(secrets.token_urlsafe(32))'"


def token_problem(token: str) -> str | None:
    """What makes ``token`` unfit for a bearer token ("has 5 characters"), or None."""
    if len(token) < MIN_TOKEN_CHARS:
        return f"has {len(token)} character{'s' if len(token) != 1 else ''}"
    if any(c.isspace() or not c.isprintable() for c in token):
        return ("has spaces or unprintable characters, which a client cannot send in an "
                "Authorization header")
    return None
_KEYS = ("name", "tenant", "agent", "teams", "token_env")


@dataclass(frozen=True)
class Scopes:
    """Every configured identity, the folder mapping, and who the local identity is."""

    identities: tuple[Identity, ...] = ()
    token_envs: Mapping[str, str] = field(default_factory=dict)   # identity name → variable
    mapping: FolderMapping = field(default_factory=lambda: FolderMapping(()))
    local: Identity = LOCAL
    source: str = "(defaults)"

    @property
    def enabled(self) -> bool:
        """True when identities are configured (else everyone is the local identity)."""
        return bool(self.identities)

    def identity(self, name: str) -> Identity | None:
        """The configured identity called ``name``."""
        return next((i for i in self.identities if i.name == name), None)

    def tokens(self, server_token: tuple[str, str] | None = None,
               environ: Mapping[str, str] | None = None) -> dict[str, Identity]:
        """Token → identity, read from the environment (ConfigError naming the variable, the
        file and the fix for a token unset, short or reused). ``server_token`` is the
        (variable, token) of ``serve.token_env``: it stands for the local identity."""
        environ = os.environ if environ is None else environ
        found: dict[str, Identity] = {}
        owner: dict[str, str] = {}
        entries = [(i, self.token_envs[i.name]) for i in self.identities]
        pairs: list[tuple[Identity, str, str]] = []
        for identity, variable in entries:
            token = environ.get(variable, "")
            if not token:
                raise ConfigError(f"{self.source}: identity {identity.name!r} reads its token "
                                  f"from {variable}, which is not set. Export it (export "
                                  f"{variable}=$({TOKEN_RECIPE})) or remove the identity.")
            pairs.append((identity, variable, token))
        if server_token is not None:
            pairs.append((LOCAL, server_token[0], server_token[1]))
        for identity, variable, token in pairs:
            problem = token_problem(token)
            if problem is not None:
                raise ConfigError(f"{self.source}: the token in {variable} (identity "
                                  f"{identity.name!r}) {problem}; use at least "
                                  f"{MIN_TOKEN_CHARS} random printable ones, e.g. export "
                                  f"{variable}=$({TOKEN_RECIPE}).")
            if token in found:
                raise ConfigError(f"{self.source}: identities {found[token].name!r} "
                                  f"({owner[token]}) and {identity.name!r} ({variable}) have "
                                  f"the same token; a token names one identity. Give each its "
                                  f"own: export {variable}=$({TOKEN_RECIPE}).")
            found[token], owner[token] = identity, variable
        return found


def load_scopes(settings: Settings) -> Scopes:
    """Validate ``settings.scopes`` (ConfigError naming the file, the entry and the fix)."""
    cfg, source = settings.scopes, settings.source
    identities: list[Identity] = []
    envs: dict[str, str] = {}
    for i, entry in enumerate(cfg.identities):
        identity, variable = _identity(entry, f"{source}: scopes.identities[{i}]", source)
        if identity.name in envs or identity.name == LOCAL.name:
            raise ConfigError(f"{source}: scopes.identities[{i}]: the name {identity.name!r} is "
                              f"{'reserved' if identity.name == LOCAL.name else 'used twice'}; "
                              f"give each identity its own name.")
        repeated = [n for n, v in envs.items() if v == variable]
        if repeated:
            raise ConfigError(f"{source}: identities {repeated[0]!r} and {identity.name!r} "
                              f"both read their token from {variable}; a token names one "
                              f"identity. Give {identity.name!r} its own token_env.")
        identities.append(identity)
        envs[identity.name] = variable
    mapping = FolderMapping.parse(cfg.folders, source)
    local = LOCAL
    if cfg.local:
        named = next((x for x in identities if x.name == cfg.local), None)
        if named is None:
            known = ", ".join(x.name for x in identities) or "none configured"
            raise ConfigError(f"{source}: scopes.local is {cfg.local!r}, which is not an "
                              f"identity ({known}). Name one of scopes.identities, or leave "
                              f"it empty for the owner who sees everything.")
        local = named
    return Scopes(tuple(identities), envs, mapping, local, source)


def _identity(entry: Any, where: str, source: str) -> tuple[Identity, str]:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a mapping with {', '.join(_KEYS)}.")
    unknown = sorted(set(entry) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(_KEYS)}). "
                          f"Tokens are never written here: name their variable in token_env.")
    values: dict[str, str] = {}
    for key in ("name", "tenant", "agent", "token_env"):
        value = entry.get(key, entry.get("name") if key == "agent" else None)
        if not isinstance(value, str) or not NAME.match(value):
            raise ConfigError(f"{where}: '{key}' must be a name (letters, digits, . _ -), got "
                              f"{value!r}. Fix it in {source}.")
        values[key] = value
    teams = entry.get("teams", [])
    if isinstance(teams, str):
        teams = [teams]
    if not isinstance(teams, list) or not all(isinstance(t, str) and NAME.match(t)
                                              for t in teams):
        raise ConfigError(f"{where}: 'teams' must be a list of team names, got {teams!r}. "
                          f"Fix it in {source}.")
    return (Identity(values["name"], values["tenant"], values["agent"], frozenset(teams)),
            values["token_env"])


__all__ = ["MIN_TOKEN_CHARS", "Scopes", "TOKEN_RECIPE", "load_scopes"]
