"""`mindgraph usage`: what agents and people asked, what found nothing, what was slow."""

from __future__ import annotations

import click

from ..usage import summarise
from .common import (echo, emit_json, json_option, one_line, open_core, require_workspace,
                     workspace_options)
from .whole_number import WholeNumber


@click.command("usage")
@workspace_options
@click.option("--top", type=WholeNumber(1, 1000), default=10, show_default=True,
              help="How many queries to list in each group.")
@click.option("--slow-ms", type=click.FloatRange(min=0), default=200.0, show_default=True,
              help="A query at or above this latency is slow.")
@json_option
def usage_command(settings, top: int, slow_ms: float, as_json: bool) -> None:
    """Summarise the usage log: top queries, zero-result queries, slow ones."""
    require_workspace(settings)
    log = open_core(settings).usage_log
    summary = summarise(log.lines(), top=top, slow_ms=slow_ms)
    if as_json:
        emit_json(summary)
        return
    if not summary["queries"] and not summary["lookups"]:
        where = log.path or "nowhere (serve.usage_log is empty)"
        echo(f"No queries logged yet (log: {where}).")
        return
    latency = summary["latency_ms"]
    queries, looked = summary["queries"], summary["lookups"]
    lookups = f" and {looked} lookup{'s' * (looked != 1)}" if looked else ""
    echo(f"{queries} quer{'ies' if queries != 1 else 'y'}{lookups}; latency median "
         f"{latency['median']} ms, "
         f"p95 {latency['p95']} ms; by interface: "
         + ", ".join(f"{k} {v}" for k, v in summary["interfaces"].items()))
    for title, key in (("Top queries", "top_queries"), ("Zero results", "zero_result_queries")):
        echo(f"\n{title}:")
        for item in summary[key] or [{"query": "(none)", "count": 0}]:
            echo(f"  {item['count']:>5}  {one_line(str(item['query']))}")
    echo(f"\nSlow (>= {slow_ms:g} ms):")
    for item in summary["slow_queries"] or [{"query": "(none)", "latency_ms": ""}]:
        echo(f"  {item['latency_ms']:>8}  {one_line(str(item['query']))}")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(usage_command)
