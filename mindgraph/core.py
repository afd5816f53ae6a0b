"""The composition root: one object that wires settings, stores, providers and engines.

Only the entry points (CLI, REST, MCP) build a ``Mindgraph``; everything below receives what
it needs through arguments. The object keeps derived state warm between calls (a server
holds one for its lifetime) and refreshes it from disk when wiki files change, under a lock,
so concurrent requests never see a half-updated index.
"""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from typing import Any

from .config import Settings, load_settings
from .coverage.report import CoverageReport, measure_coverage
from .coverage.units import DEFAULT_EXCLUDES, discover_units
from .errors import NotFoundError
from .page.address import page_url
from .page.check import CheckReport, check_vault
from .page.data import extract_data
from .page.lookup import find_page
from .page.model import Page, Section
from .page.vault import Vault, load_vault
from .timeline.build import Timeline, build_timeline
from .usage import UsageLog


class Mindgraph:
    """A workspace: raw notes, the compiled wiki and everything derived from them."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._lock = threading.RLock()
        self._vault: Vault | None = None

    @classmethod
    def open(cls, base_dir: str | Path = ".", config: str | Path | None = None) -> "Mindgraph":
        """Load settings from ``base_dir``/mindgraph.yml (or ``config``) and wire everything."""
        return cls(load_settings(base_dir, config))

    @property
    def usage_log(self) -> UsageLog:
        """Where queries are logged (serve.usage_log under the state folder; "" = off)."""
        name = self.settings.serve.usage_log
        return UsageLog(self.settings.state_dir / name if name else None,
                        max_bytes=self.settings.serve.usage_log_max_bytes)

    # -- pages ---------------------------------------------------------------------------
    def vault(self) -> Vault:
        """The parsed wiki (loaded once, reloaded by ``refresh``)."""
        with self._lock:
            if self._vault is None:
                self._vault = load_vault(self.settings.wiki_dir)
            return self._vault

    def refresh(self) -> None:
        """Forget derived state so the next call re-reads the wiki."""
        with self._lock:
            self._vault = None

    def page(self, name: str) -> Page:
        """A page by path, title, alias or file name (NotFoundError with suggestions)."""
        return find_page(self.vault().pages, name)

    def section(self, name: str, section_id: str) -> tuple[Page, Section]:
        """One section of a page."""
        page = self.page(name)
        section = page.section(section_id)
        if section is None:
            ids = ", ".join(s.id for s in page.sections) or "none"
            raise NotFoundError(f"{page.path} has no section '{section_id}'. Sections: {ids}.")
        return page, section

    def extract(self, name: str, block: int = 1, language: str | None = None) -> Any:
        """The parsed fenced json/yaml data block of a page."""
        return extract_data(self.page(name), block, language)

    def url(self, name: str) -> str:
        """A stable address for a page (obsidian:// in an Obsidian vault, else file://)."""
        return page_url(self.settings.wiki_dir, self.page(name).path)

    def links(self, name: str) -> dict[str, Any]:
        """Outgoing links with their resolution, and backlinks."""
        vault = self.vault()
        page = self.page(name)
        outgoing = []
        for link in page.links:
            result = vault.resolve(link, page.path)
            outgoing.append({"target": link.target, "heading": link.heading,
                             "block": link.block, "line": link.line, "syntax": link.syntax,
                             "relation": link.relation, "status": result.status,
                             "page": result.target,
                             "candidates": [] if result.status == "resolved"
                             else list(result.candidates)})
        backlinks = [{"page": src.path, "line": link.line, "section": link.section_id,
                      "relation": link.relation}
                     for src, link, result in vault.resolved_links()
                     if result.status == "resolved" and result.target == page.path
                     and src.path != page.path]
        return {"page": page.path, "outgoing": outgoing, "backlinks": backlinks}

    # -- reports -------------------------------------------------------------------------
    def check(self) -> CheckReport:
        """Lint the wiki."""
        return check_vault(self.vault())

    def coverage(self, codebase: str | Path, *, service_level: bool = False,
                 excludes: tuple[str, ...] = (), default_excludes: bool = True,
                 min_mentions: int = 1) -> CoverageReport:
        """How much of ``codebase`` the wiki refers to."""
        patterns = tuple(excludes) + (DEFAULT_EXCLUDES if default_excludes else ())
        units = discover_units(Path(codebase), patterns, service_level)
        return measure_coverage(units, self.vault().pages.values(), codebase=str(codebase),
                                level="service" if service_level else "module",
                                min_mentions=min_mentions)

    def timeline(self, concept: str, *, since: dt.date | None = None,
                 until: dt.date | None = None, newest_first: bool = False,
                 limit: int | None = None, use_git: bool = True) -> Timeline:
        """Dated notes (raw and wiki) that mention ``concept``, in date order."""
        return build_timeline(concept, [("raw", self.settings.raw_dir),
                                        ("wiki", self.settings.wiki_dir)],
                              since=since, until=until, newest_first=newest_first,
                              limit=limit, use_git=use_git)
