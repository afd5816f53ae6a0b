"""`check` with scopes configured: a page no folder rule places is served to no one but the
local identity, and is reported so that someone places it."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

from ..page.check import CheckReport, Finding
from ..page.rawlines import source_paths
from ..page.model import Page
from .identities import Scopes
from .identity import LOCAL
from .view import View


def unscoped_findings(report: CheckReport, scopes: Scopes,
                      pages: Mapping[str, Page]) -> CheckReport:
    """``report`` plus one "no-scope" error per page whose tenant and scope cannot be
    determined (nothing added when no identities are configured)."""
    if not scopes.enabled:
        return report
    view = View(LOCAL, scopes.mapping)
    found = []
    for path in sorted(pages):
        page = pages[path]
        if view.scope_of(page) is not None:
            continue
        sources = source_paths(page.frontmatter)
        where = f"its raw notes ({', '.join(sources)}) lie" if len(sources) > 1 else \
            f"its raw note {sources[0]} lies" if sources else "it lies"
        found.append(Finding(
            "error", "no-scope", path, 0,
            f"no tenant and scope: {where} in no folder of scopes.folders in {scopes.source} "
            f"(or in scopes that disagree, or its frontmatter scope is missing), so only the "
            f"local identity sees it. Move the note under a tenant's personal/<agent>, "
            f"team/<team> or shared folder, or add a folder rule.",
            raw_path=sources[0] if len(sources) == 1 else ""))
    if not found:
        return report
    findings = sorted((*report.findings, *found),
                      key=lambda f: (f.severity != "error", f.path, f.line, f.kind))
    return replace(report, findings=tuple(findings))


__all__ = ["unscoped_findings"]
