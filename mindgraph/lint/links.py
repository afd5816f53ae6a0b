"""Links to no page, for the opt-in rule ``unresolved-link``.

`check` owns link rules: a link that resolves to no page is its ``broken-link`` error (a
warning with ``check.unresolved_links: warning``), and
`graph broken` lists it. Obsidian, though, keeps such a link as a placeholder (a click creates
the note), and vaults use them on purpose, so `lint` does not report them unless asked
(``--rule unresolved-link``); its default run says how many there are in a note instead of
nothing. Both come from `check`'s own resolution, so the three never disagree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..page.check import unresolved_links
from ..page.vault import Vault
from .findings import LintFinding, section_at

RULE = "unresolved-link"


def unresolved_link_findings(vault: Vault, raw_dir: Path, raw_label: str = "raw"
                             ) -> Iterator[LintFinding]:
    """One finding per link to no page, at its wiki page and line; a compiled page's fix
    names the raw note and line where the link is written."""
    raw_label = raw_label.rstrip("/") or "raw"
    for finding, fix in unresolved_links(vault, raw_dir):
        page = vault.pages[finding.path]
        message = finding.message.removesuffix(f" {fix}")
        where = f" in {finding.location(raw_label)}" if finding.raw_path else ""
        yield LintFinding(
            RULE, finding.path, section_at(page, finding.line), finding.line, message,
            f"{fix.rstrip('.')}{where}; a placeholder you mean to write later can stay "
            f"(Obsidian creates the note when it is clicked).")


def unresolved_link_note(vault: Vault, raw_dir: Path, raw_label: str = "raw",
                         severity: str = "error") -> str | None:
    """What a default `lint` run (the rule not asked for) says of the links to no page;
    ``severity``: what `check` counts them as (check.unresolved_links)."""
    found = list(unresolved_links(vault, raw_dir))
    if not found:
        return None
    first = found[0][0]
    return (f"{len(found)} link(s) point to no page, first {first.location(raw_label)} "
            f"({first.message.split(' points to no page', 1)[0]}): Obsidian keeps them as "
            f"placeholders, `mindgraph check` counts them as broken-link {severity}s; `mindgraph "
            f"lint --rule {RULE}` (or `mindgraph graph broken`) lists them.")

