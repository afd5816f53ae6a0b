"""`mindgraph watch`: keep the wiki, the indexes and the vectors current as files change;
``watch_options`` and ``served`` give `serve --watch` and `mcp --watch` the same."""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import click

from ..core import Mindgraph
from .common import (echo, emit_json, json_option, require_workspace, terminal_safe,
                     workspace_options)
from .raw_folder import require_raw_folder
from .whole_number import WholeNumber


def watch_flag(func: Callable[..., Any]) -> Callable[..., Any]:
    """--watch for the servers, passed on as ``watch_on``."""
    return click.option("--watch", "watch_on", is_flag=True,
                        help="Also watch raw/ and wiki/ and keep the wiki, indexes and vectors "
                             "current (as `mindgraph watch`; its log goes to stderr).")(func)


def watch_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--polling, --poll-interval-ms, --debounce-ms and --no-embed, passed on as ``watch``
    (a dict of Watcher keyword arguments)."""

    @click.option("--polling", is_flag=True,
                  help="Notice changes by periodic stat scans instead of native file-system "
                       "events (chosen by itself on network and FUSE file systems).")
    @click.option("--poll-interval-ms", type=WholeNumber(50, 600_000), default=1000,
                  show_default=True, help="Time between stat scans with --polling.")
    @click.option("--debounce-ms", type=WholeNumber(0, 60_000), default=500,
                  show_default=True, help="Quiet time that ends a burst of changes.")
    @click.option("--no-embed", "no_embed", is_flag=True,
                  help="Compile and re-index only; leave the vectors to `mindgraph embed`.")
    @functools.wraps(func)
    def wrapper(*args: Any, polling: bool, poll_interval_ms: int, debounce_ms: int,
                no_embed: bool, **kwargs: Any) -> Any:
        return func(*args, watch={"polling": polling, "poll_interval_ms": poll_interval_ms,
                                  "debounce_ms": debounce_ms, "embed": not no_embed},
                    **kwargs)

    return wrapper


def start_watcher(mg: Mindgraph, options: dict[str, Any], as_json: bool = False,
                  err: bool = True) -> Any:
    """A watcher over ``mg`` that prints one line (or JSON object) per change, started in
    background threads (for a server; stderr, since stdout may carry a protocol)."""
    from ..sync import Watcher

    return Watcher(mg, on_run=_printer(as_json, err, mg.settings.paths.raw),
                   on_notice=_notice_printer(as_json, err), **options).start()


@contextlib.contextmanager
def served(mg: Mindgraph, watch_on: bool, options: dict[str, Any]) -> Iterator[Any]:
    """For a server's life: the watcher over ``mg`` when ``watch_on`` (else None), stopped
    when the server stops (SIGTERM, Ctrl-C: exit status 0), and then ``mg`` closed: the state files the
    watcher kept in memory are saved and the wiki watch is released."""
    watcher = start_watcher(mg, options) if watch_on else None
    # uvicorn shuts down on SIGTERM, then raises the signal again under the handler it found:
    # ours (not the default, which kills the process before this cleanup)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield watcher
    except KeyboardInterrupt:
        pass                            # SIGTERM or Ctrl-C once the server has stopped
    finally:
        signal.signal(signal.SIGTERM, previous)
        if watcher is not None:
            watcher.stop(timeout=5)
        mg.close()


def _notice_printer(as_json: bool, err: bool) -> Callable[[str], None]:
    """What a run waits for, as it waits: a line on stderr (beside "Watching ..."), and with
    --json also an object ``{"event": "waiting", "message": ...}`` in the log."""
    def emit(message: str) -> None:
        if as_json:
            emit_json({"event": "waiting", "message": message}, indent=None, err=err)
        echo(f"mindgraph: {message}", err=True)
    return emit


def _printer(as_json: bool, err: bool, raw_label: str) -> Callable[[Any], None]:
    def emit(record: Any) -> None:
        if as_json:
            emit_json(record.to_dict(), indent=None, err=err)
        else:
            echo(record.line(raw_label), err=err)
    return emit


@click.command("watch")
@workspace_options
@watch_options
@json_option
def watch_command(settings, watch: dict[str, Any], as_json: bool) -> None:
    """Watch raw/ (and wiki/ for hand edits): compile, re-index and embed what changed.

    Bursts of events are debounced; a file whose content did not change (by SHA-256) is
    not a change. One line per run says what changed, what was redone and the time taken
    (--json: one JSON object per change). Stop with Ctrl-C; a run stopped halfway (or
    killed) is completed by the next start."""
    from ..sync import Watcher

    require_workspace(settings)
    require_raw_folder(settings)     # else it watches a folder that is not there, silent
    mg = Mindgraph(settings)
    watcher = Watcher(mg, on_run=_printer(as_json, False, settings.paths.raw),
                      on_notice=_notice_printer(as_json, False), **watch)
    if as_json:
        emit_json({"event": "watching", "raw": str(settings.raw_dir),
                   "wiki": str(settings.wiki_dir), "backend": watcher.source.backend},
                  indent=None)
    else:
        echo(f"Watching {settings.raw_dir} and {settings.wiki_dir} "
             f"({watcher.source.backend}); Ctrl-C stops.", err=True)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        watcher.run()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        watcher.stop(timeout=5)
        mg.close()
    if watcher.status.state == "failed":
        raise click.ClickException(terminal_safe(watcher.status.error or "the watcher failed"))
    sys.stdout.flush()


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(watch_command)
