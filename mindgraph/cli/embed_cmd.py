"""`mindgraph embed`: embed new and changed wiki sections into the vector store."""

from __future__ import annotations

import click

from ..config import Settings
from ..core import Mindgraph
from ..fsutil import writing_nothing
from ..vectors.lock import embed_lock
from ..vectors.sync import SyncReport
from .common import echo, emit_json, is_terminal, json_option, workspace_options
from .progress import Progress


@click.command("embed")
@workspace_options
@click.option("--dry-run", is_flag=True,
              help="Say what would be embedded and removed; no model is loaded, no API called.")
@click.option("--drop-other-models", is_flag=True,
              help="Also delete the vectors of every other embedding model from the store.")
@click.option("--rebuild-index", is_flag=True,
              help="Then build the model's approximate index (pgvector's HNSW, the embedded "
                   "store's graph) again with the configured settings; queries use the old "
                   "one until the new one is ready.")
@click.option("--no-wait", is_flag=True,
              help="When another embed is running in this workspace, fail (exit 1) instead "
                   "of waiting for it to finish.")
@json_option
def embed_command(settings: Settings, dry_run: bool, drop_other_models: bool,
                  rebuild_index: bool, no_wait: bool, as_json: bool) -> None:
    """Embed new and changed wiki sections into the vector store; remove deleted ones.

    Unchanged sections are skipped (a re-run makes no embedding call). The model and store
    come from mindgraph.yml (embedding.*, store.*); the default is the offline MiniLM model
    and the embedded store under the state folder. One embed runs at a time in a workspace:
    a second waits for the first (--no-wait: fails), then embeds what is left.
    """
    def notice(message: str) -> None:       # on stderr: stdout may be --json
        echo(message[0].upper() + message[1:] + ".", err=True)

    settings.require_wiki()             # first: outside a workspace say so, creating nothing
    mg = Mindgraph(settings)
    mg.save_state_files = not dry_run       # to its close: a dry run writes nothing there
    try:
        # held from the plan on: a second embed plans after the first has stored its vectors
        # (in the workspace, and with pgvector in the table: another workspace's embed); a
        # dry run writes nothing under the state folder, not even the model files' digests
        with writing_nothing() if dry_run else \
                embed_lock(settings.state_dir, wait=not no_wait, notice=notice,
                           store=mg.vector_store(), holder="embed"):
            plan = mg.plan_embed()
            keep = sorted(p.path for p in mg.vault().problems if p.path not in mg.vault().pages)
            # a bar on a terminal (not under --json); elsewhere a line now and then
            if not dry_run and not (as_json and is_terminal()) and plan.to_embed:
                # the ETA in tokens: a chunk's time goes with its tokens (cli/eta.py)
                with Progress("Embedding", "chunks", len(plan.to_embed),
                              work=[c.tokens for c in plan.to_embed]) as progress:
                    report, dropped = mg.embed(plan=plan, drop_other_models=drop_other_models,
                                               progress=progress.advance,
                                               rebuild_index=rebuild_index, notice=notice)
            else:
                report, dropped = mg.embed(plan=plan, dry_run=dry_run,
                                           drop_other_models=drop_other_models,
                                           rebuild_index=rebuild_index, notice=notice)
    finally:
        mg.close()
    if as_json:
        emit_json({**report.as_dict(), "dropped_models": dropped, "unreadable_pages": keep})
        return
    _print_summary(report, dropped, keep)
    if not report.pages and not report.removed_pages:
        from .no_pages import why_no_pages      # "0 of 0 chunks from 0 pages" said no more
        echo(why_no_pages(settings))


def _print_summary(report: SyncReport, dropped: dict[str, int], keep: list[str]) -> None:
    verb = "Would embed" if report.dry_run else "Embedded"
    removed = "would remove" if report.dry_run else "removed"
    echo(f"{verb} {report.embedded} of {report.chunks} chunks from {report.pages} pages "
         f"({report.unchanged} unchanged); {removed} {report.deleted_chunks} chunks"
         + (f" of {len(report.removed_pages)} deleted pages" if report.removed_pages
            else "") + f" in {report.seconds:.1f} s.")
    echo(f"Model {report.model_version}; {report.store}.")
    for reason in report.refused:
        echo(f"Refused {reason}", err=True)
    for repair in report.repaired:
        echo(f"Warning: {repair}.", err=True)     # each names the file and the fix
    if report.index_rebuilt:
        echo(report.index_rebuilt[0].upper() + report.index_rebuilt[1:] + ".")
    for warning in report.index_warnings:
        echo(f"Warning: {warning}", err=True)
    if keep:
        several = len(keep) != 1
        echo(f"Skipped {len(keep)} unreadable page{'s' if several else ''}: any vectors "
             f"stored for {'them' if several else 'it'} are kept (`mindgraph check` says "
             f"why).", err=True)
    if dropped:
        what = "Would drop" if report.dry_run else "Dropped"
        for model, count in sorted(dropped.items()):
            echo(f"{what} {count} vectors of {model}.")
    elif report.other_models:
        others = ", ".join(f"{m} ({n})" for m, n in sorted(report.other_models.items()))
        echo(f"The store also holds vectors of other models: {others}. They are never "
             f"compared with these; delete them with --drop-other-models.")
    if report.dry_run:
        echo("Dry run: nothing was embedded or written.")


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(embed_command)
