"""What the server is compiling or embedding right now, for GET /status (JSON and SSE).

A ``Job`` is one rescan, note creation or upload: its tenant, phase (queued, compiling,
embedding, done, failed), progress (done of total, the file at hand) and outcome. ``Jobs``
keeps the running ones and the last few finished, and refuses a second rescan of a tenant
while one runs (``Busy``, a 409). Every change bumps ``version``, which an SSE stream polls.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import Busy
from .records import now_iso

KEEP_FINISHED = 20


@dataclass
class Job:
    """One piece of work the API started."""

    kind: str                   # rescan | create | upload
    tenant: str                 # "" for the local identity
    # random, not counted: a counter would tell one tenant how many jobs the others ran
    id: str = field(default_factory=lambda: f"job-{secrets.token_hex(6)}")
    phase: str = "queued"
    done: int = 0
    total: int = 0
    current: str = ""
    started_at: str = field(default_factory=now_iso)
    finished_at: str | None = None
    outcome: dict[str, Any] | None = None
    error: str | None = None

    def to_json(self, shows: Callable[[str], bool] | None = None) -> dict[str, Any]:
        """The job as GET /status shows it; ``shows(raw path)``: whether the file at hand
        may be named to the caller (None: always)."""
        current = self.current if shows is None or not self.current or shows(self.current) \
            else ""
        return {"id": self.id, "kind": self.kind, "tenant": self.tenant or None,
                "phase": self.phase, "done": self.done, "total": self.total,
                "current": current, "started_at": self.started_at,
                "finished_at": self.finished_at, "outcome": self.outcome, "error": self.error}


class Jobs:
    """The running and recently finished jobs of one server process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[str, Job] = {}
        self._finished: deque[Job] = deque(maxlen=KEEP_FINISHED)
        self.version = 0

    def start(self, kind: str, tenant: str, exclusive: bool = False) -> Job:
        """A new running job; ``exclusive``: Busy while a job of this kind and tenant runs."""
        with self._lock:
            if exclusive:
                for job in self._running.values():
                    if job.kind == kind and job.tenant == tenant:
                        whose = f"tenant {tenant}" if tenant else "this workspace"
                        raise Busy(f"A {kind} of {whose} is already running ({job.id}, "
                                   f"{job.phase}); follow it on GET /status and retry when it "
                                   f"has finished.")
            job = Job(kind, tenant)
            self._running[job.id] = job
            self.version += 1
            return job

    def update(self, job: Job, **changes: Any) -> None:
        """Set a running job's phase or progress."""
        with self._lock:
            for key, value in changes.items():
                setattr(job, key, value)
            self.version += 1

    def finish(self, job: Job, outcome: dict[str, Any] | None = None,
               error: str | None = None) -> None:
        """The job ended (with its outcome, or failed with ``error``)."""
        with self._lock:
            job.phase = "failed" if error else "done"
            job.outcome, job.error, job.finished_at = outcome, error, now_iso()
            self._running.pop(job.id, None)
            self._finished.appendleft(job)
            self.version += 1

    def progress(self, job: Job, phase: str) -> Any:
        """A ``(done, total, current)`` callback for ingest or embed that updates ``job``."""
        def report(done: int, total: int, current: Any = "") -> None:
            self.update(job, phase=phase, done=done, total=total,
                        current=current if isinstance(current, str) else "")
        return report

    def snapshot(self, tenant: str | None,
                 shows: Callable[[str], bool] | None = None) -> dict[str, Any]:
        """Running and recent jobs of ``tenant`` (None: every tenant). A job compiles the
        notes of a whole tenant, other agents' personal and team notes among them: the file
        at hand is named only when ``shows`` (the caller's view) lets it see that file."""
        with self._lock:
            def mine(job: Job) -> bool:
                return tenant is None or job.tenant == tenant
            running = [j.to_json(shows) for j in self._running.values() if mine(j)]
            return {"busy": bool(running), "running": running,
                    "recent": [j.to_json(shows) for j in self._finished if mine(j)],
                    "time": time.time()}


__all__ = ["Job", "Jobs"]
