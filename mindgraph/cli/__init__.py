"""The `mindgraph` command-line interface: one click group, one module per command group.

Each command builds the core object, calls one method and prints the result; domain errors
become messages with the fix (see cli/common.py).
"""

from __future__ import annotations

import difflib
import gc
import importlib

from pathlib import Path
from typing import Iterable

import click

from ..version import __version__
from . import common
from .common import SubcommandGroup, config_option, dir_option


# Command name → the module that defines it (each module has a register(group) function).
# Modules are imported only when their command runs, so `mindgraph search` does not pay for
# the web server or the MCP SDK. Add new commands here.
COMMANDS = {
    "init": "init_cmd", "pull": "ingest_cmd", "ingest": "ingest_cmd", "embed": "embed_cmd",
    "check": "check_cmd", "stats": "stats_cmd", "search": "search_cmd", "graph": "graph_cmd",
    "get": "page_cmds", "url": "page_cmds", "links": "page_cmds",
    "timeline": "timeline_cmd", "coverage": "coverage_cmd", "context": "context_cmd",
    "bench": "bench_cmd", "serve": "serve_cmd", "mcp": "mcp_cmd", "usage": "usage_cmd",
    "verify": "trust_cmds", "runs": "trust_cmds", "audit": "trust_cmds", "lint": "lint_cmd",
    "calibrate": "calibrate_cmd", "propagate": "propagate_cmd", "watch": "watch_cmd",
    "create": "apps_cmd", "update": "apps_cmd",
    "enrich": "enrich_cmd", "triage": "triage_cmd",
}


# The commands that are groups: a subcommand typed alone (`mindgraph backlinks`) is named
# with its group. Only the error path imports them (tests/cli/test_cli_basics.py keeps the list
# whole).
GROUPS = ("graph",)

# What a new user may type for something another command does (the README's words).
ELSEWHERE = {
    "explain": ("search --hybrid QUERY", ": each result says which retrievers found it and why"),
    "backlink": ("graph backlinks PAGE", ""),
    "ask": ("search --hybrid \"QUESTION\"", " (the best sections, each explained), or "
            "`mindgraph context SITUATION` for a block of notes to hand an agent"),
    "query": ("search QUERY", " (keyword) or `mindgraph search --hybrid QUERY`"),
    "find": ("search QUERY", " (keyword) or `mindgraph search --hybrid QUERY`"),
    "compile": ("ingest", ": it compiles raw/ into wiki/"),
    "build": ("ingest", ": it compiles raw/ into wiki/"),
    "index": ("ingest", " (pages and the keyword index), then `mindgraph embed` (vectors)"),
    "status": ("stats", " (what the workspace holds) or `mindgraph check` (its problems)"),
    "show": ("get PAGE", ""),
    "read": ("get PAGE", ""),
    "open": ("url PAGE", " (its obsidian:// or file:// address) or `mindgraph get PAGE`"),
    "dashboard": ("serve", ", then open http://127.0.0.1:8765/"),
}


def _where_else(typed: str) -> str:
    """The command that does what ``typed`` names, as a sentence ("" when none does)."""
    if typed in ELSEWHERE:
        command, why = ELSEWHERE[typed]
        return f" Try `mindgraph {command}`{why}."
    for name in GROUPS:
        holder = click.Group()
        importlib.import_module(f"{__name__}.{COMMANDS[name]}").register(holder)
        group = holder.commands[name]
        if isinstance(group, click.Group) and typed in group.commands:
            return f" It is a subcommand of {name}: `mindgraph {name} {typed}`."
    return ""


def _close_commands(typed: str) -> list[str]:
    """At most two commands ``typed`` may have meant: the closest, and a second only when it
    is about as close ("serach" means search, not enrich)."""
    return _closest(typed, COMMANDS)


def _closest(typed: str, names: Iterable[str]) -> list[str]:
    """At most two of ``names`` that ``typed`` may have meant: the closest, and a second only
    when it is about as close."""
    scored = sorted(((difflib.SequenceMatcher(None, typed, name).ratio(), name)
                     for name in names), reverse=True)
    best = scored[0][0] if scored else 0.0
    return [name for ratio, name in scored[:2] if ratio >= 0.6 and ratio >= best - 0.1]


class LazyGroup(SubcommandGroup):
    """A click group that imports a command's module the first time the command is needed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        if args and not args[0].startswith("-") and args[0] not in COMMANDS:
            close = _close_commands(args[0])
            hint = _where_else(args[0]) or \
                (f" Did you mean {' or '.join(close)}?" if close else "")
            ctx.fail(f"No such command '{args[0]}'.{hint} See `mindgraph --help`.")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context):
        typed = [*getattr(ctx, "_protected_args", ()), *ctx.args]
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise common.Interrupted(ctx.invoked_subcommand or "") from None
        except click.UsageError as exc:
            # click offers every option of the command close enough, sorted by name: a typo of
            # --hybrid was "Did you mean one of: '--dir', '--hybrid'?"; keep the closest
            if isinstance(exc, click.NoSuchOption) and exc.possibilities:
                exc.possibilities = _closest(exc.option_name, exc.possibilities)
            if "--json" in typed:   # an agent reading stdout learns of its typo there too
                common.emit_json({"error": "UsageError", "detail": exc.format_message(),
                                  "exit_code": exc.exit_code})
            raise

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        holder = click.Group()
        importlib.import_module(f"{__name__}.{module}").register(holder)
        return holder.commands.get(cmd_name)


@click.group(cls=LazyGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="mindgraph")
@dir_option
@config_option
@click.pass_context
def cli(ctx: click.Context, base_dir: Path | None, config_path: Path | None) -> None:
    """mindgraph: compile markdown notes into a linked wiki and a knowledge graph for agents.

    -C DIR and --config work before the command, after it, and between a group and its
    subcommand (graph -C DIR hubs); without them a command works on the nearest folder
    upwards that holds mindgraph.yml. A folder given with -C is not searched upwards.
    """
    ctx.obj = {"base_dir": base_dir, "config_path": config_path}


def main() -> None:
    """Console-script entry point (``python -m mindgraph`` too): the process exits after it."""
    common.OWN_PROCESS = True
    try:
        cli(prog_name="mindgraph")
    finally:
        # The interpreter's last collection would walk every object still alive, only for
        # them to be freed anyway (0.1-0.2 s after a first ingest of the Help vault): they
        # are left to the shutdown. Not in CliRunner's tests, which do not call main().
        gc.freeze()
