"""Options and error handling shared by every command.

Exit codes: 0 ok, 1 problems found (or a run with failures), 2 usage or configuration error.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any, Callable

import click

from ..config import Settings, load_settings
from ..errors import ConfigError, InputError, MindgraphError

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2


class ConfigClickError(click.ClickException):
    """A configuration error: exit code 2, like click's own usage errors."""

    exit_code = EXIT_USAGE


def workspace_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --dir and --config to a command and pass it ``settings`` instead.

    Domain errors become click errors: ConfigError and InputError exit 2, other
    MindgraphErrors exit 1.
    """

    @click.option("--dir", "-C", "base_dir", type=click.Path(file_okay=False, path_type=Path),
                  default=Path("."), show_default=True,
                  help="Base directory holding mindgraph.yml, raw/ and wiki/.")
    @click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
                  default=None, help="Config file (default: <dir>/mindgraph.yml if present).")
    @functools.wraps(func)
    def wrapper(*args: Any, base_dir: Path, config_path: Path | None, **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        try:
            settings = load_settings(base_dir, config_path)
            return func(*args, settings=settings, **kwargs)
        except (ConfigError, InputError) as exc:
            _json_error(as_json, exc, EXIT_USAGE)
            raise ConfigClickError(str(exc)) from exc
        except MindgraphError as exc:
            _json_error(as_json, exc, EXIT_PROBLEMS)
            raise click.ClickException(str(exc)) from exc

    return wrapper


def _json_error(as_json: bool, exc: Exception, code: int) -> None:
    """With --json, an error is a JSON document on stdout too (the message also goes to
    stderr), so an agent parsing stdout learns what went wrong."""
    if as_json:
        emit_json({"error": type(exc).__name__, "detail": str(exc), "exit_code": code})


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --json (machine-readable output on stdout)."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Print machine-readable JSON instead of text.")(func)


def emit_json(value: Any) -> None:
    """Print one JSON document on stdout."""
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def is_terminal() -> bool:
    """True when stderr is a terminal (progress bars go there)."""
    return sys.stderr.isatty()


__all__ = ["EXIT_OK", "EXIT_PROBLEMS", "EXIT_USAGE", "Settings", "emit_json", "is_terminal",
           "json_option", "workspace_options"]
