"""Which pages a note's compiled links may point at: only pages every reader of the note sees.

The compiler links a note's mentions of other pages' titles. With scopes configured, a shared
page must not link (and so name the path of) a team's or an agent's page, and no page links
into another tenant: the title index a note is compiled with holds only the pages that all of
its readers can see — shared pages of its tenant; for a team page also that team's pages; for
a personal page also the agent's own pages and its teams' pages (from scopes.identities). A
page whose scope is unknown (seen by the local identity alone) may link anywhere.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from .identities import Scopes
from .mapping import DocumentScope


def readable_by_all_readers(source: DocumentScope | None, target: DocumentScope | None,
                            teams_of: Mapping[tuple[str, str], frozenset[str]]) -> bool:
    """May a page of scope ``source`` link to one of scope ``target``?"""
    if source is None:
        return True
    if target is None or target.tenant != source.tenant:
        return False
    if target.kind == "shared":
        return True
    if source.kind == "team":
        return target == source
    if source.kind == "personal":
        if target.kind == "personal":
            return target.owner == source.owner
        return target.owner in teams_of.get((source.tenant, source.owner), frozenset())
    return False


class LinkableIndexes:
    """Per note, the title index narrowed to what its readers see (cached per scope)."""

    def __init__(self, scopes: Scopes):
        self.scopes = scopes
        self._teams: dict[tuple[str, str], frozenset[str]] = {}
        for who in scopes.identities:
            key = (who.tenant, who.agent)
            self._teams[key] = self._teams.get(key, frozenset()) | who.teams
        self._cache: dict[tuple[int, DocumentScope | None], Any] = {}

    def allows(self, source: DocumentScope | None, target: DocumentScope | None) -> bool:
        """May a page of scope ``source`` link to one of scope ``target`` (always, when no
        identities are configured)?"""
        return not self.scopes.enabled or readable_by_all_readers(source, target, self._teams)

    def needs_frontmatter(self, raw_path: str) -> bool:
        """True when the note's scope comes from its frontmatter (parse it first)."""
        return self.scopes.enabled and self.scopes.mapping.rule_kind(raw_path) == "frontmatter"

    def for_note(self, index: Any, raw_path: str, frontmatter: Mapping[str, Any] | None,
                 narrow: Callable[[Any, set[str]], Any]) -> Any:
        """``index`` (a TitleIndex) narrowed with ``narrow(index, paths)`` to the pages a note
        at ``raw_path`` may link to; ``index`` itself when no identities are configured."""
        if not self.scopes.enabled:
            return index
        mapping = self.scopes.mapping
        source = mapping.scope_of(raw_path, frontmatter)
        if source is None:
            return index
        key = (id(index), source)
        if key not in self._cache:
            allowed = {path for path in index.entries if readable_by_all_readers(
                source, mapping.scope_of(path), self._teams)}
            self._cache[key] = narrow(index, allowed)
        return self._cache[key]


__all__ = ["LinkableIndexes", "readable_by_all_readers"]
