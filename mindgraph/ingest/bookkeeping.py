"""The bookkeeping of one run (mixed into pipeline._Run): saving the state at a bounded cost,
telling the caller how far each phase is, and the final report."""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Iterator

from .report import FileOutcome, IngestReport

Progress = Callable[[int, int, str], None]
TICK_S = 0.1        # seconds between two reports of a planning phase
SAVE_SHARE = 0.1    # of a run's time, at most this share goes to saving the state


class Bookkeeping:
    """Saving, progress and the report; uses the run's state, wiki writer and outcomes."""

    # provided by pipeline._Run
    state: Any
    wiki: Any
    compiler: Any
    dry_run: bool
    journal: bool      # commit to the state's journal (a targeted run)
    notes: list[Any]   # the notes of raw/ a full run found
    held: str          # a dry run: why the run would be held (guard.py)
    skipped: int
    unchanged: int
    last_commit: float
    save_seconds: float
    outcomes: list[FileOutcome]
    progress: Progress | None
    phases: Callable[[str], Progress] | None

    def _commit(self, final: bool = False, now: bool = False) -> None:
        """Save the state (after making the pages it records durable). A compiler with a commit
        interval saves at most that often, and at most SAVE_SHARE of the run's time: a save
        writes every record, so saving at a fixed interval made a large first run quadratic.
        Until the ``final`` commit (``now``: whatever the interval) a full run saves only what
        changed, as a journal line (IngestState.checkpoint); its last commit folds them."""
        if self.dry_run:
            return
        started = time.monotonic()
        interval = float(getattr(self.compiler, "commit_interval_s", 0.0))
        if interval:
            interval = max(interval, self.save_seconds / SAVE_SHARE)
        if not self.state.changed and not self.wiki.dirty:
            return          # nothing new to record: a no-op run does not rewrite the state
        if final or now or started - self.last_commit >= interval:
            self.wiki.make_durable()
            if self.journal:
                self.state.append()
            elif final:
                self.state.save()
            else:
                self.state.checkpoint()
            self.last_commit = time.monotonic()
            self.save_seconds = self.last_commit - started

    def _ticking(self, phase: str, items: Iterable[Any], total: int | None = None
                 ) -> Iterator[Any]:
        """``items`` (``total`` of them: None, count them), telling ``phases`` how far the
        phase is at most every TICK_S (a bar redrawn 100,000 times costs seconds)."""
        if total is None:
            items = list(items)
            total = len(items)
        tick = self.phases(phase) if self.phases is not None else None
        last = 0.0
        for done, item in enumerate(items):
            if tick is not None and (now := time.monotonic()) - last >= TICK_S:
                last = now
                tick(done, total, "")
            yield item
        if tick is not None and total:
            tick(total, total, "")

    def _tick(self, done: int, total: int, path: str) -> None:
        if self.progress is not None:
            self.progress(done, total, path)

    def _report(self, started: float) -> IngestReport:
        outcomes = tuple(sorted(self.outcomes, key=lambda o: (o.path, o.status)))
        count = {s: sum(1 for o in outcomes if o.status == s)
                 for s in ("ingested", "failed", "removed", "kept", "pending", "moved")}
        return IngestReport(
            compiler=self.compiler.identity,
            ingested=count["pending"] if self.dry_run else count["ingested"],
            skipped=self.skipped, unchanged=self.unchanged, failed=count["failed"], removed=count["removed"],
            kept=count["kept"], moved=count["moved"] + sum(
                1 for o in outcomes if o.status == "pending" and o.reason.startswith("would move")),
            provider_calls=int(getattr(self.compiler, "calls", 0)),
            seconds=round(time.perf_counter() - started, 3), dry_run=self.dry_run,
            files=outcomes, plan="targeted" if self.journal else "",
            notes=-1 if self.journal else len(self.notes), held=self.held)
