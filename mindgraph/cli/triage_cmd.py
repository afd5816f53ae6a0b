"""`mindgraph triage`: what was completed since a day, scored against the Trunk Catalog
(mindgraph/triage/)."""

from __future__ import annotations

import datetime as dt

import click

from ..core import Mindgraph
from ..triage.service import relevance_for, triage, yesterday
from .common import configured_llm, echo, emit_json, json_option, workspace_options


@click.command("triage")
@workspace_options
@click.option("--since", "since", required=False, metavar="YYYY-MM-DD",
              help="Score the items completed on or after this day (default: yesterday).")
@click.option("--relevance", "relevance", nargs=2, metavar="ITEM_ID TITLE", default=None,
              help="Instead: print the instruction block an agent gets for a new item.")
@click.option("--judge", type=click.Choice(["auto", "offline", "llm"]), default="auto",
              show_default=True,
              help="Who scores: the configured LLM (compile.provider, batched), similarity "
                   "(offline), or the LLM when one is configured.")
@json_option
def triage_command(settings, since: str | None, relevance: tuple[str, str] | None, judge: str,
                   as_json: bool) -> None:
    """Score the items completed since a day, yesterday by default (pages whose frontmatter has `completed` or
    `completed_time`, as `pull` files a note app's items) 0-3 against the trunks of the Trunk
    Catalog (a note with `type: trunk-catalog` and a ```json list of {name, description}),
    grouped by trunk: a morning message in markdown, or --json."""
    settings.require_wiki()
    mg = Mindgraph(settings)
    if relevance:
        block = relevance_for(mg, *relevance)
        emit_json({"item": relevance[0], "relevance": block}) if as_json else echo(block)
        return
    try:
        day = dt.date.fromisoformat(since) if since else yesterday()
    except ValueError:
        raise click.BadParameter(f"'{since}' is not a day; use YYYY-MM-DD.",
                                 param_hint="--since") from None
    llm = None
    if judge == "llm":
        llm = configured_llm(settings, "--judge llm", "pass --judge offline")
    elif judge == "auto":
        from ..providers.llm.factory import make_llm_provider

        llm = make_llm_provider(settings)
    report = triage(mg, day, llm)
    if as_json:
        emit_json(report.to_dict())
        return
    for note in report.notes:
        echo(f"note: {note}", err=True)
    echo(report.markdown(), nl=False)


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(triage_command)
