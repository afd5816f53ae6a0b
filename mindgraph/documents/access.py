"""Where a caller may write and what it may delete, from its view (scopes.View: an identity
and the folder mapping).

The folder of a scope is the mapping read backwards: the first rule of that kind whose folder,
filled in with the caller's tenant, agent or team, places a note back in exactly that scope
(so an earlier rule that would claim the folder is respected). The local identity (no tenant)
writes to raw/ itself. Writing: one's own personal folder, a team one belongs to, one's
tenant's shared folder. Deleting: the same, and only notes the API created.
"""

from __future__ import annotations

from typing import Any

from .errors import Refused
from .files import API_FOLDER

WRITABLE = ("personal", "team", "shared")


def write_folder(view: Any, kind: str | None, team: str | None) -> tuple[str, Any]:
    """(raw-relative folder of the API's notes, the scope they get) for ``view``'s identity
    writing to ``kind`` (default personal; ``team`` names the team)."""
    who = view.identity
    if who.is_local:
        return API_FOLDER, None
    kind = kind or ("team" if team else "personal")
    if kind not in WRITABLE:
        raise Refused(f"scope must be one of {', '.join(WRITABLE)}, not {kind!r}.")
    if kind == "team":
        teams = ", ".join(sorted(who.teams)) or "you belong to none"
        if not team:
            raise Refused(f"scope 'team' needs 'team': the name of one of your teams ({teams}).")
        if team not in who.teams:
            raise Refused(f"you may write only to your own teams ({teams}); '{team[:100]}' is "
                          f"not one of them.")
    elif team:
        raise Refused(f"'team' is given only with scope 'team' (scope is {kind}).")
    owner = {"personal": who.agent, "team": team, "shared": ""}[kind]
    wanted = (who.tenant, kind, owner or "")
    mapping = view.mapping
    for rule in mapping.rules:
        if rule.kind != kind or (rule.tenant and rule.tenant != who.tenant):
            continue
        values = {"{tenant}": who.tenant, "{agent}": owner, "{team}": owner}
        folder = "/".join(values.get(part, part) for part in rule.segments)
        placed = mapping.scope_of(f"{folder}/{API_FOLDER}/note.md")
        if placed is not None and (placed.tenant, placed.kind, placed.owner or "") == wanted:
            return f"{folder}/{API_FOLDER}", placed
    raise Refused(f"the folder mapping (scopes.folders) has no {kind} folder for "
                  f"{who.describe()}; add a rule for it to write there.")


def may_change(view: Any, scope: Any) -> str | None:
    """Why ``view``'s identity may not delete a note of ``scope`` (None: it may)."""
    who = view.identity
    if who.is_local:
        return None
    if scope is None:
        return "its scope cannot be determined, so only the local identity may delete it"
    if scope.tenant != who.tenant:
        return "it is not in your scope"
    if scope.kind == "personal" and scope.owner != who.agent:
        return "it is another agent's personal note"
    if scope.kind == "team" and scope.owner not in who.teams:
        return "it belongs to a team you are not in"
    return None


def link_refused(source: Any, target: Any) -> str | None:
    """Why a manual link from a document of scope ``source`` to one of ``target`` may not be
    made (None: it may). The link is written into the source page, so everyone who reads the
    source must be able to see the target too; and links never cross tenants."""
    if source is None:              # only the local identity reads it, and it sees all
        return None
    if target is None:
        return "the target has no scope, so no reader of the source could see it"
    if source.tenant != target.tenant:
        return "links never cross tenants"
    if source.kind == "personal" or target.kind == "shared":
        return None
    if source.kind == "team" and target.kind == "team" and source.owner == target.owner:
        return None
    return (f"the link would show a {target.kind} document to every reader of a "
            f"{source.kind} one; link from the narrower document to the wider one "
            f"(personal → team → shared)")


def tenant_folders(view: Any, raw_paths: list[str]) -> list[str] | None:
    """The raw folders of ``view``'s tenant that hold notes (None: the whole of raw/, for the
    local identity); a rescan compiles only these."""
    who = view.identity
    if who.is_local:
        return None
    found: set[str] = set()
    for rule in view.mapping.rules:
        if rule.tenant and rule.tenant != who.tenant:
            continue
        prefix = []
        for part in rule.segments:
            if part == "{tenant}":
                prefix.append(who.tenant)
                break
            if part.startswith("{"):
                break
            prefix.append(part)
        folder = "/".join(prefix)
        if folder and any(p.startswith(folder + "/") for p in raw_paths):
            found.add(folder)
    return sorted(found)


__all__ = ["link_refused", "may_change", "tenant_folders", "write_folder"]
