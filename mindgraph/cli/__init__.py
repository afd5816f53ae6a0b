"""The `mindgraph` command-line interface: one click group, one module per command group.

Each command builds the core object, calls one method and prints the result; domain errors
become messages with the fix (see cli/common.py).
"""

from __future__ import annotations

import importlib

import click

from ..version import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="mindgraph")
def cli() -> None:
    """mindgraph: compile markdown notes into a linked wiki and a knowledge graph for agents."""


# One module per command group, each with a register(group) function. Add new ones here.
COMMAND_MODULES = (
    "init_cmd",
    "ingest_cmd",
    "check_cmd",
    "coverage_cmd",
    "timeline_cmd",
    "page_cmds",
    "serve_cmd",
    "mcp_cmd",
    "usage_cmd",
    "stats_cmd",
    "bench_cmd",
    "context_cmd",
    "graph_cmd",
    "search_cmd",
    "embed_cmd",
)


def _register() -> None:
    # Imported here so that each command module stays independent of the others.
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(cli)


_register()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="mindgraph")
