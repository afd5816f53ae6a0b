"""`mindgraph ingest` (compile raw/ into wiki/) and `mindgraph pull` (adapters → raw/)."""

from __future__ import annotations

import functools
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..fsutil import settle_ahead
from ..ingest.report import FileOutcome, IngestReport, Outcome, under_raw
from ..ingest.scan import NOT_A_NOTE
from ..ingest.segmenter_need import may_need_segmenters
from ..text.cjk import check_ahead
from . import common
from .common import (EXIT_PROBLEMS, echo, emit_json, json_option, require_workspace,
                     workspace_options)
from .progress import Phases

if TYPE_CHECKING:
    from ..config import Settings
    from ..core import Mindgraph

LISTED = 20


@click.command("ingest")
@workspace_options
@click.option("--dry-run", is_flag=True, help="Show what would be compiled or removed; write "
              "nothing and call no provider.")
@click.option("--force", is_flag=True, help="Recompile every note, even unchanged ones.")
@click.option("--allow-removals", is_flag=True,
              help="Apply a run that would remove every wiki page, or more than half of them "
                   "and more than 20 (held otherwise: raw/ may be empty, unmounted or the "
                   "wrong folder).")
@click.option("--only", "only", multiple=True, metavar="PATH",
              help="Only this note or folder (relative to raw/, or a path to it). Repeatable.")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Progress of each phase (reading, linking, compiling) with an ETA on "
                   "stderr. Default: a bar on a terminal, else a line every 10 s; --progress "
                   "prints a line every second off a terminal.")
@json_option
def ingest_command(settings, dry_run: bool, force: bool, allow_removals: bool,
                   only: tuple[str, ...], show_progress: bool | None, as_json: bool) -> None:
    """Compile new and changed notes of raw/ into wiki pages (raw/ is never written)."""
    if common.OWN_PROCESS:      # first: the dictionaries hash while this process imports
        # (not for a workspace of English alone, which never loads them: segmenter_need.py)
        check_ahead(settings.state_dir, functools.partial(
            may_need_segmenters, settings.state_dir, settings.raw_dir))
    from ..config import Settings
    from ..core import Mindgraph

    mg = Mindgraph(settings)
    try:
        with Phases("notes", enabled=show_progress is not False,
                    forced=bool(show_progress)) as phases:
            report = mg.ingest(dry_run=dry_run, force=force, only=only,
                               allow_removals=allow_removals,
                               progress=phases.ticker("Compiling"), phases=phases.ticker,
                               notice=_waiting)
    finally:
        settle_ahead(keep=not dry_run)     # "write nothing": not even the digests
    enriched, why = _enrich_after(mg) if report.ingested and not dry_run else (None, "")
    if as_json:
        emit_json(report.to_dict() | ({"enrich": enriched.to_dict()} if enriched else {}))
    else:
        _print_report(report, settings.paths.raw, _wiki_label(settings))
        if report.notes == 0 and not report.removed and not report.kept:
            echo(f"raw/ ({settings.raw_dir}) has no notes yet: put Markdown files "
                 f"there (.md, .markdown or .txt), then run `mindgraph ingest` again.")
        if enriched:
            echo(f"enrich: {enriched.links} inferred link(s), "
                 f"{enriched.summaries_written} summary(ies) by {enriched.judge}.")
    if why:
        echo(why, err=True)
    if report.failed:
        raise SystemExit(EXIT_PROBLEMS)


def _waiting(message: str) -> None:
    """What the run waits for, on stderr (on a line of its own below a progress bar)."""
    echo(("\n" if sys.stderr.isatty() else "") + f"mindgraph: {message}", err=True)


def _enrich_after(mg: Mindgraph):
    """enrich.after_ingest's stage (mindgraph/enrich/stage.py)."""
    if not mg.settings.enrich.after_ingest:
        return None, ""         # off (the default): enrichment is not even imported (73 ms)
    from ..enrich.stage import enrich_after

    return enrich_after(mg)


@click.command("pull")
@workspace_options
@click.option("--adapter", "names", multiple=True, metavar="NAME",
              help="Run only this configured adapter. Repeatable.")
@click.option("--dry-run", is_flag=True, help="Fetch and show what would be written; write "
              "nothing.")
@json_option
def pull_command(settings, names: tuple[str, ...], dry_run: bool, as_json: bool) -> None:
    """Fetch documents from the adapters in mindgraph.yml into raw/ (the only command that
    writes raw/; it overwrites only files it wrote that nobody edited since, filing a document
    beside anything else, and deletes only a note app's notes of items deleted in the app)."""
    from ..adapters.pull import pull

    require_workspace(settings)
    report = pull(settings, names, dry_run=dry_run)
    for item in report.files:       # a file pull may not overwrite: said even with --json
        if item.instead_of and item.status == "written":
            echo(f"{'would keep' if dry_run else 'kept':11} [{item.adapter}] "
                 f"{item.instead_of}: {item.reason}", err=True)
    if as_json:
        emit_json(report.to_dict())
    else:
        for item in report.files:
            if item.status in ("written", "rejected", "failed", "removed", "kept", "skipped",
                               "limited"):
                verb = {"written": "would write", "removed": "would remove"}.get(
                    item.status, item.status) if dry_run else item.status
                detail = f": {item.reason}" if item.reason else ""
                echo(f"{verb:11} [{item.adapter}] {item.path or '-'}{detail}")
        prefix = "Dry run: would write" if dry_run else "Written"
        removed = f", removed {report.removed}" if report.removed else ""
        at_least = any(f.left_out_at_least for f in report.files if f.status == "limited")
        limited = (f", adapters cut at a pull limit {report.limited_adapters} (left out "
                   f"{'at least ' if at_least else ''}{report.left_out:,})"
                   if report.limited_adapters else "")
        echo(f"{prefix} {report.written}, unchanged {report.unchanged}{removed}, "
             f"rejected {report.rejected}, skipped {report.skipped}, failed adapters "
             f"{report.failed_adapters}{limited} "
             f"({report.seconds:.2f} s).")
    if not report.ok:
        raise SystemExit(EXIT_PROBLEMS)


def _wiki_label(settings: Settings) -> str:
    """Where the pages are written, as a dry run names them: relative to the workspace when
    inside it (`wiki`, `build/wiki`), else the whole path (paths.wiki: /srv/kb)."""
    try:
        return settings.wiki_dir.relative_to(settings.base_dir.resolve()).as_posix()
    except ValueError:
        return str(settings.wiki_dir)


def _print_report(report: IngestReport, raw_label: str = "raw", wiki_label: str = "wiki"
                  ) -> None:
    """The run in lines; a raw note is named as `check` names it, under ``raw_label``
    (paths.raw as configured: `raw/a.md:3`, `../vault/a.md:3`); a page a dry run would
    write, under ``wiki_label``."""
    head = "Dry run: would ingest" if report.dry_run else "Ingested"
    sections: tuple[tuple[str, Outcome], ...] = (
        ("Failed", "failed"), ("Moved", "moved"), ("Removed", "removed"), ("Kept", "kept"))
    for title, status in sections:
        _list(title, report.by_status(status), raw_label)
    skipped = report.by_status("skipped")
    attachments = [i for i in skipped if i.reason.startswith(NOT_A_NOTE)]
    _list("Skipped", [i for i in skipped if not i.reason.startswith(NOT_A_NOTE)], raw_label)
    if attachments:
        echo(_attachments_line(attachments))
    # e.g. a hand-edited wiki page replaced because its raw note changed
    _list("Ingested, with a note", [i for i in report.by_status("ingested") if i.reason],
          raw_label)
    if report.dry_run:
        for item in report.by_status("pending")[:LISTED]:
            shown = under_raw(item.path, item.path, raw_label)
            echo(f"  would compile {shown} → {wiki_label}/{item.wiki}")
    if report.held:
        echo(f"Without --dry-run this run would be held: {report.held}")
    moved = f", moved {report.moved}" if report.moved else ""
    echo(f"{head} {report.ingested}, unchanged {report.unchanged}, skipped "
         f"{report.skipped_for_reason}, failed {report.failed}, "
         f"removed {report.removed}, kept {report.kept}{moved}; {report.provider_calls} "
         f"provider calls, {report.seconds:.2f} s ({report.compiler}).")


def _attachments_line(items: list[FileOutcome]) -> str:
    """One line for the files of raw/ that are not notes (images, PDFs …): they are there
    for links to find, on every run, and would bury a real skip listed one by one."""
    kinds = Counter((Path(i.path).suffix.lower().lstrip(".") or "no extension")
                    for i in items)
    named = ", ".join(kind for kind, _ in kinds.most_common())
    return (f"{len(items)} attachment{'s' if len(items) != 1 else ''} ({named}) kept for "
            f"links, not compiled (--json lists them).")


def _list(title: str, items: list[FileOutcome], raw_label: str) -> None:
    if not items:
        return
    echo(f"{title}:")
    for item in items[:LISTED]:
        # several lines (a warning each): one per line, each naming the note under raw/
        message = under_raw(item.message, item.path, raw_label).replace("\n", "\n    ")
        echo(f"  {message}")
    if len(items) > LISTED:
        echo(f"  ... and {len(items) - LISTED} more (--json lists all).")


def register(group: click.Group) -> None:
    """Add `ingest` and `pull` to the CLI group."""
    group.add_command(ingest_command)
    group.add_command(pull_command)
