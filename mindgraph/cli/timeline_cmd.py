"""`mindgraph timeline CONCEPT`: how a concept evolved, from the dated notes that mention it."""

from __future__ import annotations

import click

from ..page.dates import TOP_LINES
from .common import echo, emit_json, json_option, open_core, require_workspace, workspace_options
from .whole_number import WholeNumber


@click.command("timeline")
@click.argument("concept")
@workspace_options
@click.option("--newest-first", is_flag=True, help="Newest note first (default: oldest first).")
@click.option("--since", type=click.DateTime(["%Y-%m-%d"]), default=None,
              help="Only notes dated on or after this day (YYYY-MM-DD).")
@click.option("--until", type=click.DateTime(["%Y-%m-%d"]), default=None,
              help="Only notes dated on or before this day (YYYY-MM-DD).")
@click.option("--limit", "-n", type=WholeNumber(min=1, max=10_000), default=None,
              help="Show at most this many notes.")
@click.option("--no-git", is_flag=True, help="Do not read dates from the git history.")
@json_option
def timeline_command(settings, concept: str, newest_first: bool, since, until,
                     limit: int | None, no_git: bool, as_json: bool) -> None:
    """List every dated note (raw and wiki) that mentions CONCEPT, in date order."""
    require_workspace(settings)
    timeline = open_core(settings).timeline(concept, since=since.date() if since else None,
                                            until=until.date() if until else None,
                                            newest_first=newest_first, limit=limit,
                                            use_git=not no_git)
    if as_json:
        emit_json(timeline.to_dict())
        return
    undated = _undated(timeline.undated, use_git=not no_git)
    if not timeline.entries:
        echo(f"No dated note mentions {concept!r} (searched for: "
             f"{', '.join(timeline.terms)}).{undated}")
        return
    # each note where it is: "raw/v1.1.0.md" named no file when paths.raw is ../vault
    shown_as = {"raw": settings.paths.raw, "wiki": settings.paths.wiki}
    for entry in timeline.entries:
        folder = shown_as.get(entry.folder, entry.folder).rstrip("/")
        echo(f"{entry.date}  [{entry.date_source}]  {folder}/{entry.path}")
        echo(f"    {entry.snippet}")
    count, total = len(timeline.entries), timeline.total
    shown = f"showing {count} of " if count < total else ""
    echo(f"{shown}{total} note{'' if total == 1 else 's'} "
         f"{'that ' if shown else ''}mention{'s' if total == 1 and not shown else ''} "
         f"{concept!r} (terms: {', '.join(timeline.terms)}).{undated}")


def _undated(count: int, use_git: bool) -> str:
    """" N undated notes mention it too …": where a date was looked for (page/dates.py's
    rules), so a date written lower in a note is not taken for one that was missed."""
    if not count:
        return ""
    its = "its" if count == 1 else "their"
    places = (f"{its} frontmatter (created, date, updated, …), {its} title or first heading, "
              f"{its} first {TOP_LINES} lines (a date alone on a line or after a word such as "
              f"'Released'), {its} file name{' or git' if use_git else ''}")
    return (f" {count} undated note{' mentions' if count == 1 else 's mention'} it too: no "
            f"date in {places}; a date anywhere else in a note does not date it.")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(timeline_command)
