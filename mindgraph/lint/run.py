"""Run the lint rules asked for (every one by default) over a vault and gather the findings
(read-only)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Callable, Iterable

from ..errors import ProviderError
from ..page.dates import note_dates
from ..page.model import Link, Page
from ..page.vault import Vault
from .deprecation import current_uses, deprecations, statement_names
from .duplicates import near_duplicates
from .facts import Conflict, conflicting_facts, similar_pairs
from .findings import DEFAULT_RULES, RULES, LintFinding, LintReport
from .links import RULE as UNRESOLVED, unresolved_link_findings, unresolved_link_note
from .llm import MAX_PAIRS
from .references import reference_findings
from .statements import Statement, page_statements
from .summary import summary_findings

# A phase's progress: (done, total, the item just done); the phases: label → its progress
Progress = Callable[[int, "int | None", str], None]
Phases = Callable[[str], Progress]
# Judges pairs of similar statements: returns the contradicting ones (see lint/llm.py).
Judge = Callable[[list[tuple[Statement, Statement]]], list[Conflict]]
LLM_JACCARD = 0.5     # how similar two statements must be for the LLM judge to see them


def lint_vault(vault: Vault, raw_dir: Path, workspace: Path, *, judge: Judge | None = None,
               judge_name: str = "", seen: Callable[[Path], bool] | None = None,
               raw_label: str = "raw", rules: Iterable[str] = (),
               unresolved: str = "error", phases: Phases | None = None) -> LintReport:
    """Every finding over ``vault`` of ``rules`` (the default ones when none are given: only
    those are run, not every rule then filtered; a default run notes the links to no page,
    which the opt-in rule unresolved-link lists), in rule order, then page and line order; ``seen`` (a
    scoped view's) says which files it sees, for the references to files; ``raw_label``:
    the raw folder as the user configured it (paths.raw), as the fixes name it;
    ``unresolved``: check.unresolved_links, what the note says `check` counts those links as;
    ``phases``: a phase's label → its progress in pages (cli/progress.py), told of each
    page read, then of each rule's pages as it goes (a vault of 500 pages took 15 s)."""
    wanted = set(rules) or set(DEFAULT_RULES)
    pages = [vault.pages[p] for p in sorted(vault.pages)]
    total = len(pages)
    uses_statements = wanted & {"no-summary", "conflicting-fact", "deprecated-but-current"}
    statements: dict[str, list[Statement]] = {}
    dates: dict[str, dt.date | None] = {}
    findings: list[LintFinding] = []
    notes: list[str] = []
    reading = _phase(phases, "Reading")
    for done, page in enumerate(pages, 1):
        statements[page.path] = page_statements(page) if uses_statements else []
        dates[page.path] = _date(page) if uses_statements else None
        if "no-summary" in wanted:
            findings.extend(summary_findings(page, statements[page.path],
                                             dated=dates[page.path] is not None,
                                             raw_label=raw_label))
        if "dangling-reference" in wanted:
            findings.extend(reference_findings(page, raw_dir, workspace, seen, raw_label))
        reading(done, total, page.path)
    every = [s for p in pages for s in statements[p.path]]
    if "conflicting-fact" in wanted:
        facts = _phase(phases, "Comparing facts")
        facts(0, total, "")
        findings.extend(_conflicts(every, dates, judge, judge_name, notes))
        facts(total, total, "")
    if "deprecated-but-current" in wanted:
        names: dict[Statement, list[tuple[str, str]]] = {}
        named = _phase(phases, "Finding deprecations")
        for done, page in enumerate(pages, 1):
            names.update(statement_names(page, statements[page.path], _resolver(vault, page)))
            named(done, total, page.path)
        gone = deprecations(every, names)
        findings.extend(_current_finding(use.deprecation, use.statement)
                        for use in current_uses(gone, every, names, dates))
    if "near-duplicate" in wanted:
        findings.extend(_duplicate_finding(a, b, similarity) for a, b, similarity in
                        near_duplicates(pages, phases))
    if UNRESOLVED in wanted:
        findings.extend(unresolved_link_findings(vault, raw_dir, raw_label))
    elif not rules and (note := unresolved_link_note(vault, raw_dir, raw_label,
                                                                unresolved)):
        notes.append(note)
    order = {rule: i for i, rule in enumerate(RULES)}
    findings.sort(key=lambda f: (order[f.rule], f.page, f.line, f.message))
    return LintReport(len(pages), tuple(findings), tuple(notes))


def _phase(phases: Phases | None, label: str) -> Progress:
    """The progress of phase ``label``: told nothing without ``phases``."""
    return phases(label) if phases is not None else _quiet


def _quiet(done: int, total: int | None = None, item: str = "") -> None:
    return None


def _conflicts(every: list[Statement], dates: dict[str, dt.date | None], judge: Judge | None,
               judge_name: str, notes: list[str]) -> list[LintFinding]:
    """The conflicting-fact findings: the offline rules' or, with ``judge``, the LLM's."""
    conflicts, judged_by = list(conflicting_facts(every, dates)), "offline"
    if judge is not None:
        try:
            conflicts = _judged(conflicts, every, dates, judge, notes)
            judged_by = judge_name
        except ProviderError as exc:
            notes.append(f"The LLM judge failed ({exc}); the conflicting-fact findings are the "
                         f"offline ones.")
    return [_conflict_finding(c, judged_by) for c in conflicts]


def _judged(offline: list[Conflict], statements: list[Statement],
            dates: dict[str, dt.date | None], judge: Judge, notes: list[str]) -> list[Conflict]:
    """What the LLM says of the offline candidates and of the similar statements without
    numbers: it decides which contradict."""
    pairs = [(c.first, c.second) for c in offline]
    taken = {(a.page, b.page) for a, b in pairs}
    for a, b in similar_pairs(statements, dates, LLM_JACCARD):
        if (a.page, b.page) not in taken:
            taken.add((a.page, b.page))
            pairs.append((a, b))
    if len(pairs) > MAX_PAIRS:
        notes.append(f"{len(pairs)} pairs of similar statements; the LLM judged the first "
                     f"{MAX_PAIRS}.")
        pairs = pairs[:MAX_PAIRS]
    return judge(pairs)


def _date(page: Page) -> dt.date | None:
    dates = note_dates(page.frontmatter, page.body, page.path)
    return dates.created if dates else None


def _resolver(vault: Vault, page: Page) -> Callable[[Link], str | None]:
    def resolve(link: Link) -> str | None:
        result = vault.resolve(link, page.path)
        return result.target if result.status == "resolved" else None
    return resolve


def _conflict_finding(c: Conflict, judged_by: str) -> LintFinding:
    a, b = c.first, c.second
    said = (f"Contradicts {b.page}:{b.line} ({c.reason})" if c.reason else
            f"Says {c.values[0]} where {b.page}:{b.line} says {c.values[1]}")
    return LintFinding(
        "conflicting-fact", a.page, a.section, a.line,
        f"{said}: «{_cut(a.text)}» / «{_cut(b.text)}»",
        "Check which is right and correct the other page (or say in both why they differ).",
        other_page=b.page, other_line=b.line, judged_by=judged_by)


def _current_finding(d, s: Statement) -> LintFinding:
    where = d.statement
    return LintFinding(
        "deprecated-but-current", s.page, s.section, s.line,
        f"Describes {d.what} as current, but {where.page}:{where.line} says it is "
        f"deprecated or removed: «{_cut(where.text)}»",
        f"Say here that {d.what} is deprecated or removed (and what replaces it), or drop it.",
        other_page=where.page, other_line=where.line)


def _duplicate_finding(a: Page, b: Page, similarity: float) -> LintFinding:
    return LintFinding(
        "near-duplicate", a.path, "lead", 0,
        f"{similarity:.0%} of its text is also in {b.path}.",
        f"Merge the two pages (keep one, link or alias the other), or make each say what the "
        f"other does not.", other_page=b.path)


def _cut(text: str, limit: int = 140) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
