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
    echo(f"raw       {raw['files']} files: {_raw_states(raw)}")


def _raw_states(raw: dict) -> str:
    """The raw notes by state, or why there are none: an empty raw/, or no ingest yet."""
    states = ", ".join(f"{k} {v}" for k, v in raw["by_state"].items())
    if states:
        return states
    if raw.get("has_notes") is False:
        return f"raw/ ({raw['folder']}) has no notes yet: put Markdown files there"
    if not raw.get("ingested"):
        if raw.get("has_notes"):      # "0 files" alone reads as an empty raw/
            return f"never ingested: {raw['folder']} holds notes; run `mindgraph ingest`"
        return "never ingested: run `mindgraph ingest`"
    return "none recorded by the last ingest (`mindgraph ingest` says why)"


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(stats_command)
