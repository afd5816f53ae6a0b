"""`check`'s findings about raw notes, from the ingest state: a note that failed to compile
(an error: it has no current page) and a note that compiled with a warning (its frontmatter
never closed, a date no timeline can read …), each at its file and line with the fix.

The state keeps what each note's last compile said (``FileState.error``, ``.warnings``), so a
warning is still reported after the run that printed it: a watcher's log, a plain `ingest`
that skipped the unchanged note."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Callable
from urllib.parse import unquote

from ..page.check import CheckReport, Finding
from .failed_notes import failed_note_named, only_present, present
from .notes import wiki_path_for
from .state import STATE_FILENAME, IngestState

# "note.md:3: what" / "note.md: what": where the message says it is
_WHERE = re.compile(r"(?P<path>[^\n]*?)(?::(?P<line>\d+))?: ")
# the page a link names, as check shows it: [[name#…|…]] or [text](name.md#…)
_LINK_TARGET = re.compile(r"\[\[(?P<name>[^\]|#]+)|\]\((?P<md>[^)#]+)")


def raw_note_findings(report: CheckReport, state_dir: Path,
                      visible: Callable[[str], bool] | None = None,
                      raw_dir: Path | None = None, raw_folder: str = "raw") -> CheckReport:
    """``report`` with, first, a "raw-failed" error per raw note whose last compile failed and a
    "raw-warning" per warning of a note that compiled (none without an ingest state); only
    the notes ``visible`` accepts, when given (a scoped view's). A note of either kind that
    is no longer in ``raw_dir`` is neither: a "raw-gone" warning says the next ingest drops
    it (its record, and its page if it has one). A page whose note is gone has its own
    findings replaced by that warning: they would be reported at the page, in the wiki, for
    a note that no longer exists."""
    path = Path(state_dir) / STATE_FILENAME
    if not path.is_file():
        return report
    state = IngestState.load(path)
    found, orphaned = [], set()
    pages_of = {f.path for f in report.findings}
    for raw in sorted(state.files):
        if visible is not None and not visible(raw):
            continue
        record = state.files[raw]
        reported = (record.status == "failed" and record.error) or \
            (record.status == "ingested" and record.warnings)
        gone = raw_dir is not None and not present(Path(raw_dir) / raw)
        # a page whose note is gone (a run held by the removal guard keeps it): its findings
        # would be reported at the page, in the wiki, for a note that no longer exists
        paged = gone and record.status == "ingested" and record.wiki in pages_of
        if (reported and gone) or paged:
            failed = record.status == "failed"
            said = (", which failed to compile it" if failed else
                    ", which warned about it" if reported else "")
            page = f" and its page {record.wiki}" if not failed and record.wiki else ""
            found.append(Finding("warning", "raw-gone", record.wiki or wiki_path_for(raw), 0,
                                 f"deleted from raw/ since the last ingest{said}; "
                                 + (_left_out(record.wiki, raw, report, raw_folder)
                                    if paged else "")
                                 + f"the next `mindgraph ingest` drops its record{page}.",
                                 raw_path=raw))
            if paged:
                orphaned.add(record.wiki)
        elif record.status == "failed" and record.error:
            found.append(_finding("error", "raw-failed", raw, record.wiki, record.error,
                                  "failed to compile, so its page is not current: "))
        elif record.status == "ingested":
            found.extend(_finding("warning", "raw-warning", raw, record.wiki, warning, "")
                         for warning in record.warnings)
    failed = only_present(state.files, visible, raw_dir)
    page_findings = tuple(_told_failed(f, failed, raw_folder) for f in report.findings
                          if f.path not in orphaned)
    if not found and page_findings == report.findings:
        return report
    return replace(report, findings=tuple(found) + page_findings)   # raw/ first: the cause


def _left_out(wiki: str, raw: str, report: CheckReport, raw_folder: str) -> str:
    """What a raw-gone warning says of the findings of the note's page, left out."""
    errors = sum(1 for f in report.findings if f.path == wiki and f.severity == "error")
    others = sum(1 for f in report.findings if f.path == wiki) - errors
    counted = ", ".join(f"{n} {kind}{'s' * (n != 1)}" for n, kind in
                        ((errors, "error"), (others, "warning")) if n)
    return (f"the findings of its page ({counted}) are not reported: they are the deleted "
            f"note's (restore {raw_folder.rstrip('/')}/{raw} to see them; a run that would "
            f"remove most pages is held, `--allow-removals` applies it); ")


def _told_failed(finding: Finding, failed: dict, raw_folder: str) -> Finding:
    """A broken link to a note that failed to compile, said as such: the page is missing
    because its note has an error, not because the link is misspelt."""
    if finding.kind != "broken-link" or not failed:
        return finding
    shown, sep, _ = finding.message.partition(" points to no page.")
    target = _LINK_TARGET.search(shown) if sep else None
    name = unquote(target.group("name") or target.group("md")) if target else ""
    raw = failed_note_named(failed, name) if name else None
    if raw is None:
        return finding
    return replace(finding, message=(
        f"{shown} points to no page: its raw note {raw_folder.rstrip('/')}/{raw} exists but "
        f"failed to compile (its raw-failed finding says why). Fix the note, then run `mindgraph ingest`."))


def _finding(severity, kind: str, raw: str, wiki: str, message: str, lead: str) -> Finding:
    """One finding at the place ``message`` names (its "path:line: " prefix, when it names
    ``raw``), located in raw/ as the page findings are."""
    line, text = 0, message.strip()
    where = _WHERE.match(text)
    if where and where.group("path").endswith(raw):
        line = int(where.group("line") or 0)
        text = text[where.end():]
    return Finding(severity, kind, wiki or wiki_path_for(raw), line, lead + text,
                   raw_path=raw, raw_line=line)
