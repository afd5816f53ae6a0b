"""The raw notes a watcher has to tell about: those whose compile warned (a frontmatter
never closed, a date no timeline reads …) and those that fail.

Warnings live in each note's ingest record (``FileState.warnings``); the watcher keeps the
warned notes it knows of and logs a warning once, in the run where it appears (the startup
run: every warning the state holds). The status lists both kinds with their counts."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from .status import SHOWN, RunRecord


def track_warnings(record: RunRecord, outcomes: Iterable[Any], records: Mapping[str, Any],
                   warned: dict[str, tuple[str, ...]], complete: bool) -> None:
    """Bring ``warned`` (raw path → its warnings) up to date with the state's ``records``:
    all of them after a ``complete`` run, else the notes this run reported and those known
    (a note moved or removed drops out); the warnings that are new go to
    ``record.warnings``."""
    before = dict(warned)
    if complete:
        warned.clear()
        warned.update({p: r.warnings for p, r in records.items()
                       if r.status == "ingested" and r.warnings})
    else:
        for path in {f.path for f in outcomes} | set(warned):
            r = records.get(path)
            if r is not None and r.status == "ingested" and r.warnings:
                warned[path] = r.warnings
            else:
                warned.pop(path, None)
    record.warnings = [w for p in sorted(warned) if before.get(p) != warned[p]
                       for w in warned[p]]


def raw_summary(failing: Mapping[str, str],
                warned: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """The status fields: the failing notes and the warnings, the first ``SHOWN`` of each
    listed, the counts exact."""
    failures = [why if why.startswith(path) else f"{path}: {why}"
                for path, why in sorted(failing.items())]
    warnings = [w for path in sorted(warned) for w in warned[path]]
    return {"raw_failures": failures[:SHOWN], "raw_failures_count": len(failures),
            "raw_warnings": warnings[:SHOWN], "raw_warnings_count": len(warnings)}
