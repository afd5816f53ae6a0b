"""`mindgraph stats`: pages, sections, links by kind, resolution, tags, the trust mix, raw
files by state."""

from __future__ import annotations

import click

from ..trust.mix import describe_mix
from .common import echo, emit_json, json_option, open_core, workspace_options


@click.command("stats")
@workspace_options
@json_option
def stats_command(settings, as_json: bool) -> None:
    """Count pages, sections, links (by kind and resolution), tags, trust levels and raw files."""
    stats = open_core(settings).stats()
    if as_json:
        emit_json(stats)
        return
    links = stats["links"]
    echo(f"wiki      {stats['wiki']}")
    echo(f"pages     {stats['pages']}  (sections {stats['sections']}, "
         f"problems {stats['problems']})")
    echo(f"links     {links['total']}  by kind: "
         + (", ".join(f"{k} {v}" for k, v in links["by_kind"].items()) or "none"))
    echo("          by resolution: "
         + (", ".join(f"{k} {v}" for k, v in links["by_resolution"].items()) or "none"))
    top = ", ".join(f"#{t['tag']} {t['pages']}" for t in stats["tags"]["top"][:6])
    echo(f"tags      {stats['tags']['distinct']} distinct; top: {top or 'none'}")
    echo(f"trust     {describe_mix(stats['trust'])}")
    raw = stats["raw"]
    states = ", ".join(f"{k} {v}" for k, v in raw["by_state"].items()) or "never ingested"
    echo(f"raw       {raw['files']} files: {states}")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(stats_command)
