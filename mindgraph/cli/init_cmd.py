"""`mindgraph init`: scaffold mindgraph.yml, raw/ and wiki/ in a folder."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import CONFIG_FILENAME, DEFAULT_CONFIG_YAML, load_settings
from ..errors import ConfigError
from .common import ConfigClickError, echo, emit_json, json_option


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option("--force", is_flag=True, help="Overwrite an existing mindgraph.yml.")
@json_option
def init_command(directory: Path, force: bool, as_json: bool) -> None:
    """Create mindgraph.yml, raw/ and wiki/ in DIRECTORY (default: the current folder, or
    the -C DIR given before the command)."""
    before = (click.get_current_context().find_root().obj or {}).get("base_dir")
    if before is not None:
        directory = before / directory
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / CONFIG_FILENAME
    created = []
    if config.exists() and not force:
        note = f"{config} already exists; kept it (use --force to overwrite)."
    else:
        config.write_text(DEFAULT_CONFIG_YAML, encoding="utf-8")
        created.append(str(config))
        note = f"Wrote {config}."
    try:
        settings = load_settings(directory)
    except ConfigError as exc:
        raise ConfigClickError(str(exc)) from exc
    for folder in (settings.raw_dir, settings.wiki_dir):
        if not folder.exists():
            folder.mkdir(parents=True)
            created.append(str(folder))
    if as_json:
        emit_json({"config": str(config), "created": created,
                   "raw": str(settings.raw_dir), "wiki": str(settings.wiki_dir)})
        return
    echo(note)
    echo(f"Put your notes in {settings.raw_dir}, then run: mindgraph ingest -C {directory}")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(init_command)
