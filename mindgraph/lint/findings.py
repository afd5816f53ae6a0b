"""A lint finding and the report: one finding names the page, the section, the line and the fix."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

# The rules, in the order they are reported; a run that names none runs the default ones.
RULES = ("no-summary", "dangling-reference", "conflicting-fact", "deprecated-but-current",
         "near-duplicate", "unresolved-link")
OPT_IN_RULES = ("unresolved-link",)    # links to no page: Obsidian's placeholders (links.py)
DEFAULT_RULES = tuple(rule for rule in RULES if rule not in OPT_IN_RULES)
LLM_RULES = ("conflicting-fact",)      # the rules an LLM judge takes part in


@dataclass(frozen=True)
class LintFinding:
    """One thing to look at: where it is, what is wrong, and how to fix it."""

    rule: str
    page: str                 # vault-relative path of the page the finding is about
    section: str              # section id ("lead" for the text before the first heading)
    line: int                 # 1-based line in the page file (0: the whole page)
    message: str
    fix: str
    other_page: str = ""      # the page it disagrees with or duplicates, if any
    other_line: int = 0
    judged_by: str = "offline"   # "offline", or the LLM's identity when one confirmed it

    def location(self) -> str:
        """"page.md:12" (or the path alone when the finding is about the whole page)."""
        return f"{self.page}:{self.line}" if self.line else self.page


def section_at(page: Any, line: int) -> str:
    """The id of ``page``'s section holding ``line`` ("lead" before the first heading)."""
    found = "lead"
    for section in page.sections:
        if section.start_line <= line:
            found = section.id
    return found


@dataclass(frozen=True)
class LintReport:
    """Everything `mindgraph lint` found, with what it read and what it could not judge."""

    pages: int
    findings: tuple[LintFinding, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)   # e.g. "the LLM judge failed: …"

    def counts(self) -> dict[str, int]:
        """Findings per rule, in rule order (rules without findings left out)."""
        seen = Counter(f.rule for f in self.findings)
        return {rule: seen[rule] for rule in RULES if seen[rule]}

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of `lint --json`, GET /lint and the MCP lint tool."""
        return {"pages": self.pages, "counts": self.counts(),
                "findings": [asdict(f) for f in self.findings], "notes": list(self.notes)}
