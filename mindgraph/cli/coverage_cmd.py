"""`mindgraph coverage CODEBASE`: how much of a codebase the wiki knows, as a CI gate."""

from __future__ import annotations

from pathlib import Path

import click

from ..coverage.report import CoverageReport, compare_to_baseline, load_baseline
from ..coverage.semantic import DEFAULT_THRESHOLD
from ..fsutil import atomic_write_json
from .common import EXIT_PROBLEMS, echo, emit_json, json_option, open_core, workspace_options
from .whole_number import WholeNumber


@click.command("coverage")
@click.argument("codebase", type=click.Path(exists=True, file_okay=False, path_type=Path))
@workspace_options
@click.option("--service-level", is_flag=True,
              help="Count top-level folders (services) instead of files (modules).")
@click.option("--exclude", "excludes", multiple=True, metavar="GLOB",
              help="Skip files matching GLOB (relative to CODEBASE); repeatable.")
@click.option("--no-default-excludes", is_flag=True,
              help="Also count tests, migrations, __init__.py, ... (skipped by default).")
@click.option("--min-mentions", type=WholeNumber(min=1), default=1, show_default=True,
              help="Mentions a unit needs to count as covered.")
@click.option("--fail-under", type=click.FloatRange(0, 100), default=None, metavar="PCT",
              help="Exit 1 when coverage is below PCT percent.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Exit 1 when coverage dropped compared to this saved report.")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Save this report as JSON (to use later as --baseline).")
@click.option("--uncovered", "only_uncovered", is_flag=True, help="List only uncovered units.")
@click.option("--semantic", is_flag=True,
              help="Also cover a unit whose docstrings are close to a wiki section (needs "
                   "`mindgraph embed` first; uses the configured embedding model).")
@click.option("--semantic-threshold", type=click.FloatRange(0, 1), default=None,
              metavar="COSINE",
              help=f"Similarity a semantic link needs, for every model (default: each "
                   f"model's own, {DEFAULT_THRESHOLD} for the local MiniLM model); implies "
                   f"--semantic.")
@json_option
def coverage_command(settings, codebase: Path, service_level: bool, excludes: tuple[str, ...],
                     no_default_excludes: bool, min_mentions: int, fail_under: float | None,
                     baseline: Path | None, save: Path | None, only_uncovered: bool,
                     semantic: bool, semantic_threshold: float | None, as_json: bool) -> None:
    """Measure which modules of CODEBASE the wiki refers to (by path, module or symbol name).

    With --semantic, a module whose docstrings read like a wiki section is covered too; the
    report marks such links with "~" and gives the section and the cosine similarity.
    """
    mg = open_core(settings)
    try:
        report = mg.coverage(codebase, service_level=service_level, excludes=excludes,
                             default_excludes=not no_default_excludes,
                             min_mentions=min_mentions, semantic=semantic,
                             semantic_threshold=semantic_threshold)
    finally:
        mg.close()
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
        for note in report.notes:
            echo(f"note: {note}", err=True)
        if comparison:
            _print_comparison(comparison)
        if failed_threshold:
            echo(f"FAIL: coverage {report.percent:.1f}% is under --fail-under "
                 f"{fail_under:g}%.", err=True)
    if failed_threshold or (comparison and (comparison["dropped"]
                                            or comparison["no_longer_covered"])):
        raise SystemExit(EXIT_PROBLEMS)


SEMANTIC_SHOWN = 2      # semantic links printed per unit; --json has them all


def _print_table(report: CoverageReport, only_uncovered: bool) -> None:
    rows = [u for u in report.units if not (only_uncovered and u.covered)]
    width = max([len(u.unit.id) for u in rows] + [4])
    if rows:
        echo(f"{'unit':{width}}  {'covered':8}  {'mentions':>8}  pages")
    for item in rows:
        pages = ", ".join(m.page for m in item.pages[:3])
        if len(item.pages) > 3:
            pages += f", +{len(item.pages) - 3} more"
        mark = "semantic" if item.semantic_only else "yes" if item.covered else "NO"
        echo(f"{item.unit.id:{width}}  {mark:8}  {item.mentions:>8}  {pages}".rstrip())
        for page, section, similarity in item.semantic[:SEMANTIC_SHOWN]:
            echo(f"{'':{width + 22}}~ {page}#{section} ({similarity:.2f})")
        if len(item.semantic) > SEMANTIC_SHOWN:
            echo(f"{'':{width + 22}}~ +{len(item.semantic) - SEMANTIC_SHOWN} more")
    gap = "\n" if rows else ""         # a blank line under the table, none without one
    echo(f"{gap}{report.covered}/{len(report.units)} {report.level}s covered "
         f"({report.percent:.1f}%), {len(report.units) - report.covered} uncovered.")
    if report.semantic_model:
        cut = (", ".join(f"{v:g} ({k})" for k, v in report.semantic_thresholds.items())
               if report.semantic_thresholds else f"{report.semantic_threshold:g}")
        echo(f"~ semantic link: cosine >= {cut} with "
             f"{report.semantic_model}; {report.covered_semantic_only} {report.level}s "
             f"covered by semantic links alone.")


def _print_comparison(comparison: dict) -> None:
    echo(f"Baseline {comparison['baseline_percent']:.1f}% -> now "
         f"{comparison['percent']:.1f}%.")
    for unit in comparison["no_longer_covered"]:
        echo(f"  no longer covered: {unit}")
    changed = comparison.get("semantic_changed")
    if changed:
        def describe(side: dict | None) -> str:
            return (f"semantic links at {side['threshold']} with {side['model_version']}"
                    if side else "no semantic links")

        echo(f"  note: the baseline was measured with {describe(changed['baseline'])}, "
             f"this run with {describe(changed['now'])}.")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(coverage_command)
