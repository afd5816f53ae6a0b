"""What one ingest run did: counts, and the per-file outcomes worth reading."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

Outcome = Literal["ingested", "skipped", "failed", "removed", "kept", "pending", "moved"]


@dataclass(frozen=True)
class FileOutcome:
    """One file's outcome; ``reason`` says why (and how to fix it, for failures)."""

    path: str          # raw-relative path
    status: Outcome    # "pending" only in a dry run: would be compiled
    reason: str = ""
    wiki: str = ""     # wiki-relative page path, when there is one
    warnings: tuple[str, ...] = ()   # what compiling it warned of (also in ``reason``)
    moved_from: str = ""    # "moved": the raw path it had before (also in ``reason``)

    @property
    def message(self) -> str:
        """The reason naming the file once: as it is when it starts with the path (a
        failure's ``path:line: ...``), else after ``path: ``; the path alone without one.
        A reason of several lines (a warning each) keeps them."""
        if not self.reason:
            return self.path
        if self.reason.startswith(self.path + ":"):
            return self.reason
        return f"{self.path}: {self.reason}"


def under_raw(message: str, path: str, raw_label: str) -> str:
    """``message`` with each line that names the raw note ``path`` (``path``, ``path:line:
    …``, ``path: …``) naming it as `check` does, under ``raw_label`` (paths.raw as configured):
    "bad.md:3" is no file a user in the workspace can open, "raw/bad.md:3" is."""
    label = raw_label.rstrip("/") or "raw"
    return "\n".join(f"{label}/{line}" if line == path or line.startswith(path + ":")
                     else line for line in message.split("\n"))


@dataclass(frozen=True)
class IngestReport:
    """Summary of a run. ``files`` lists every file except unchanged notes (only counted)."""

    compiler: str
    ingested: int
    skipped: int       # every file not compiled, ``unchanged`` included (its meaning since v1)
    failed: int
    removed: int
    kept: int
    provider_calls: int
    seconds: float
    dry_run: bool
    files: tuple[FileOutcome, ...]
    moved: int = 0     # notes that moved or were renamed (their page went with them)
    plan: str = ""     # with a session: "targeted", or "full: " and why (pipeline.py)
    notes: int = -1    # notes the scan of raw/ found (-1: a targeted run scans none)
    held: str = ""     # a dry run: why the run itself would be held (guard.py)
    unchanged: int = 0     # notes unchanged since they were compiled (in ``skipped`` too)

    @property
    def skipped_for_reason(self) -> int:
        """The files skipped for a reason (not a note, empty, past a limit, unreadable): what
        the summary calls skipped, unchanged notes counted apart."""
        return self.skipped - self.unchanged

    @property
    def ok(self) -> bool:
        """True when no file failed."""
        return self.failed == 0

    def by_status(self, status: Outcome) -> list[FileOutcome]:
        """The outcomes with one status."""
        return [f for f in self.files if f.status == status]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (by hand: dataclasses.asdict deep-copied every outcome twice)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["files"] = [{"path": f.path, "status": f.status, "reason": f.reason,
                          "wiki": f.wiki} for f in self.files]
        data["ok"] = self.ok
        for optional in ("plan", "held"):
            if not data[optional]:
                del data[optional]
        return data
