"""`mindgraph lint`: what a careful editor would flag — summaries, dangling references,
facts that disagree, deprecated features still described as current, near-duplicates."""

from __future__ import annotations

import click

from ..core import Mindgraph
from ..lint.findings import RULES
from .common import EXIT_PROBLEMS, echo, emit_json, json_option, one_line, workspace_options
from .progress import Phases
from .whole_number import WholeNumber


@click.command("lint", short_help="Review content: summaries, conflicting facts, near-duplicates.")
@workspace_options
@click.option("--judge", type=click.Choice(["auto", "offline", "llm"]), default="auto",
              show_default=True,
              help="Who decides which similar statements contradict: the configured LLM "
                   "(compile.provider), the offline rules, or the LLM when one is configured.")
@click.option("--rule", "rules", multiple=True, type=click.Choice(RULES),
              help="Only these rules (repeatable). Default: all but unresolved-link (links "
                   "to no page, which Obsidian keeps as placeholders; `check` counts them as "
                   "broken-link errors).")
@click.option("--limit", type=WholeNumber(min=0), default=50, show_default=True,
              help="Print at most this many findings (0: all). --json always has all.")
@click.option("--strict", is_flag=True, help="Exit 1 when anything is found (for CI).")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Progress of each phase (reading, comparing) with an ETA on stderr. "
                   "Default: a bar on a terminal, else a line every 10 s; --progress prints "
                   "a line every second off a terminal.")
@json_option
def lint_command(settings, judge: str, rules: tuple[str, ...], limit: int, strict: bool,
                 show_progress: bool | None, as_json: bool) -> None:
    """Read every page and flag what a careful editor would: pages without a real summary,
    references that point nowhere, facts two pages state differently, features one page calls
    deprecated while others describe them as current, near-duplicate pages. Read-only;
    `check` stays the fast structural check."""
    settings.require_wiki()
    with Phases("pages", enabled=show_progress is not False,
                forced=bool(show_progress)) as phases:     # 500 pages: 15 s
        report = Mindgraph(settings).lint(judge, rules, phases.ticker)  # only those rules
    findings = list(report.findings)
    if as_json:
        emit_json(report.to_dict())
    else:
        for note in report.notes:
            echo(f"note: {note}", err=True)
        for finding in findings[: limit or None]:
            section = f" §{finding.section}" if finding.section != "lead" else ""
            # one line per finding: a tab or line break in a file name is written out
            echo(f"{finding.rule:22} {one_line(finding.location())}{one_line(section)}: "
                 f"{one_line(finding.message)} Fix: {one_line(finding.fix)}")
        if limit and len(findings) > limit:
            echo(f"... and {len(findings) - limit} more (--limit 0 shows all).")
        counts = ", ".join(f"{rule} {n}" for rule, n in report.counts().items()
                           if not rules or rule in rules) or "nothing to flag"
        pages, found = report.pages, len(findings)
        echo(f"{pages} page{'s' * (pages != 1)}: {found} finding{'s' * (found != 1)} "
             f"({counts}).")
    if strict and findings:
        raise SystemExit(EXIT_PROBLEMS)


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(lint_command)
