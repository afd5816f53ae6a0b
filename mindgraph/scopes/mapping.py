"""Where a document belongs: its tenant and scope, from the folder its raw note lives in.

A rule is a folder pattern and a scope kind::

    {path: "{tenant}/personal/{agent}", scope: personal}   # one agent's own notes
    {path: "{tenant}/team/{team}",      scope: team}       # a team's notes
    {path: "{tenant}/shared",           scope: shared}     # every agent of the tenant
    {path: "{tenant}/inbox",            scope: frontmatter} # the note says (scope/agent/team)
    {path: "acme-wiki", tenant: acme,   scope: shared}     # a fixed tenant

A pattern matches the leading folders of the note's path (relative to raw/; a wiki page's
recorded ``sources`` path, else its own path, which mirrors it). The first rule that matches
decides. A ``frontmatter`` rule takes ``scope: personal|team|shared`` with ``agent:`` or
``team:`` from the note; the tenant always comes from the folder, never from the note. A page
no rule places (or whose sources disagree) has no scope: ``check`` reports it and only the
local identity sees it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Mapping

from ..errors import ConfigError
from ..page.rawlines import source_paths

ScopeKind = Literal["personal", "team", "shared"]
KINDS = ("personal", "team", "shared")
RULE_KINDS = (*KINDS, "frontmatter")
DEFAULT_RULES = ({"path": "{tenant}/personal/{agent}", "scope": "personal"},
                 {"path": "{tenant}/team/{team}", "scope": "team"},
                 {"path": "{tenant}/shared", "scope": "shared"})
_PLACEHOLDER = re.compile(r"^\{(tenant|agent|team)\}$")
NAME = re.compile(r"^[\w.\-]+$")

@dataclass(frozen=True)
class DocumentScope:
    """Where a document belongs: a tenant, a kind, and the agent or team it is for."""

    tenant: str
    kind: ScopeKind
    owner: str = ""             # the agent (personal), the team (team); "" for shared

    def describe(self) -> str:
        """"acme/team/search" — the folder-like name of the scope."""
        return "/".join(x for x in (self.tenant, self.kind, self.owner) if x)

@dataclass(frozen=True)
class FolderRule:
    """One rule of the mapping: folder segments (literal or placeholder) and a scope kind."""

    segments: tuple[str, ...]
    kind: str                   # one of RULE_KINDS
    tenant: str = ""            # a fixed tenant (when the path has no {tenant})

    def match(self, folders: tuple[str, ...], frontmatter: Mapping[str, Any]
              ) -> DocumentScope | None | Literal[False]:
        """The scope for a note in ``folders``: a DocumentScope, None (the rule matches but
        the scope is undetermined), or False (the rule does not apply)."""
        if len(folders) < len(self.segments):
            return False
        bound: dict[str, str] = {"tenant": self.tenant}
        for pattern, folder in zip(self.segments, folders):
            slot = _PLACEHOLDER.match(pattern)
            if slot:
                bound[slot.group(1)] = folder
            elif pattern.lower() != folder.lower():
                return False
        tenant = bound["tenant"]
        if self.kind == "personal":
            return DocumentScope(tenant, "personal", bound["agent"])
        if self.kind == "team":
            return DocumentScope(tenant, "team", bound["team"])
        if self.kind == "shared":
            return DocumentScope(tenant, "shared")
        return _from_frontmatter(tenant, frontmatter)

def _from_frontmatter(tenant: str, frontmatter: Mapping[str, Any]) -> DocumentScope | None:
    kind = _text(frontmatter.get("scope")).lower()
    if kind == "shared":
        return DocumentScope(tenant, "shared")
    owner = _text(frontmatter.get("agent" if kind == "personal" else "team"))
    if kind in ("personal", "team") and NAME.match(owner):
        return DocumentScope(tenant, kind, owner)  # type: ignore[arg-type]
    return None

def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""

@dataclass(frozen=True)
class FolderMapping:
    """The ordered folder rules; ``scope_of`` places a document."""

    rules: tuple[FolderRule, ...]

    @classmethod
    def parse(cls, entries: tuple | list, source: str) -> "FolderMapping":
        """Validate ``scopes.folders`` (default: personal/team/shared under each tenant)."""
        rules = []
        for i, entry in enumerate(entries or DEFAULT_RULES):
            where = f"{source}: scopes.folders[{i}]"
            if not isinstance(entry, dict):
                raise ConfigError(f"{where} must be a mapping like {{path: \"{{tenant}}/shared\","
                                  f" scope: shared}}.")
            unknown = sorted(set(entry) - {"path", "scope", "tenant"})
            if unknown:
                raise ConfigError(f"{where}: unknown key {unknown[0]!r}; a rule has path, scope "
                                  f"and optionally tenant. Remove it.")
            path, kind = entry.get("path"), entry.get("scope")
            tenant = entry.get("tenant", "")
            if not isinstance(path, str) or not path.strip("/"):
                raise ConfigError(f"{where}: 'path' must be a folder pattern such as "
                                  f"\"{{tenant}}/team/{{team}}\". Add it.")
            if kind not in RULE_KINDS:
                raise ConfigError(f"{where}: 'scope' is {kind!r}; it must be one of "
                                  f"{', '.join(RULE_KINDS)}. Fix it in {source}.")
            segments = tuple(p for p in path.strip("/").split("/") if p)
            slots = [m.group(1) for m in map(_PLACEHOLDER.match, segments) if m]
            needs = {"personal": "agent", "team": "team"}.get(kind)
            if ("tenant" in slots) == bool(tenant):
                which = "both" if tenant else "neither"
                raise ConfigError(f"{where}: give the tenant once — either a {{tenant}} folder "
                                  f"in 'path' or a fixed 'tenant:' — not {which}. Fix it in "
                                  f"{source}.")
            if needs and needs not in slots:
                raise ConfigError(f"{where}: a {kind} rule needs a {{{needs}}} folder in "
                                  f"'path' (e.g. \"{{tenant}}/{kind}/{{{needs}}}\"). Fix it in "
                                  f"{source}.")
            if len(slots) != len(set(slots)) or any("{" in p and not _PLACEHOLDER.match(p)
                                                    for p in segments):
                raise ConfigError(f"{where}: 'path' {path!r} may use {{tenant}}, {{agent}} and "
                                  f"{{team}} once each, as whole folder names. Fix it in "
                                  f"{source}.")
            rules.append(FolderRule(segments, kind, tenant if isinstance(tenant, str) else ""))
        return cls(tuple(rules))

    def scope_of(self, path: str, frontmatter: Mapping[str, Any] | None = None
                 ) -> DocumentScope | None:
        """The scope of the note at ``path`` (relative to raw/), or None: undetermined."""
        folders = tuple(path.replace("\\", "/").strip("/").split("/")[:-1])
        for rule in self.rules:
            found = rule.match(folders, frontmatter or {})
            if found is not False:
                return found
        return None

    def rule_kind(self, path: str) -> str | None:
        """The kind of the first rule that places ``path`` (None: no rule does)."""
        folders = tuple(path.replace("\\", "/").strip("/").split("/")[:-1])
        return next((r.kind for r in self.rules
                     if r.match(folders, {"scope": "shared"}) is not False), None)

    def folder_for(self, scope: DocumentScope) -> str | None:
        """The folder (relative to raw/) where a new note of ``scope`` goes: the first rule
        of that kind that can spell it (None: no rule can, e.g. only frontmatter rules)."""
        for rule in self.rules:
            if rule.kind != scope.kind or (rule.tenant and rule.tenant != scope.tenant):
                continue
            values = {"tenant": scope.tenant, "agent": scope.owner, "team": scope.owner}
            return "/".join(values[m.group(1)] if (m := _PLACEHOLDER.match(p)) else p
                            for p in rule.segments)
        return None

    def page_scope(self, path: str, frontmatter: Mapping[str, Any]) -> DocumentScope | None:
        """The scope of a wiki page: from the raw notes it records in ``sources`` (all must
        agree), else from its own path (a wiki page keeps its raw note's path)."""
        raw = source_paths(frontmatter)
        found = {self.scope_of(p, frontmatter) for p in raw} if raw else \
            {self.scope_of(path, frontmatter)}
        return found.pop() if len(found) == 1 else None


__all__ = ["DEFAULT_RULES", "DocumentScope", "FolderMapping", "FolderRule", "KINDS", "NAME"]
