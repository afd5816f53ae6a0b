"""`mindgraph propagate`: draft the pages a changed fact affects; apply only with approval."""

from __future__ import annotations

import difflib
from pathlib import Path

import click

from ..core import Mindgraph
from ..propagate.changes import FactChange
from .common import (configured_llm, echo, emit_json, emit_run, json_option, terminal_safe,
                     workspace_options)


@click.command("propagate")
@workspace_options
@click.option("--plan", "make_plan", is_flag=True,
              help="Find what changed since the last run (or take --old/--new), draft the "
                   "affected pages and queue a plan (the default; writes no page).")
@click.option("--old", "old", help="A correction: the statement as the wiki has it ...")
@click.option("--new", "new", help="... and as it should be (with --old).")
@click.option("--drafter", type=click.Choice(["offline", "llm"]), default="offline",
              show_default=True, help="Who drafts: offline rules, or the configured LLM.")
@click.option("--apply", "plan_path", type=click.Path(path_type=Path),
              help="Apply this plan (a path, or its name from the queue) ...")
@click.option("--approve", "digest", help="... when this is its digest (with --apply).")
@click.option("--queue", "show_queue", is_flag=True, help="List the plans awaiting approval.")
@json_option
def propagate_command(settings, make_plan: bool, old: str | None, new: str | None,
                      drafter: str, plan_path: Path | None, digest: str | None,
                      show_queue: bool, as_json: bool) -> None:
    """When a fact changes, find the pages that still state it and draft their update
    (offline: the changed numbers substituted, or the passage marked; with an LLM: the
    passage rewritten). Drafts wait in a queue as a plan; only --apply PLAN --approve DIGEST
    writes them, to wiki/ only (raw/ is never written), and the change makes those pages'
    trust stale."""
    settings.require_wiki()
    service = Mindgraph(settings).propagation
    if plan_path is not None or digest is not None:
        if plan_path is None or not digest:
            raise click.UsageError("--apply PLAN needs --approve DIGEST (the digest "
                                   "`mindgraph propagate --plan` printed).")
        run = service.apply(plan_path, digest)
        emit_run(run, as_json)
        if run.process_status != "SUCCESS":     # why, on stderr (as verify --apply says it)
            raise click.ClickException(terminal_safe(run.reason))
        return
    if show_queue:
        queue = service.queue()
        if as_json:
            emit_json({"plans": queue})
            return
        for item in queue:
            echo(f"{item['plan']}  {len(item['targets'])} page(s)  digest {item['digest']}")
        echo(f"{len(queue)} plan(s) awaiting approval.")
        return
    if (old is None) != (new is None):
        raise click.UsageError("--old and --new go together: the statement as the wiki has it "
                               "and as it should be.")
    stated = FactChange("", old, new) if old is not None and new is not None else None
    llm = configured_llm(settings, "--drafter llm", "draft offline") if drafter == "llm" \
        else None
    planned = service.plan(stated, llm)
    if as_json:
        emit_json({"baseline": planned.baseline,
                   "changes": [vars(c) for c in planned.changes],
                   "plan": str(planned.path) if planned.path else None,
                   "digest": planned.plan.digest if planned.plan else None,
                   "targets": planned.plan.to_dict(texts=False)["targets"] if planned.plan
                   else [], "skipped": planned.skipped})
        return
    if planned.baseline:
        echo(f"baseline taken: the statements of {len(service.vault_loader().pages)} "
             f"pages. Run `mindgraph propagate` again after a change (or give --old and "
             f"--new).")
        return
    for change in planned.changes:
        where = change.page or "correction"
        echo(f"changed  {where}: “{change.old}” → “{change.new}”")
    for note in planned.skipped:
        echo(f"skipped  {note}")
    if planned.plan is None:
        reach = " they may reach (scopes)" if service.scopes.enabled else ""
        echo(f"{len(planned.changes)} change(s); no other page{reach} states them: "
             f"nothing to queue.")
        return
    for target in planned.plan.targets:
        echo(f"  {target.how:11} {target.path}")
        current = (settings.wiki_dir / target.path).read_text(encoding="utf-8").split("\n")
        for line in _changed_lines(current, target.text.split("\n"))[:4]:
            echo(f"      {line[:160]}")
    shown = _shown(planned.path)
    echo(f"plan    {shown} ({len(planned.plan.targets)} page(s); nothing written yet)")
    echo(f"digest  {planned.plan.digest}")
    echo(f"apply   mindgraph propagate --apply {shown} --approve {planned.plan.digest}")


def _shown(path: Path) -> str:
    """A path as the person can type it: relative to where they are, when it is below."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _changed_lines(before: list[str], after: list[str]) -> list[str]:
    """The lines a draft removes (-) and adds (+), for the person who approves it."""
    return [line for line in difflib.unified_diff(before, after, lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def register(group: click.Group) -> None:
    """Add this command to the CLI group."""
    group.add_command(propagate_command)
