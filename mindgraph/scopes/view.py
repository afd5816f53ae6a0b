"""What one identity may see: its own personal documents, its teams' documents and its
tenant's shared documents — nothing of another tenant, and nothing whose scope is unknown
(only the local identity sees everything)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from ..page.model import Page
from .identity import Identity
from .mapping import DocumentScope, FolderMapping


@dataclass(frozen=True)
class View:
    """One identity's view of the workspace: ``sees(page)`` answers "may it see this page"."""

    identity: Identity
    mapping: FolderMapping

    def scope_of(self, page: Page) -> DocumentScope | None:
        """The page's tenant and scope (None: undetermined)."""
        return self.mapping.page_scope(page.path, page.frontmatter)

    def sees_scope(self, scope: DocumentScope | None) -> bool:
        """May this identity see a document of ``scope``?"""
        who = self.identity
        if who.is_local:
            return True
        if scope is None or scope.tenant != who.tenant:
            return False
        if scope.kind == "personal":
            return scope.owner == who.agent
        if scope.kind == "team":
            return scope.owner in who.teams
        return True

    def sees(self, page: Page) -> bool:
        """May this identity see ``page``?"""
        return self.identity.is_local or self.sees_scope(self.scope_of(page))

    def sees_path(self, path: str, frontmatter: Mapping | None = None) -> bool:
        """May this identity see the raw note at ``path`` (relative to raw/)?"""
        return self.identity.is_local or self.sees_scope(self.mapping.scope_of(path,
                                                                                frontmatter))

    def visible(self, pages: Iterable[Page]) -> frozenset[str]:
        """The paths of the pages this identity sees."""
        return frozenset(p.path for p in pages if self.sees(p))

    @property
    def key(self) -> tuple:
        """What decides the view: identities with equal keys see the same pages."""
        who = self.identity
        return ("local",) if who.is_local else (who.tenant, who.agent, tuple(sorted(who.teams)))


__all__ = ["View"]
