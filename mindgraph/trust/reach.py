"""Which local files a page may cite as evidence: only what every reader of the page may read.

A page's evidence is quoted into its own frontmatter (``evidence.sources[].claims[].quote``),
and whoever sees the page reads those quotes. So a file a page links to (or a raw note its
provenance names) is read only when, on the path as written and again on the file it resolves
to (symlinks):

- it lies in raw/ or wiki/: never elsewhere in the workspace (mindgraph.yml, code, ...), never
  in the state folder (``paths.state``, wherever it is), never a hidden file or folder
  (``.git``, ``.env``, ``.obsidian``) nor a configuration file (``mindgraph.yml``);
- with scopes configured, the scope of its folder (scopes/mapping.py; a wiki/ path mirrors
  its raw note's) is one every reader of the page sees: the rule the compiler and `enrich`
  follow for links (scopes/linking.py) — the page's own scope, its tenant's shared folder, and
  for a personal page the agent's teams too. A page whose scope is undetermined is served to
  the local identity alone and may cite any file of raw/ and wiki/.

A refusal is decided from the path alone, before the file is looked at, so its reason (which
the page's readers see) never tells whether a file of another scope exists.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..config import Settings
from ..scopes.identities import Scopes
from ..scopes.linking import LinkableIndexes
from ..scopes.mapping import DocumentScope

OUT_OF_SCOPE = "is not readable from this page's scope"
CONFIG_NAMES = frozenset({"mindgraph.yml", "mindgraph.yaml"})
SYMLINK = "(through a symlink)"


@dataclass(frozen=True)
class Refusal:
    """A cited file left unread: which page, its scope, the reference, where it points
    (workspace-relative, from the path as written) and why."""

    page: str
    page_scope: str          # "globex/personal/carol"; "" when scopes are off or unknown
    ref: str
    target: str              # "raw/acme/personal/alice/wifi.txt", "mindgraph.yml", ...
    target_scope: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """JSON form (for the plan's reader, the owner: never written into a page)."""
        return {"page": self.page, "page_scope": self.page_scope, "ref": self.ref,
                "target": self.target, "target_scope": self.target_scope,
                "reason": self.reason}


class EvidenceReach:
    """The workspace's folders and scopes, to decide what each page may cite."""

    def __init__(self, settings: Settings, scopes: Scopes):
        self.base = Path(settings.base_dir).resolve()
        self.raw = settings.raw_dir
        self.wiki = settings.wiki_dir
        self.state = settings.state_dir
        config = Path(settings.source)
        self.config = (config if config.is_absolute() else self.base / config).resolve() \
            if settings.source not in ("(defaults)", "(dict)") else None
        self.scopes = scopes
        self.rule = LinkableIndexes(scopes)

    def for_page(self, page_path: str, frontmatter: Mapping[str, Any] | None) -> "PageReach":
        """What the page at wiki-relative ``page_path`` may cite."""
        scope = self.scopes.mapping.page_scope(page_path, frontmatter or {}) \
            if self.scopes.enabled else None
        return PageReach(self, page_path, scope)

    def scope_at(self, path: Path) -> DocumentScope | None:
        """The scope of the file at absolute ``path`` inside raw/ or wiki/."""
        for root in (self.raw, self.wiki):
            if path.is_relative_to(root):
                return self.scopes.mapping.scope_of(path.relative_to(root).as_posix())
        return None

    def shown(self, path: Path) -> str:
        """``path`` relative to the workspace folder (absolute when it lies outside)."""
        for root in (self.base, self.raw, self.wiki):
            if path.is_relative_to(root):
                rel = path.relative_to(root).as_posix()
                return rel if root == self.base else f"{root.name}/{rel}"
        return str(path)

    def problem(self, path: Path) -> str:
        """Why no page may cite ``path`` (absolute, normalised), whatever its scope ("" when
        it is a file of raw/ or wiki/)."""
        if path.is_relative_to(self.state):
            return "lies in the state folder; not read"
        if (self.config is not None and path == self.config) or path.name in CONFIG_NAMES:
            return "is the workspace's configuration; not read"
        root = next((r for r in (self.raw, self.wiki) if path.is_relative_to(r)), None)
        if root is None:
            where = "outside raw/ and wiki/" if path.is_relative_to(self.base) else \
                "outside the workspace"
            return f"lies {where}; not read"
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            return "is a hidden file or lies in a hidden folder; not read"
        return ""


@dataclass(frozen=True)
class PageReach:
    """What one page may cite: ``refusal(path)`` is "" for a file it may read."""

    reach: EvidenceReach
    page: str
    scope: DocumentScope | None

    @property
    def scope_name(self) -> str:
        """The page's scope as a folder-like name ("" when unknown or scopes are off)."""
        return self.scope.describe() if self.scope else ""

    def refusal(self, path: Path, own: bool = False) -> str:
        """Why this page may not read the file at absolute ``path`` ("" when it may): checked
        on the path as written, then on where it resolves to. ``own``: one of the raw notes
        the page was compiled from, which decide its scope (only the folders are checked)."""
        path = Path(os.path.normpath(path))
        why = self._refusal(path, own)
        if why:
            return why
        try:
            real = path.resolve()
        except (OSError, RuntimeError):
            return ""           # the fetcher says it cannot be read
        why = self._refusal(real, own) if real != path else ""
        if not why:
            return ""
        head, colon, tail = why.partition(":")
        return f"{head} {SYMLINK}:{tail}" if colon else \
            f"{why.removesuffix('; not read')} {SYMLINK}; not read"

    def _refusal(self, path: Path, own: bool) -> str:
        why = self.reach.problem(path)
        if why or own:
            return why
        if not self.reach.rule.allows(self.scope, self.reach.scope_at(path)):
            where = f" ({self.scope_name})" if self.scope else ""
            return (f"{OUT_OF_SCOPE}{where}: a page's evidence is only what every reader of "
                    f"the page may read; not read")
        return ""

    def refused(self, ref: str, path: Path, reason: str) -> Refusal:
        """The record of a refusal, for the plan: where the file is (for a symlink, also
        where it leads) and its scope."""
        path = Path(os.path.normpath(path))
        shown = self.reach.shown(path)
        if SYMLINK in reason:
            path = path.resolve()
            shown = f"{shown} → {self.reach.shown(path)}"
        target = self.reach.scope_at(path) if self.reach.scopes.enabled else None
        return Refusal(self.page, self.scope_name, ref, shown,
                       target.describe() if target else "", reason)


__all__ = ["EvidenceReach", "OUT_OF_SCOPE", "PageReach", "Refusal", "SYMLINK"]
