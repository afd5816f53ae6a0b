"""`mindgraph check`: broken and ambiguous links, pages nothing links to, missing frontmatter,
duplicates, disputed pages and the trust mix."""

from __future__ import annotations

import click

from ..trust.mix import describe_mix
from .common import (EXIT_PROBLEMS, echo, emit_json, json_option, one_line, open_core,
                     workspace_options)
from .no_pages import why_no_pages
from .raw_folder import require_raw_folder
from .whole_number import WholeNumber


@click.command("check", short_help="Check links, frontmatter, failed raw notes, duplicates (fast).")
@workspace_options
@click.option("--strict", is_flag=True, help="Exit 1 when any error is found (for CI).")
@click.option("--errors-only", is_flag=True, help="Hide warnings (no backlinks, duplicates, ...).")
@click.option("--limit", type=WholeNumber(min=0), default=5, show_default=True,
              help="Print at most this many findings of each kind (0: all). --json always "
                   "has all.")
@click.option("--all", "show_all", is_flag=True, help="Print every finding (--limit 0).")
@json_option
def check_command(settings, strict: bool, errors_only: bool, limit: int, show_all: bool,
                  as_json: bool) -> None:
    """Check the wiki's structure: broken/ambiguous links, pages without backlinks or
    frontmatter, raw notes that failed to compile, duplicates, disputed pages; and the trust
    mix (`lint` reviews the pages' content). Findings are grouped by kind, errors first, a few of
    each (--all: every one)."""
    settings.require_wiki()
    require_raw_folder(settings)
    report = open_core(settings).check()
    if as_json:
        emit_json(report.to_dict())
    else:
        shown = report.errors if errors_only else list(report.findings)
        _print_findings(shown, 0 if show_all else limit, settings.paths.raw)
        counts = ", ".join(f"{kind} {n}" for kind, n in report.counts().items()) or "nothing"
        errors, warnings = len(report.errors), len(report.warnings)
        pages = report.pages
        echo(f"{pages} page{'s' * (pages != 1)}: {errors} error{'s' * (errors != 1)}, "
             f"{warnings} warning{'s' * (warnings != 1)} ({counts}).")
        if getattr(report, "trust", None):     # core.check adds it (trust/mix.py)
            echo(f"trust: {describe_mix(report.trust)}")
        if not pages:
            echo(why_no_pages(settings))
    if strict and report.errors:
        raise SystemExit(EXIT_PROBLEMS)


def _print_findings(findings: list, limit: int, raw_folder: str) -> None:
    """Each kind's findings together (errors first; of each severity the raw notes' own
    findings first, as --json has them: a note that failed has a stale page; then by kind),
    at most ``limit`` of each (0: all) and a line saying how many more: 761 missing images
    of a vault published without them are one kind, not 761 lines before the first broken
    link."""
    kinds: dict[tuple[bool, bool, str], list] = {}
    for finding in findings:
        key = (finding.severity != "error", not finding.kind.startswith("raw-"), finding.kind)
        kinds.setdefault(key, []).append(finding)
    for (_, _, kind), group in sorted(kinds.items()):
        cut = limit if limit and len(group) > limit + 1 else None    # not "... and 1 more"
        for finding in group[:cut]:
            # one line per finding: a tab or line break in a file name is written out
            echo(f"{finding.severity:7} {kind:16} {one_line(finding.location(raw_folder))}: "
                 f"{one_line(finding.message)}")
        if cut:
            echo(f"{group[0].severity:7} {kind:16} ... and {len(group) - limit} more "
                 f"(--all lists every finding).")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(check_command)
