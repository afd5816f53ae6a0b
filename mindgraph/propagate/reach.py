"""Which pages a fact change may reach: only pages every reader of which may read the changed
page.

A draft carries the changed page's new statement (and, in a callout, a link to that page) into
each affected page, where that page's readers read it. So with scopes configured a change on
page A reaches page B only when B may link to A under the rule the compiler and `enrich`
follow (scopes/linking.py ``readable_by_all_readers``): the same tenant, and A shared, or of
B's own scope (for a personal B, also of the agent's teams). A page of one tenant never
reaches another tenant's; a personal or team page never reaches the tenant's shared pages; a
page whose scope is undetermined (the local identity's alone) reaches only pages like it. A
correction the owner states (``--old``/``--new``: no changed page) reaches every page, as
does every change when no identities are configured.
"""

from __future__ import annotations

from typing import Mapping

from ..page.model import Page
from ..scopes.identities import Scopes
from ..scopes.linking import LinkableIndexes
from ..scopes.mapping import DocumentScope


class ChangeReach:
    """``allows(changed, target)``: may a change on page ``changed`` be drafted into page
    ``target`` (wiki-relative paths of ``pages``)?"""

    def __init__(self, scopes: Scopes, pages: Mapping[str, Page]):
        self.enabled = scopes.enabled
        self.rule = LinkableIndexes(scopes)
        self._scope: dict[str, DocumentScope | None] = {
            path: scopes.mapping.page_scope(path, page.frontmatter)
            for path, page in pages.items()} if scopes.enabled else {}

    def allows(self, changed: str, target: str) -> bool:
        """True when every reader of ``target`` may read ``changed`` ("" — a stated
        correction — reaches every page)."""
        if not self.enabled or not changed:
            return True
        if changed not in self._scope or target not in self._scope:
            return False        # a page not in this vault: no scope known, nothing reached
        return self.rule.allows(self._scope[target], self._scope[changed])


__all__ = ["ChangeReach"]
