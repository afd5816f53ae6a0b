"""`mindgraph create` and `mindgraph update`: write to the note app, never into raw/.

Both go through the adapter (adapters/apps.py); the item reaches raw/ with the next `pull`.
``create_result`` builds the answer of `create` in one place, so that options that add to it
(e.g. a relevance block) extend that one dict.
"""

from __future__ import annotations

from typing import Any

import click

from ..adapters.apps import NoteApps
from ..config import Settings
from .common import echo, emit_json, json_option, workspace_options

APP_HELP = "The note app (an adapters: entry) when several are configured."


def create_result(settings: Settings, title: str, *, content: str = "",
                  project: str | None = None, app: str | None = None,
                  relevance: bool = False) -> dict[str, Any]:
    """What `create` answers: the new item, its deep link and the raw note pull will file;
    with ``relevance``, the instruction block that has the calling agent pick a trunk of the
    live Trunk Catalog (mindgraph/triage/). The item is created first: a missing or broken
    catalog leaves it created and says what to fix in ``relevance_error``."""
    result = NoteApps(settings).create(title, content, project, app)
    if relevance:
        from ..core import Mindgraph
        from ..triage.service import with_relevance
        with_relevance(Mindgraph(settings), result)
    return result


@click.command("create")
@click.argument("title")
@workspace_options
@click.option("--content", default="", help="The item's text (markdown).")
@click.option("--project", "-p", default=None, metavar="P",
              help="The project (list) by name or id (default: the app's inbox).")
@click.option("--app", default=None, metavar="NAME", help=APP_HELP)
@click.option("--relevance", is_flag=True,
              help="Also print the instruction block that tells the calling agent to pick a "
                   "trunk of the Trunk Catalog and `update` the item with one `why:` line.")
@json_option
def create_command(settings: Settings, title: str, content: str, project: str | None,
                   app: str | None, relevance: bool, as_json: bool) -> None:
    """Create an item in the note app (raw/ is not written: `pull` brings it in)."""
    result = create_result(settings, title, content=content, project=project, app=app,
                           relevance=relevance)
    _emit(result, as_json)


@click.command("update")
@click.argument("item")
@workspace_options
@click.option("--title", default=None, help="The new title.")
@click.option("--content", default=None, help="The new text (replaces it).")
@click.option("--append", default=None, metavar="LINE",
              help="A line to add at the end of the text.")
@click.option("--app", default=None, metavar="NAME", help=APP_HELP)
@json_option
def update_command(settings: Settings, item: str, title: str | None, content: str | None,
                   append: str | None, app: str | None, as_json: bool) -> None:
    """Change an item in the note app. ITEM is its id, the raw path of its pulled note or
    its exact title."""
    result = NoteApps(settings).update(item, title=title, content=content, append=append,
                                       app=app)
    _emit(result, as_json)


def _emit(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(result)
        return
    item = result["item"]
    where = f" in {item['project_name']}" if item.get("project_name") else ""
    echo(f"{result['action'].capitalize()} {item['title']!r}{where} "
         f"({result['app']}, id {item['id']}).")
    echo(f"  {result['url']}")
    if result.get("raw_note"):
        echo(f"  `mindgraph pull` files it as raw/{result['raw_note']}")
    elif result.get("next"):        # e.g. the app's listing is over limits.max_pull_bytes
        echo(f"  {result['next']}", err=True)
    if result.get("relevance"):
        echo("\n" + result["relevance"])
    elif result.get("relevance_error"):
        echo(f"No relevance block: {result['relevance_error']}", err=True)


def register(group: click.Group) -> None:
    """Add `create` and `update` to the CLI group."""
    group.add_command(create_command)
    group.add_command(update_command)
