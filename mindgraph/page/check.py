"""Lint a vault: broken and ambiguous links, pages nothing links to, missing frontmatter, duplicate titles.

Errors are defects a reader hits (a link that goes nowhere or could go to several pages, a
file that cannot be read); warnings are structure worth a look (no backlinks, no frontmatter,
two pages with one title).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Literal

from .vault import Vault

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One problem at a place: file, line (0 when not about a line), and how to fix it."""

    severity: Severity
    kind: str
    path: str
    line: int
    message: str

    def location(self) -> str:
        """"path:line" or "path"."""
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class CheckReport:
    """Everything `mindgraph check` found."""

    pages: int
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    @property
    def errors(self) -> list[Finding]:
        """Findings of severity error."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        """Findings of severity warning."""
        return [f for f in self.findings if f.severity == "warning"]

    def counts(self) -> dict[str, int]:
        """Number of findings per kind."""
        counts: dict[str, int] = defaultdict(int)
        for finding in self.findings:
            counts[finding.kind] += 1
        return dict(sorted(counts.items()))

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {"pages": self.pages, "errors": len(self.errors), "warnings": len(self.warnings),
                "counts": self.counts(), "findings": [asdict(f) for f in self.findings]}


def check_vault(vault: Vault) -> CheckReport:
    """Run every check over ``vault``."""
    findings: list[Finding] = []
    for problem in vault.problems:
        findings.append(Finding("error", problem.kind, problem.path, problem.line,
                                problem.message))
    incoming: dict[str, int] = defaultdict(int)
    for page, link, result in vault.resolved_links():
        shown = f"[[{link.target}]]" if link.syntax != "markdown" else f"({link.target})"
        if result.status == "resolved" and result.target != page.path:
            incoming[result.target] += 1
        elif result.status == "missing":
            hint = (f" A page has it as an alias: link [[{_stem(result.candidates[0])}|"
                    f"{link.target}]] instead." if result.candidates else
                    " Create the page or fix the link's spelling.")
            findings.append(Finding("error", "broken-link", page.path, link.line,
                                    f"{shown} points to no page.{hint}"))
        elif result.status == "ambiguous":
            findings.append(Finding("error", "ambiguous-link", page.path, link.line,
                                    f"{shown} matches {len(result.candidates)} pages "
                                    f"({', '.join(result.candidates)}); write the folder path, "
                                    f"e.g. [[{result.candidates[0][:-3]}]]."))
    titles: dict[str, list[str]] = defaultdict(list)
    for path in sorted(vault.pages):
        page = vault.pages[path]
        titles[page.title.lower()].append(path)
        if not page.has_frontmatter and page.body.split("\n", 1)[0].rstrip() == "---":
            findings.append(Finding("warning", "unclosed-frontmatter", path, 1,
                                    "the frontmatter's '---' is never closed, so it is read as "
                                    "text; end the block with a '---' line."))
        elif not page.has_frontmatter:
            findings.append(Finding("warning", "no-frontmatter", path, 0,
                                    "page has no frontmatter; add a '---' block with at least "
                                    "a title (mindgraph ingest writes one)."))
        if incoming[path] == 0 and len(vault.pages) > 1:
            # not "orphan": `graph orphans` means no links at all, in or out (Obsidian's sense)
            findings.append(Finding("warning", "no-backlinks", path, 0,
                                    "no other page links here; link it from a related page."))
    for paths in titles.values():
        if len(paths) > 1:
            for path in paths:
                others = ", ".join(p for p in paths if p != path)
                findings.append(Finding("warning", "duplicate-title", path, 0,
                                        f"title '{vault.pages[path].title}' is also used by "
                                        f"{others}; give each page its own title."))
    findings.sort(key=lambda f: (f.severity != "error", f.path, f.line, f.kind))
    return CheckReport(pages=len(vault.pages), findings=tuple(findings))


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.endswith(".md") else name
