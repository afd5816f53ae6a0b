"""`mindgraph enrich`: summaries for pages that lack one and typed links between similar pages
(mindgraph/enrich/)."""

from __future__ import annotations

import click

from ..core import Mindgraph
from ..enrich.service import EnrichReport, EnrichService
from .common import configured_llm, echo, emit_json, is_terminal, json_option, workspace_options
from .progress import Progress


@click.command("enrich")
@workspace_options
@click.option("--judge", type=click.Choice(["auto", "offline", "llm"]), default="auto",
              show_default=True,
              help="Who writes summaries and types links: the configured LLM (compile.provider), "
                   "nobody (offline: similarity alone makes untyped 'related' links), or the LLM "
                   "when one is configured.")
@click.option("--summaries/--no-summaries", default=True, help="Write missing summaries.")
@click.option("--links/--no-links", default=True, help="Find links between similar pages.")
@click.option("--dry-run", is_flag=True,
              help="Only say what would be done and how many LLM calls it takes.")
@json_option
def enrich_command(settings, judge: str, summaries: bool, links: bool, dry_run: bool,
                   as_json: bool) -> None:
    """Write summaries for pages that lack a good one (five pages to an LLM call) and link
    pages whose vectors are similar, each link typed by the LLM (reference, depends_on,
    extends, related, supersedes, contradicts) or, offline, an untyped 'related'. What it
    finds goes into the pages when they are recompiled (now); raw/ is never touched, and a
    re-run on unchanged pages asks the LLM nothing."""
    settings.require_wiki()
    from ..providers.llm.factory import make_llm_provider

    llm = link_llm = None
    if judge == "llm":
        llm = configured_llm(settings, "--judge llm", "pass --judge offline")
    elif judge == "auto":
        llm = make_llm_provider(settings)
    if llm is not None:      # the same model, typing links at enrich.link_temperature
        link_llm = make_llm_provider(settings, settings.enrich.link_temperature)
    bars: dict[str, Progress] = {}

    def step(stage: str, done: int, total: int) -> None:
        if as_json and is_terminal():
            return
        bar = bars.setdefault(stage, Progress(stage, "pages" if stage != "pairs judged"
                                              else "pairs", total))
        bar.update(done, total)

    report = EnrichService(Mindgraph(settings), llm, link_llm).run(
        summaries=summaries, links=links, dry_run=dry_run, step=step)
    for bar in bars.values():
        bar.close()
    if as_json:
        emit_json(report.to_dict())
        return
    _print(report)


def _print(report: EnrichReport) -> None:
    for note in report.notes:
        echo(f"note: {note}", err=True)
    for failure in report.summary_failures:
        echo(f"summary failed: {failure['page']}: {failure['error']}", err=True)
    for failure in report.link_failures:
        echo(f"link failed: {failure['pages']}: {failure['error']}", err=True)
    would = "would write" if report.dry_run else "wrote"
    echo(f"summaries: {report.summaries_needed} page(s) lack one; {would} "
         f"{report.summaries_written}.")
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(report.links_by_kind.items())) or "none"
    echo(f"links: {report.candidates + report.already_linked} similar pair(s) at cosine "
         f">= {_cutoffs(report)}, {report.already_linked} already linked; "
         f"{report.remembered} judged before; {report.links} link(s) ({kinds}) by "
         f"{report.judge}.")
    if report.dry_run:
        echo(f"dry run: {report.planned_calls} LLM call(s) planned; nothing written.")
    else:
        echo(f"{report.llm_calls} LLM call(s); {len(report.pages_changed)} page(s) "
             f"recompiled.")


def _cutoffs(report: EnrichReport) -> str:
    """The cut-off, or each model's ("0.7 all-MiniLM-L6-v2-w8a8, 0.7 use-multilingual-v3")
    when the embedding routes languages to several models."""
    if len(report.thresholds) < 2:
        return f"{report.threshold:g}"
    return ", ".join(f"{cut:g} {model.split(':')[1] if model.count(':') >= 2 else model}"
                     for model, cut in report.thresholds.items())


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(enrich_command)
