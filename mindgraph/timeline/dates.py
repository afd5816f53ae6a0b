"""When a note was written, and how sure we are: its date and the source of that date.

Sources in order of trust: frontmatter (``date``, ``created``, ``updated``), a date written at
the top of the note ("Released March 29, 2023", "Released on 2021/01/25", "2024-05-01"), a
date in the file name, the git history (the commit that added the file), the file's mtime.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

FRONTMATTER_KEYS = ("date", "created", "updated")
TOP_LINES = 8
MONTHS = {name: i for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
MONTHS.update({name[:3]: i for name, i in list(MONTHS.items())})
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
         r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
ISO_RE = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
MDY_RE = re.compile(_MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})", re.I)
DMY_RE = re.compile(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+(\d{4})", re.I)
CJK_RE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
COMPACT_RE = re.compile(r"(?<!\d)(20\d{2}|19\d{2})(\d{2})(\d{2})(?!\d)")


@dataclass(frozen=True)
class NoteDate:
    """A date and where it came from (frontmatter:date, body, filename, git, mtime)."""

    date: dt.date
    source: str


def parse_date_value(value: Any) -> dt.date | None:
    """A date from a frontmatter value: ISO text, a date, or a datetime."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        return find_date(value)
    return None


def find_date(text: str) -> dt.date | None:
    """The first date written in ``text`` in a common format, if any."""
    candidates = []
    for regex, order in ((ISO_RE, "ymd"), (MDY_RE, "mdy"), (DMY_RE, "dmy"), (CJK_RE, "ymd")):
        match = regex.search(text)
        if match:
            candidates.append((match.start(), match, order))
    for _, match, order in sorted(candidates, key=lambda c: c[0]):
        date = _build(match, order)
        if date:
            return date
    return None


def _build(match: re.Match, order: str) -> dt.date | None:
    groups = match.groups()
    try:
        if order == "ymd":
            year, month, day = int(groups[0]), int(groups[1]), int(groups[2])
        elif order == "mdy":
            month, day, year = MONTHS[groups[0].lower().rstrip(".")[:3]], int(groups[1]), \
                int(groups[2])
        else:
            day, month, year = int(groups[0]), MONTHS[groups[1].lower().rstrip(".")[:3]], \
                int(groups[2])
        if not 1900 <= year <= 2200:
            return None
        return dt.date(year, month, day)
    except (ValueError, KeyError):
        return None


def note_date(frontmatter: Mapping[str, Any], body: str, file: Path,
              git_dates: Mapping[str, dt.date] | None = None, rel_path: str = "") -> NoteDate:
    """The most trusted date available for one note."""
    for key in FRONTMATTER_KEYS:
        date = parse_date_value(frontmatter.get(key))
        if date:
            return NoteDate(date, f"frontmatter:{key}")
    top = "\n".join([line for line in body.split("\n") if line.strip()][:TOP_LINES])
    date = find_date(top)
    if date:
        return NoteDate(date, "body")
    match = ISO_RE.search(file.name) or COMPACT_RE.search(file.name)
    if match:
        date = _build(match, "ymd")
        if date:
            return NoteDate(date, "filename")
    if git_dates and rel_path in git_dates:
        return NoteDate(git_dates[rel_path], "git")
    return NoteDate(dt.date.fromtimestamp(file.stat().st_mtime), "mtime")


def git_added_dates(folder: Path) -> dict[str, dt.date]:
    """Date of the commit that added each file under ``folder`` (paths relative to it).

    Empty when the folder is not in a git work tree or git is missing."""
    try:
        top = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=10)
        if top.returncode != 0:
            return {}
        log = subprocess.run(
            ["git", "-C", str(folder), "log", "--diff-filter=A", "--format=%x00%aI",
             "--name-only", "--relative", "--", "."],
            capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return {}
    dates: dict[str, dt.date] = {}
    current: dt.date | None = None
    for line in log.stdout.splitlines():
        if line.startswith("\x00"):
            current = dt.datetime.fromisoformat(line[1:].strip()).date()
        elif line.strip() and current is not None:
            # git log lists newest first: the last "added" entry seen is the oldest.
            dates[line.strip()] = current
    return dates
