"""Options and error handling shared by every command.

Exit codes: 0 ok, 1 problems found (or a run with failures) or not found (a page, section or
path that does not exist), 2 usage or configuration error (also a group without its subcommand),
130 stopped by Ctrl-C.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

import click

from ..config import CONFIG_FILENAME, Settings, load_settings
from ..errors import ConfigError, InputError, MindgraphError

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2

# True in the `mindgraph` command's own process (main()), which a command may fork helpers
# of; not where the CLI runs inside another program (CliRunner's tests, a notebook).
OWN_PROCESS = False


class ConfigClickError(click.ClickException):
    """A configuration error: exit code 2, like click's own usage errors."""

    exit_code = EXIT_USAGE


EXIT_INTERRUPTED = 130    # 128 + SIGINT, as shells report a command stopped by Ctrl-C

# Commands a Ctrl-C leaves resumable: what they finished is kept, and the next run goes on.
RESUMABLE = {"ingest": "the notes compiled so far keep their pages",
             "embed": "the sections embedded so far keep their vectors"}


class Interrupted(click.ClickException):
    """Ctrl-C: said in words (click said "Aborted!"), with what is kept and how to go on."""

    exit_code = EXIT_INTERRUPTED

    def __init__(self, command: str) -> None:
        kept = RESUMABLE.get(command)
        super().__init__(
            f"Interrupted (Ctrl-C): {kept}. Run `mindgraph {command}` again to go on from "
            f"there." if kept else "Interrupted (Ctrl-C).")


class SubcommandGroup(click.Group):
    """A command group that prints its help and exits 2 when no subcommand follows it, also
    after its options (``mindgraph -C notes``, ``mindgraph graph -C notes``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("invoke_without_command", True)   # so invoke sees "none given"
        super().__init__(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        result = super().invoke(ctx)
        if ctx.invoked_subcommand is None:
            click.echo(ctx.get_help(), err=True)
            ctx.exit(EXIT_USAGE)
        return result


DIR_HELP = ("The workspace: the folder holding mindgraph.yml, raw/ and wiki/ (default: the "
            "nearest folder upwards from here that holds mindgraph.yml, as git finds its "
            "repository). A folder given with -C is the workspace itself: it is not "
            "searched upwards.")
CONFIG_HELP = "Config file (default: <dir>/mindgraph.yml if present)."


def dir_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add -C/--dir (the workspace folder, default None: discover it)."""
    return click.option("--dir", "-C", "base_dir", default=None, help=DIR_HELP,
                        type=click.Path(file_okay=False, path_type=Path))(func)


def config_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --config (an explicit config file)."""
    return click.option("--config", "config_path", default=None, help=CONFIG_HELP,
                        type=click.Path(path_type=Path))(func)


def group_workspace_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --dir and --config to a command group (``mindgraph graph -C DIR hubs``).

    Given between the group and its subcommand they replace those given before the group;
    the subcommand's own still win (see workspace_location).
    """

    @dir_option
    @config_option
    @functools.wraps(func)
    def wrapper(*args: Any, base_dir: Path | None, config_path: Path | None,
                **kwargs: Any) -> Any:
        root = click.get_current_context().find_root()
        root.obj = dict(root.obj or {})
        if base_dir is not None:
            root.obj["base_dir"] = base_dir
        if config_path is not None:
            root.obj["config_path"] = config_path
        return func(*args, **kwargs)

    return wrapper


def find_workspace(start: Path) -> Path | None:
    """The nearest folder from ``start`` upwards that holds mindgraph.yml (None: none does)."""
    for folder in (start, *start.parents):
        if (folder / CONFIG_FILENAME).is_file():
            return folder
    return None


def workspace_location(base_dir: Path | None, config_path: Path | None
                       ) -> tuple[Path, Path | None]:
    """The workspace folder and config file a command works on.

    Options given after the command win over those given before it (``mindgraph -C notes
    search x`` = ``mindgraph search x -C notes``); with neither -C nor --config, the nearest
    folder upwards holding mindgraph.yml, else the current folder (which then is no
    workspace, and commands say so).
    """
    ctx = click.get_current_context(silent=True)
    before = (ctx.find_root().obj if ctx is not None else None) or {}
    base_dir = base_dir if base_dir is not None else before.get("base_dir")
    config_path = config_path if config_path is not None else before.get("config_path")
    if base_dir is None and config_path is None:
        try:
            here = Path.cwd().resolve()
        except OSError:                 # the current folder was deleted
            here = None
        base_dir = find_workspace(here) if here is not None else None
        if base_dir == here:
            base_dir = Path(".")        # messages keep naming paths as before
    return (base_dir if base_dir is not None else Path(".")), config_path


def require_workspace(settings: Settings) -> None:
    """Raise the not-a-workspace error when no config file was found and none of raw/, wiki/
    and the state folder exists: the command ran outside a workspace (and would answer as if
    inside an empty one)."""
    if settings.raw_dir.is_dir() or settings.state_dir.is_dir():
        return
    error = settings.not_a_workspace(settings.wiki_dir)
    if error is not None:
        raise error


def workspace_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --dir and --config to a command and pass it ``settings`` instead.

    Domain errors become click errors: ConfigError and InputError exit 2, other
    MindgraphErrors exit 1.
    """

    @dir_option
    @config_option
    @functools.wraps(func)
    def wrapper(*args: Any, base_dir: Path | None, config_path: Path | None,
                **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        try:
            settings = load_settings(*workspace_location(base_dir, config_path))
            return func(*args, settings=settings, **kwargs)
        except (ConfigError, InputError) as exc:
            _json_error(as_json, exc, EXIT_USAGE)
            raise ConfigClickError(terminal_safe(str(exc))) from exc
        except MindgraphError as exc:   # its message may quote a note, a title, an answer
            _json_error(as_json, exc, EXIT_PROBLEMS)
            raise click.ClickException(terminal_safe(str(exc))) from exc

    return wrapper


def _json_error(as_json: bool, exc: Exception, code: int) -> None:
    """With --json, an error is a JSON document on stdout too (the message also goes to
    stderr), so an agent parsing stdout learns what went wrong."""
    if as_json:
        emit_json({"error": type(exc).__name__, "detail": str(exc), "exit_code": code})


def trust_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --min-trust L0..L3 and --fresh, passed on as ``trust`` (a TrustCriteria)."""
    from ..trust.answer import TrustCriteria

    @click.option("--min-trust", "min_trust", default=None, metavar="L0..L3",
                  help="Only pages verified to at least this level (L2: claims checked "
                       "against the evidence); what is left out is said.")
    @click.option("--fresh", is_flag=True,
                  help="Only pages whose verification is current (not stale).")
    @functools.wraps(func)
    def wrapper(*args: Any, min_trust: str | None, fresh: bool, **kwargs: Any) -> Any:
        try:
            trust = TrustCriteria.parse(min_trust, fresh)
        except InputError as exc:
            raise click.BadParameter(str(exc), param_hint="--min-trust") from None
        return func(*args, trust=trust, **kwargs)

    return wrapper


def configured_llm(settings: Settings, option: str, otherwise: str) -> Any:
    """The LLM that ``option`` (e.g. "--validator llm") asks for; a usage error naming
    compile.provider, and ``otherwise``, when none is configured."""
    from ..providers.llm.factory import make_llm_provider

    llm = make_llm_provider(settings)
    if llm is None:
        raise click.UsageError(f"{option} needs an LLM: set compile.provider (anthropic, gemini "
                               f"or openai) in {settings.source}, or {otherwise}.")
    return llm


def emit_run(run: Any, as_json: bool) -> None:
    """An apply run of the ledger (trust/ledger.Run): its JSON, or one line and the files
    that changed outside the plan."""
    if as_json:
        emit_json(run.to_dict())
        return
    echo(f"run {run.run_id}: {run.process_status} / {run.result_status}; "
         f"{len(run.written)} of {run.targets} page(s) written"
         + (f", {len(run.not_written)} not written" if run.not_written else ""))
    for path in run.not_written:
        echo(f"  not written: {path}")
    for path in run.outside_scope:
        echo(f"  outside the plan: {path}")


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --json (machine-readable output on stdout)."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Print machine-readable JSON instead of text.")(func)


def emit_json(value: Any, indent: int | None = 2, err: bool = False) -> None:
    """Print one JSON document (on stdout). JSON escapes C0 control characters itself; DEL
    and C1 (a terminal may read U+009B as CSI) are written as ``\\u009b`` too: the same
    JSON."""
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    click.echo(_C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text), err=err)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"[\n\t\u2028\u2029]")
_C1 = re.compile(r"[\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """``text`` as a terminal may show it: every control character but newline and tab (C0,
    DEL, C1) written out as ``\\x1b``, so text that came from notes, agents or the network
    (a query in the usage log, a title, a snippet) cannot recolour the terminal, move its
    cursor, set its title or write the clipboard (OSC 52); bidirectional overrides and isolates
    (U+202A-U+202E, U+2066-U+2069), which reorder how a line reads, as ``\\u202e``."""
    return _CONTROL.sub(_escaped, text)


def one_line(text: str) -> str:
    """``terminal_safe`` for a field printed on a line of its own (a query in the usage
    summary): line breaks and tabs written out too, so a query cannot fake rows below it."""
    return terminal_safe(_LINE_BREAKS.sub(_escaped, text))


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def echo(message: Any = "", err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of ``message`` made ``terminal_safe``: how every command prints text
    (``emit_json`` prints JSON, which escapes control characters itself)."""
    click.echo(terminal_safe(str(message)), err=err, nl=nl)


def is_terminal() -> bool:
    """True when stderr is a terminal (progress bars go there)."""
    return sys.stderr.isatty()


__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "Settings", "SubcommandGroup", "config_option",
           "dir_option", "echo", "emit_json", "find_workspace", "group_workspace_options",
           "is_terminal", "json_option", "one_line", "require_workspace", "terminal_safe", "trust_options",
           "workspace_location", "workspace_options"]


def open_core(settings: Settings) -> Any:
    """The workspace as the CLI's identity sees it: ``scopes.local`` (by default the owner,
    who sees every page)."""
    from ..core import Mindgraph

    mg = Mindgraph(settings)
    return mg.as_identity(mg.scopes.local)
