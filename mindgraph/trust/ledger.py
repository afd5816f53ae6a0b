"""The run ledger: one JSON line per plan or apply run, appended, never rewritten.

Process status (did the run do what it set out to?) is kept apart from result status (what
became of its data): SUCCESS / FAILED / CONSUMED (the plan had already been applied) versus
PLANNED / APPLIED / PROVISIONAL_RETAIN (written, but the scope check failed: kept for a
person to inspect) / DISCARDED (nothing written). A run whose data looks right but whose
scope check failed is FAILED, never SUCCESS.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterator

from ..fsutil import LockTurns, append_private, exclusive_lock

PROCESS_STATUSES = ("SUCCESS", "FAILED", "CONSUMED")
RESULT_STATUSES = ("PLANNED", "APPLIED", "PROVISIONAL_RETAIN", "DISCARDED")


@dataclass(frozen=True)
class Run:
    """One ledger entry."""

    kind: str                   # plan | apply
    process_status: str
    result_status: str
    digest: str
    started: str
    finished: str
    targets: int = 0
    written: tuple[str, ...] = ()
    outside_scope: tuple[str, ...] = ()
    reason: str = ""
    plan: str = ""
    skipped: tuple[str, ...] = ()   # "page: why" for pages a fault stopped (429, timeout, …)
    not_written: tuple[str, ...] = ()   # an apply's targets left unwritten (a write failed)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        data = asdict(self)
        data["written"], data["outside_scope"] = list(self.written), list(self.outside_scope)
        data["skipped"], data["not_written"] = list(self.skipped), list(self.not_written)
        return data


def applying(state_dir: Path) -> ContextManager[None]:
    """Held while an approved plan is checked and written (``verify --apply``, ``propagate
    --apply``, over the CLI, REST or MCP). Two approvals in two processes (``serve --workers``,
    the CLI beside a server) take turns: the second sees the pages the first wrote and is
    refused as changed since planning (or as applied already), where both passed the check
    before either wrote and the last write won. Ingest (and so ``watch``) holds it around
    each page it reads and rewrites (ingest/applying.py), so no page changes between an
    apply's check and its write, and no record an apply writes is lost to a recompile that
    read the page before it. A flock: a killed holder's lock is freed by the kernel."""
    return exclusive_lock(_apply_lock(state_dir))


def apply_turns(state_dir: Path, notice: Callable[[str], None] | None = None) -> LockTurns:
    """The ``applying`` lock for ingest to take its turn per page (one open file a run);
    ``notice`` hears, once, when a turn has waited a second for an apply holding it."""
    lock = _apply_lock(state_dir)
    if notice is None:
        return LockTurns(lock)
    return LockTurns(lock, lambda: notice(
        f"waiting for the apply lock ({lock}): a `verify --apply` or `propagate --apply` is "
        f"checking and writing approved pages, and ingest takes its turn on each page after "
        f"it; it goes on by itself when the apply is done."))


def _apply_lock(state_dir: Path) -> Path:
    return Path(state_dir) / "trust" / "apply.lock"


def ledger_path(state_dir: Path) -> Path:
    """The ledger file under the state folder."""
    return Path(state_dir) / "trust" / "runs.jsonl"


def append_run(state_dir: Path, run: Run) -> None:
    """Append one entry (a single write of one line, flushed to disk)."""
    assert run.process_status in PROCESS_STATUSES and run.result_status in RESULT_STATUSES
    line = json.dumps(run.to_dict(), ensure_ascii=False, sort_keys=True) + "\n"
    append_private(ledger_path(state_dir), line.encode("utf-8"), durable=True)


def read_runs(state_dir: Path) -> Iterator[dict[str, Any]]:
    """Every entry, oldest first (a torn last line from a crash is skipped)."""
    path = ledger_path(state_dir)
    if not path.is_file():
        return
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                yield entry
