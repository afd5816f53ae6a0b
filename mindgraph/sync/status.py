"""What the watcher did and is doing: one ``RunRecord`` per run, and the live ``SyncStatus``.

The status is also written to ``.mindgraph/sync-status.json`` (replaced atomically at every
transition), so another process — a test, a script, a second terminal — can tell what a
watcher is doing without asking it.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..fsutil import atomic_write_json

STATUS_FILENAME = "sync-status.json"
SHOWN = 100         # pending paths listed in a status (the count is always exact)
WARNINGS_SHOWN = 5  # compile warnings a log line lists


def now_iso() -> str:
    """The time now, UTC, ISO 8601 to the second."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


@dataclass
class RunRecord:
    """One run: what changed, what was redone, how long it took."""

    started: str
    trigger: str                                        # "start" or "change"
    changes: list[str] = field(default_factory=list)    # "raw/a.md", "wiki/b.md"
    touches: int = 0                                    # events whose content was unchanged
    compiled: list[str] = field(default_factory=list)   # raw notes compiled
    # raw notes moved or renamed, their pages with them: {"from": old path, "to": new path}
    moved: list[dict[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)    # raw notes gone: pages removed or kept
    failed: list[str] = field(default_factory=list)     # "path: why", this run's failures
    reindexed: list[str] = field(default_factory=list)  # wiki pages re-read into the indexes
    embedded: int = 0                                   # sections embedded
    vectors_removed: int = 0                            # sections whose vectors were deleted
    seconds: float = 0.0
    error: str | None = None
    ingest: str = ""        # "targeted", or "full: " and why (ingest/targeted.py)
    still_failing: int = 0  # notes that failed before, unchanged, retried: failed the same way
    warnings: list[str] = field(default_factory=list)   # new compile warnings ("a.md:1: …")
    held: bool = False      # it would have removed most pages (ingest/guard.py): not applied

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: one object per change for `watch --json`."""
        return {"event": "change", **asdict(self)}

    def line(self, raw_label: str = "raw") -> str:
        """The one log line: what changed, what was redone, time taken. A note of raw/ is
        named under ``raw_label`` (paths.raw as configured: "../vault/a.md", where "raw/a.md"
        named no file), in its failure and warnings too, as `check` names it; the JSON keeps
        the area's name and the failures and warnings as raw-relative "a.md:1: …"."""
        label = raw_label.rstrip("/") or "raw"
        changes = list(self.changes)
        for move in self.moved:     # the two events of a rename are one change: a move
            old, new = f"raw/{move['from']}", f"raw/{move['to']}"
            if old in changes and new in changes:
                changes[changes.index(old)] = f"{old} → {new}"
                changes.remove(new)
        changes = [label + c[3:] if c.startswith("raw/") else c for c in changes]
        changes = [c.replace(" → raw/", f" → {label}/") for c in changes]
        what = _listed(changes) if changes else "startup sync"
        done = [f"moved {len(self.moved)}" if self.moved else "",
                f"compiled {len(self.compiled)}" if self.compiled else "",
                f"removed {len(self.removed)}" if self.removed else "",
                f"failed {len(self.failed)}" if self.failed else "",
                f"reindexed {len(self.reindexed)} page{'s' * (len(self.reindexed) != 1)}"
                if self.reindexed else "",
                f"embedded {self.embedded} section{'s' * (self.embedded != 1)}"
                if self.embedded else "",
                f"dropped {self.vectors_removed} vector{'s' * (self.vectors_removed != 1)}"
                if self.vectors_removed else ""]
        redone = ", ".join(d for d in done if d) or "nothing to redo"
        text = f"{self.started} {what}: {redone} in {self.seconds:.2f} s"
        if self.failed:     # "note:line: why", the note named under raw/ as above
            text += f" ({label}/{self.failed[0]}{' …' if len(self.failed) > 1 else ''})"
        if self.still_failing:
            text += (f"; {self.still_failing} unchanged note{'s' * (self.still_failing != 1)} "
                     f"still failing as before (mindgraph ingest lists why)")
        if self.error:
            text += f"; error: {self.error}"
        for warning in self.warnings[:WARNINGS_SHOWN]:
            text += f"\n  warning: {label}/{warning}"
        if len(self.warnings) > WARNINGS_SHOWN:
            more = len(self.warnings) - WARNINGS_SHOWN
            text += (f"\n  … and {more} more warning{'s' * (more != 1)} "
                     f"(mindgraph check lists them all)")
        return text


def _listed(items: list[str], shown: int = 3) -> str:
    head = ", ".join(items[:shown])
    more = len(items) - shown
    return f"{head} and {more} more" if more > 0 else head


class SyncStatus:
    """The watcher's state, read by the status endpoint and tool from any thread."""

    def __init__(self, state_dir: Path | None, pending: Callable[[], list[str]]):
        self._lock = threading.Lock()
        self._file = state_dir / STATUS_FILENAME if state_dir is not None else None
        self._pending = pending
        self.backend = ""
        self.state = "starting"
        self.started = now_iso()
        self.running: dict[str, Any] | None = None
        self.last_run: RunRecord | None = None
        self.runs = 0
        self.touches = 0
        self.errors = 0
        self.error: str | None = None
        # the raw notes that fail and those whose compile warned (notices.py)
        self.raw: dict[str, Any] = {"raw_failures": [], "raw_failures_count": 0,
                                    "raw_warnings": [], "raw_warnings_count": 0}

    def update(self, **changes: Any) -> None:
        """Set fields (and write the status file)."""
        with self._lock:
            for key, value in changes.items():
                setattr(self, key, value)
            snapshot = self._snapshot()
        self._save(snapshot)

    def finished(self, record: RunRecord | None, touches: int, state: str,
                 raw: dict[str, Any] | None = None) -> None:
        """A run ended (``record`` None: the batch held only touches); ``raw``: the notes
        that fail or warned (notices.raw_summary), when the run changed them."""
        with self._lock:
            self.touches += touches
            if raw is not None:
                self.raw = raw
            if record is not None:
                self.runs += 1
                self.last_run = record
                self.errors += record.error is not None
            self.running = None
            self.state = state
            snapshot = self._snapshot()
        self._save(snapshot)

    def to_dict(self) -> dict[str, Any]:
        """What is pending or running, and the last run."""
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> dict[str, Any]:
        pending = self._pending()
        state = self.state
        held = self.last_run is not None and self.last_run.held
        if state in ("idle", "pending") and held:
            state = "held"      # until a run is not: raw/ back, or `ingest --allow-removals`
        elif state == "idle" and pending:
            state = "pending"
        return {"watching": state not in ("stopped", "failed"), "state": state,
                "backend": self.backend, "since": self.started,
                "pending": pending[:SHOWN], "pending_count": len(pending),
                "running": self.running,
                "last_run": self.last_run.to_dict() if self.last_run else None,
                "runs": self.runs, "touches_ignored": self.touches, "errors": self.errors,
                "error": self.error, **self.raw,
                "held": self.last_run.error if held and self.last_run else None}

    def _save(self, snapshot: dict[str, Any]) -> None:
        if self._file is None:
            return
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_json(self._file, snapshot)
        except OSError:
            pass        # the file is a courtesy; the watcher goes on without it

