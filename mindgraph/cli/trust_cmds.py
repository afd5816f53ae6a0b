"""`mindgraph verify` (plan; --apply with the approved digest), `audit` and `runs`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from ..core import Mindgraph
from .common import (EXIT_PROBLEMS, configured_llm, echo, emit_json, emit_run, json_option,
                     terminal_safe, workspace_options)


@click.command("verify")
@click.argument("pages", nargs=-1)
@click.option("--due", is_flag=True,
              help="Only pages that are stale, never verified, due within 7 days, or whose "
                   "record quotes a file out of their scope's reach.")
@click.option("--validator", type=click.Choice(["offline", "llm"]), default="offline",
              show_default=True, help="Who judges the claims: the offline validator, or the "
                                      "LLM configured under compile (provider, model, key).")
@click.option("--fetch/--no-fetch", default=None,
              help="Fetch the URLs pages cite (default: trust.fetch_urls, off). Off, the "
                   "copies fetched before are used and what is lacking is said.")
@click.option("--apply", "plan_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Apply this plan (the path `mindgraph verify` printed).")
@click.option("--approve", "digest", default="", metavar="DIGEST",
              help="The plan's digest, as printed: the approval that lets --apply write.")
@workspace_options
@json_option
def verify_command(settings, pages: tuple[str, ...], due: bool, validator: str,
                   fetch: bool | None, plan_path: Path | None, digest: str,
                   as_json: bool) -> None:
    """Check pages' claims against their evidence and plan the records to write.

    Without --apply nothing but a plan (under the state folder) is written; its digest is
    printed. `--apply PLAN --approve DIGEST` writes only the `verification` and `evidence`
    frontmatter keys of the planned pages, and only if the digest matches and no page
    changed since planning. PAGES are wiki-relative paths or folders, or pages named by
    title, alias or file name as `get` names them (default: all).
    """
    trust = Mindgraph(settings).trust
    if plan_path is not None:
        if not digest:
            raise click.UsageError("--apply needs --approve DIGEST (the digest `mindgraph "
                                   "verify` printed with the plan).")
        result = trust.apply(plan_path, digest)
        run = result.run
        emit_run(run, as_json)
        if not result.applied:
            raise click.ClickException(terminal_safe(run.reason))
        return
    if digest:
        raise click.UsageError("--approve goes with --apply PLAN.")
    llm = configured_llm(settings, "--validator llm", "use the offline validator") \
        if validator == "llm" else None
    planned = trust.plan(pages, due=due, llm=llm, fetch=fetch)
    if as_json:
        emit_json(planned.to_dict())
        return
    counts = {v: sum(1 for p in planned.verdicts if p.verdict == v)
              for v in ("pass", "warn", "fail", "unverifiable")}
    echo(f"checked {len(planned.verdicts) + planned.unchanged} page(s) "
         f"({planned.plan.validator}): "
         + ", ".join(f"{k} {n}" for k, n in counts.items())
         + (f", unchanged {planned.unchanged}" if planned.unchanged else ""))
    for verdict in planned.verdicts:
        if verdict.verdict == "pass":
            continue
        record = verdict.verification
        echo(f"  {verdict.verdict:<12} {verdict.path}: {verdict.supported}/"
             f"{verdict.claims} claims supported → L{record.level} {record.status}")
    for path, why in planned.skipped:
        echo(f"  skipped      {path}: {why}")
    _echo_evidence(planned)
    if planned.path is None:
        echo(f"nothing to write: {planned.unchanged} page(s) already hold these records; "
             f"no plan saved.")
        return
    plan = _shown(planned.path)
    echo(f"plan    {plan} ({len(planned.plan.targets)} page(s); nothing written yet)")
    echo(f"digest  {planned.plan.digest}")
    echo(f"apply   mindgraph verify --apply {plan} --approve {planned.plan.digest}")


LACKED_SHOWN = 5


def _echo_evidence(planned) -> None:
    """What the planned records say, how the evidence was read, and what was lacked (by
    reason, a few sources each; --json has all)."""
    outcomes = Counter(f"L{v.verification.level} {v.verification.status}"
                       for v in planned.verdicts)
    if outcomes:
        echo("records  " + ", ".join(f"{k} {n}" for k, n in sorted(outcomes.items())))
    if planned.evidence:
        echo("evidence " + ", ".join(f"{k} {n}" for k, n in planned.evidence.items()))
    _echo_refused(planned.refused)
    refused = {(r.page, r.ref) for r in planned.refused}
    lacked: dict[str, list[tuple[str, str]]] = {}
    for verdict in planned.verdicts:
        for source in verdict.evidence.sources:
            if not source.available and (verdict.path, source.ref) not in refused:
                lacked.setdefault(source.reason, []).append((source.ref, verdict.path))
    for reason, items in lacked.items():
        pages = len({page for _, page in items})
        echo(f"  lacked       {len(items)} source(s) on {pages} page(s): {reason}")
        for ref, page in items[:LACKED_SHOWN]:
            echo(f"               {ref} ({page})")
        if len(items) > LACKED_SHOWN:
            echo(f"               ... and {len(items) - LACKED_SHOWN} more (--json "
                 f"has all)")


def _echo_refused(refused) -> None:
    """The files pages cite that they may not read (another scope, the state folder, the
    configuration, outside raw/ and wiki/): each one, with the page, where it points and both
    scopes, so that a citation across scopes is seen before the plan is approved. None of
    them counts as evidence."""
    if not refused:
        return
    pages = len({r.page for r in refused})
    echo(f"  refused      {len(refused)} cited file(s) on {pages} page(s), not read and "
         f"not counted as evidence:")
    for item in refused:
        page = f"{item.page} ({item.page_scope})" if item.page_scope else item.page
        target = f"{item.target} ({item.target_scope})" if item.target_scope else item.target
        why = item.reason.removesuffix("; not read").split(":", 1)[0].removeprefix("is ")
        why = why.replace(f" ({item.page_scope})", "")
        echo(f"               {target}, cited by {page}: {why}")


def _shown(path: Path) -> Path:
    """A path as short as it can be said from here (relative inside the current folder)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


@click.command("audit")
@click.option("--fail-under", "fail_under", type=click.FloatRange(0, 100), default=None,
              metavar="PCT", help="Exit 1 when the fresh-L2 coverage is below PCT (for CI).")
@workspace_options
@json_option
def audit_command(settings, fail_under: float | None, as_json: bool) -> None:
    """Report trust coverage: fresh L2 over evidence-capable pages, stale pages, what is due."""
    report = Mindgraph(settings).trust.audit()
    if as_json:
        emit_json(report.to_dict())
    else:
        echo(f"pages             {report.pages}")
        echo(f"evidence-capable  {report.evidence_capable}")
        echo(f"fresh L2          {report.fresh_l2}")
        echo(f"coverage          {report.coverage_pct:.2f}%")
        echo(f"threshold         {report.threshold_count} "
             f"({report.threshold_pct:g}%), surplus {report.surplus}")
        echo("levels            " + ", ".join(f"{k} {v}"
                                              for k, v in report.by_level.items()))
        echo(f"stale             {report.stale_pages}: " + ", ".join(
            f"{k} {v}" for k, v in report.stale.items()))
        echo("due               " + ", ".join(f"{k} {v}" for k, v in report.due.items()))
        for path in report.disputed:
            echo(f"disputed          {path}")
        if report.surplus < 0:
            # the figures alone left a newcomer at "coverage 0.00%" with no way on
            echo(f"next              the threshold needs {-report.surplus} more fresh L2 "
                 f"page(s): run `mindgraph verify --due` (it plans the checks), then the "
                 f"`mindgraph verify --apply` line it prints")
    if fail_under is not None and report.coverage_pct < fail_under:
        echo(f"coverage {report.coverage_pct:.2f}% is under --fail-under "
             f"{fail_under:g}%", err=True)
        raise SystemExit(EXIT_PROBLEMS)


@click.command("runs")
@workspace_options
@json_option
def runs_command(settings, as_json: bool) -> None:
    """List the verification runs (plans and applies) from the run ledger."""
    runs = Mindgraph(settings).trust.runs()
    if as_json:
        emit_json(runs)
        return
    if not runs:
        echo("no verification runs yet; `mindgraph verify` makes a plan.")
    for run in runs:
        pages = f"{run.get('targets', 0):>4} page(s)"
        if str(run.get("kind", "")).endswith("apply"):     # what it wrote of its plan
            pages = f"{len(run.get('written') or []):>4} of {run.get('targets', 0)} page(s) written"
        echo(f"{run.get('finished', '')}  {run.get('run_id', '')}  "
             f"{run.get('kind', ''):<5}  {run.get('process_status', ''):<8}  "
             f"{run.get('result_status', ''):<18}  {pages}  "
             f"{str(run.get('digest', ''))[:16]}  {run.get('reason', '')}".rstrip())


def register(group: click.Group) -> None:
    """Add these commands to the CLI group."""
    for command in (verify_command, audit_command, runs_command):
        group.add_command(command)
