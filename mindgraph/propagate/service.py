"""Plan a propagation (write nothing but the plan) and apply an approved one (wiki/ only).

A change is drafted only into pages its scope may reach (reach.py): with identities
configured, never into another tenant's pages nor into pages read by someone who may not read
the changed page."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, MindgraphError, NotFoundError, ProviderError
from ..fsutil import atomic_write_bytes, page_inside
from ..page.vault import Vault
from ..scopes.identities import Scopes, load_scopes
from ..trust.ledger import Run, append_run, applying, read_runs
from ..trust.plan import now_iso
from ..trust.scope import (changed_paths, decoded, outside_scope, over_page_limit,
                           snapshot)
from .changes import FactChange, changes_since, load_snapshot, take_snapshot
from .drafts import affected, draft
from .plan import PropagationPlan, Target, load_plan, plans_dir, queued, save_plan
from .reach import ChangeReach

OFFLINE = "offline:v1"
# an apply that wrote pages (all, or some before a write failed) used its plan up
CONSUMED = ("APPLIED", "PROVISIONAL_RETAIN")
_PLAN_NAME = re.compile(r"[0-9a-f]{16}")


@dataclass
class Planned:
    """What `propagate --plan` found and queued."""

    changes: list[FactChange]
    plan: PropagationPlan | None = None
    path: Path | None = None
    baseline: bool = False                # no snapshot yet: one was taken now
    skipped: list[str] = field(default_factory=list)   # pages a provider fault left out


def plan_propagation(vault: Vault, wiki_dir: Path, state_dir: Path, scopes: Scopes, *,
                     stated: FactChange | None = None, llm: Any = None) -> Planned:
    """Find the fact changes (or take ``stated``), draft the affected pages each may reach
    (``scopes``: who reads which page), queue a plan."""
    pages = vault.pages
    if stated is not None:
        changes = [stated]
    else:
        before = load_snapshot(state_dir)
        if before is None:
            take_snapshot(pages, state_dir)
            return Planned([], baseline=True)
        changes = changes_since(before, pages)
    targets: dict[str, Target] = {}
    skipped: list[str] = []
    reach = ChangeReach(scopes, pages)
    for change in changes:
        for page, statement in affected(change, pages, reach):
            if page.path in targets:
                continue       # one draft per page and plan; the next plan takes the rest
            file = wiki_dir / page.path
            data = file.read_bytes()
            try:
                made = draft(change, page, statement, data.decode("utf-8"), llm)
            except ProviderError as exc:
                skipped.append(f"{page.path}: {exc}")
                continue
            targets[page.path] = Target(page.path, hashlib.sha256(data).hexdigest(), made.how,
                                        change.page, change.old, change.new, made.text)
    if not targets:
        if changes and not skipped and stated is None:
            take_snapshot(pages, state_dir)      # nothing else states them: nothing to queue
        return Planned(changes, skipped=skipped)
    drafter = OFFLINE if llm is None else f"llm:{llm.identity}"
    plan = PropagationPlan(tuple(targets[p] for p in sorted(targets)), now_iso(), drafter)
    path = save_plan(plan, state_dir)
    append_run(state_dir, Run("propagate-plan", "SUCCESS", "PLANNED", plan.digest, plan.created,
                              now_iso(), len(plan.targets), plan=str(path)))
    return Planned(changes, plan, path, skipped=skipped)


def apply_propagation(plan_path: Path, approve: str, vault_loader: Any, wiki_dir: Path,
                      raw_dir: Path, state_dir: Path, max_page_bytes: int) -> Run:
    """Write an approved plan's pages, only when ``approve`` is its digest and no target
    changed since planning; a scope check compares what changed with the targets. The run is
    in the ledger whatever happens; InputError when it was refused (nothing written). One
    approval at a time per workspace (``applying``), across processes."""
    with applying(state_dir):
        return _apply_approved(plan_path, approve, vault_loader, wiki_dir, raw_dir, state_dir,
                               max_page_bytes)


def _apply_approved(plan_path: Path, approve: str, vault_loader: Any, wiki_dir: Path,
                    raw_dir: Path, state_dir: Path, max_page_bytes: int) -> Run:
    plan = load_plan(plan_path)
    started = now_iso()
    digest = plan.digest

    def refuse(reason: str, status: str = "FAILED") -> Run:
        run = Run("propagate-apply", status, "DISCARDED", digest, started, now_iso(),
                  len(plan.targets), reason=reason, plan=str(plan_path))
        append_run(state_dir, run)
        raise InputError(f"{reason} Nothing was written.")

    if approve != digest:
        refuse(f"--approve {approve[:16]}… is not the digest of {plan_path} ({digest[:16]}…): "
               f"approve the digest `mindgraph propagate --plan` printed for this plan.")
    done = [r for r in read_runs(state_dir) if r.get("kind") == "propagate-apply"
            and r.get("digest") == digest and r.get("result_status") in CONSUMED]
    if done:
        left = done[-1].get("not_written") or []
        refuse("This plan was applied already" + (
            f" in part (run {done[-1].get('run_id')} did not write {', '.join(left[:5])}"
            f"{', …' if len(left) > 5 else ''}): run `mindgraph propagate --plan` again to "
            f"draft the rest." if left else "."), "CONSUMED")
    for target in plan.targets:
        file = wiki_dir / target.path
        if page_inside(wiki_dir, target.path) is None:
            refuse(f"{target.path} is not a page inside wiki/: propagation writes wiki pages "
                   f"only.")
        try:
            now = hashlib.sha256(file.read_bytes()).hexdigest()
        except OSError:
            now = ""
        if now != target.sha256:
            refuse(f"{target.path} changed since the plan was made: run `mindgraph propagate "
                   f"--plan` again.")
    too_large = over_page_limit([(t.path, t.text.encode("utf-8")) for t in plan.targets],
                                max_page_bytes)
    if too_large:
        refuse(too_large)
    before = snapshot([wiki_dir, raw_dir])
    written = []
    try:
        for target in plan.targets:
            atomic_write_bytes(wiki_dir / target.path, target.text.encode("utf-8"))
            written.append(target.path)
    except (OSError, MindgraphError) as exc:
        run = Run("propagate-apply", "FAILED", "PROVISIONAL_RETAIN" if written else "DISCARDED",
                  digest, started, now_iso(), len(plan.targets), tuple(written),
                  reason=f"write failed: {exc}", plan=str(plan_path),
                  not_written=tuple(t.path for t in plan.targets[len(written):]))
        append_run(state_dir, run)
        return run
    after = snapshot([wiki_dir, raw_dir])
    expected = [decoded((wiki_dir / t.path).resolve().as_posix()) for t in plan.targets]
    outside = outside_scope(changed_paths(before, after), expected)
    if outside:
        run = Run("propagate-apply", "FAILED", "PROVISIONAL_RETAIN", digest, started, now_iso(),
                  len(plan.targets), tuple(written), tuple(outside),
                  reason="files outside the plan changed during the apply", plan=str(plan_path))
    else:
        run = Run("propagate-apply", "SUCCESS", "APPLIED", digest, started, now_iso(),
                  len(plan.targets), tuple(written), plan=str(plan_path))
        take_snapshot(vault_loader().pages, state_dir)
    append_run(state_dir, run)
    return run


class PropagationService:
    """Propagation over one workspace (what the core hands the entry points)."""

    def __init__(self, vault_loader: Any, settings: Any, scopes: Scopes | None = None):
        self.vault_loader = vault_loader
        self.settings = settings
        self._scopes = scopes

    @property
    def scopes(self) -> Scopes:
        """Who reads which page (what a change may reach), from the settings unless given."""
        if self._scopes is None:
            self._scopes = load_scopes(self.settings)
        return self._scopes

    def plan(self, stated: FactChange | None = None, llm: Any = None) -> Planned:
        """Find changes (or take ``stated``), draft, and queue a plan."""
        s = self.settings
        return plan_propagation(self.vault_loader(), s.wiki_dir, s.state_dir, self.scopes,
                                stated=stated, llm=llm)

    def apply(self, plan_path: Path, approve: str) -> Run:
        """Apply an approved plan (see apply_propagation)."""
        s = self.settings
        return apply_propagation(self.plan_path(plan_path), approve, self.vault_loader,
                                 s.wiki_dir, s.raw_dir, s.state_dir, s.limits.max_page_bytes)

    def queued_plan(self, name: str) -> Path:
        """The queued plan called ``name`` (its 16-character name, with or without .json), for
        callers who may not name files (REST, MCP); NotFoundError when there is none."""
        stem = name.removesuffix(".json")
        path = plans_dir(self.settings.state_dir) / f"{stem}.json"
        if not _PLAN_NAME.fullmatch(stem) or not path.is_file():
            raise NotFoundError(f"no plan {name!r} in the propagation queue; list it with "
                                f"GET /propagate/queue (or the propagation_queue tool).")
        return path

    def plan_path(self, given: Path | str) -> Path:
        """A plan named by its path, its file name or its digest's first 16 characters."""
        path = Path(given)
        if path.is_file():
            return path
        folder = plans_dir(self.settings.state_dir)
        name = path.name if path.name.endswith(".json") else f"{str(given)[:16]}.json"
        return folder / name

    def pending(self) -> list[tuple[Path, PropagationPlan]]:
        """The plans waiting for approval (applied ones left out), oldest first."""
        applied = {r.get("digest") for r in read_runs(self.settings.state_dir)
                   if r.get("kind") == "propagate-apply" and r.get("result_status") in CONSUMED}
        return [(path, plan) for path, plan in queued(self.settings.state_dir)
                if plan.digest not in applied]

    def queue(self) -> list[dict[str, Any]]:
        """The plans waiting for approval, without their texts."""
        return [plan.to_dict(texts=False) | {"plan": path.name} for path, plan in self.pending()]
