"""`mindgraph check`: broken and ambiguous links, pages nothing links to, missing frontmatter,
duplicates, disputed pages and the trust mix."""

from __future__ import annotations

import click

from ..trust.mix import describe_mix
from .common import EXIT_PROBLEMS, echo, emit_json, json_option, open_core, workspace_options


@click.command("check")
@workspace_options
@click.option("--strict", is_flag=True, help="Exit 1 when any error is found (for CI).")
@click.option("--errors-only", is_flag=True, help="Hide warnings (no backlinks, duplicates, ...).")
@click.option("--limit", type=click.IntRange(min=0), default=50, show_default=True,
              help="Print at most this many findings (0: all). --json always has all.")
@json_option
def check_command(settings, strict: bool, errors_only: bool, limit: int, as_json: bool) -> None:
    """Lint the wiki: broken/ambiguous links, pages without backlinks or frontmatter, duplicates,
    disputed pages; and the trust mix."""
    settings.require_wiki()
    report = open_core(settings).check()
    if as_json:
        emit_json(report.to_dict())
    else:
        shown = report.errors if errors_only else list(report.findings)
        for finding in shown[: limit or None]:
            echo(f"{finding.severity:7} {finding.kind:16} {finding.location(settings.paths.raw)}: "
                 f"{finding.message}")
        if limit and len(shown) > limit:
            echo(f"... and {len(shown) - limit} more (--limit 0 shows all).")
        counts = ", ".join(f"{kind} {n}" for kind, n in report.counts().items()) or "nothing"
        errors, warnings = len(report.errors), len(report.warnings)
        echo(f"{report.pages} pages: {errors} error{'s' * (errors != 1)}, "
             f"{warnings} warning{'s' * (warnings != 1)} ({counts}).")
        if getattr(report, "trust", None):     # core.check adds it (trust/mix.py)
            echo(f"trust: {describe_mix(report.trust)}")
    if strict and report.errors:
        raise SystemExit(EXIT_PROBLEMS)


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(check_command)
