"""`mindgraph coverage CODEBASE`: how much of a codebase the wiki knows, as a CI gate."""

from __future__ import annotations

from pathlib import Path

import click

from ..core import Mindgraph
from ..coverage.report import compare_to_baseline, load_baseline
from ..fsutil import atomic_write_json
from .common import EXIT_PROBLEMS, emit_json, json_option, workspace_options


@click.command("coverage")
@click.argument("codebase", type=click.Path(exists=True, file_okay=False, path_type=Path))
@workspace_options
@click.option("--service-level", is_flag=True,
              help="Count top-level folders (services) instead of files (modules).")
@click.option("--exclude", "excludes", multiple=True, metavar="GLOB",
              help="Skip files matching GLOB (relative to CODEBASE); repeatable.")
@click.option("--no-default-excludes", is_flag=True,
              help="Also count tests, migrations, __init__.py, ... (skipped by default).")
@click.option("--min-mentions", type=click.IntRange(min=1), default=1, show_default=True,
              help="Mentions a unit needs to count as covered.")
@click.option("--fail-under", type=click.FloatRange(0, 100), default=None, metavar="PCT",
              help="Exit 1 when coverage is below PCT percent.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Exit 1 when coverage dropped compared to this saved report.")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Save this report as JSON (to use later as --baseline).")
@click.option("--uncovered", "only_uncovered", is_flag=True, help="List only uncovered units.")
@json_option
def coverage_command(settings, codebase: Path, service_level: bool, excludes: tuple[str, ...],
                     no_default_excludes: bool, min_mentions: int, fail_under: float | None,
                     baseline: Path | None, save: Path | None, only_uncovered: bool,
                     as_json: bool) -> None:
    """Measure which modules of CODEBASE the wiki refers to (by path, module or symbol name)."""
    report = Mindgraph(settings).coverage(codebase, service_level=service_level,
                                          excludes=excludes,
                                          default_excludes=not no_default_excludes,
                                          min_mentions=min_mentions)
    comparison = compare_to_baseline(report, load_baseline(baseline)) if baseline else None
    if save:
        atomic_write_json(save, report.to_dict())
    failed_threshold = fail_under is not None and report.percent < fail_under
    if as_json:
        data = report.to_dict()
        if comparison:
            data["baseline"] = comparison
        if fail_under is not None:
            data["fail_under"] = fail_under
        emit_json(data)
    else:
        _print_table(report, only_uncovered)
        if comparison:
            _print_comparison(comparison)
        if failed_threshold:
            click.echo(f"FAIL: coverage {report.percent:.1f}% is under --fail-under "
                       f"{fail_under:g}%.", err=True)
    if failed_threshold or (comparison and (comparison["dropped"]
                                            or comparison["no_longer_covered"])):
        raise SystemExit(EXIT_PROBLEMS)


def _print_table(report, only_uncovered: bool) -> None:
    rows = [u for u in report.units if not (only_uncovered and u.covered)]
    width = max([len(u.unit.id) for u in rows] + [4])
    click.echo(f"{'unit':{width}}  {'covered':7}  {'mentions':>8}  pages")
    for item in rows:
        pages = ", ".join(m.page for m in item.pages[:3])
        if len(item.pages) > 3:
            pages += f", +{len(item.pages) - 3} more"
        mark = "yes" if item.covered else "NO"
        click.echo(f"{item.unit.id:{width}}  {mark:7}  {item.mentions:>8}  {pages}")
    click.echo(f"\n{report.covered}/{len(report.units)} {report.level}s covered "
               f"({report.percent:.1f}%), {len(report.units) - report.covered} uncovered.")


def _print_comparison(comparison: dict) -> None:
    click.echo(f"Baseline {comparison['baseline_percent']:.1f}% -> now "
               f"{comparison['percent']:.1f}%.")
    for unit in comparison["no_longer_covered"]:
        click.echo(f"  no longer covered: {unit}")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(coverage_command)
