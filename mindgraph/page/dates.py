"""When a note was written: real dates only, and where each one came from.

Sources, in order of trust (the name is what ``date_source`` records):

  frontmatter  a date key the note sets: created/date/… for the creation, updated/modified/…
  content      a date written in the note: in its title or first heading ("Standup
               2024-05-01"), or near the top after a word that says what it is ("Released
               March 29, 2023", "Released on 2021/01/25.") or alone on a line
  filename     a date in the file name ("2024-05-01 standup.md", "20240501.md")
  git          the commits that added and last changed the file (mindgraph.page.history)

A file's modification time is never a date of the note: copying, cloning or unzipping a
vault resets it, so every page would be "written today".
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

# The key names people and tools (Obsidian templates, Dataview, Hugo, Jekyll, Notion exports)
# use most; the first one a note sets wins.
CREATED_KEYS = ("created", "date", "created_at", "creation_date", "date_created", "published",
                "pubdate", "publishdate", "date_published")
UPDATED_KEYS = ("updated", "modified", "updated_at", "last_modified", "date_modified",
                "lastmod", "last_updated")
SOURCES = ("frontmatter", "content", "filename", "git")
# The version of these rules: part of the compile key, so a page is recompiled (and redated)
# when they change.
DATES_VERSION = "3"    # 3: a date key holding no readable date is not copied
TOP_LINES = 5            # lines (non-blank, after the first heading) searched for a cue
_CUE_RE = re.compile(r"(?<![A-Za-z])(?:released|published|posted|written|dated?|created|"
                     r"updated|modified|as of)(?![A-Za-z])|リリース|公開|発行|作成|更新|发布|"
                     r"发表|创建|日期", re.I)

MONTHS = {name: i for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
MONTHS.update({name[:3]: i for name, i in list(MONTHS.items())})
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|" \
         r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
ISO_RE = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_WORD_CHAR_RE = re.compile(r"\w")
MDY_RE = re.compile(r"(?<![A-Za-z])" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})(?!\d)",
                    re.I)
DMY_RE = re.compile(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+(\d{4})(?!\d)", re.I)
CJK_RE = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
_YEAR_RE = re.compile(r"\d{4}")
COMPACT_RE = re.compile(r"(?<!\d)((?:19|20)\d{2})(\d{2})(\d{2})(?!\d)")
_MARKUP_RE = re.compile(r"<[^<>\n]{0,200}>|[*_`~=#>\[\]()|-]")
_HEADING_RE = re.compile(r"^#{1,6}\s+(.*)$")


@dataclass(frozen=True)
class NoteDates:
    """A note's creation and last-update dates, and where each came from (see SOURCES)."""

    created: dt.date
    updated: dt.date
    source: str              # where ``created`` came from
    updated_source: str      # where ``updated`` came from (often the same)

    @property
    def latest(self) -> dt.date:
        """The newest thing known about the note: what recency should look at."""
        return max(self.created, self.updated)


def dates_key(history: tuple[dt.date, dt.date] | None) -> str:
    """What a compiled page's dates depend on beyond its text and path: these rules and the
    file's git history (for the compile key)."""
    if history is None:
        return f"dates:v{DATES_VERSION}"
    return f"dates:v{DATES_VERSION}:git:{history[0].isoformat()}:{history[1].isoformat()}"


def note_dates(frontmatter: Mapping[str, Any], body: str | Callable[[], str], path: str,
               history: tuple[dt.date, dt.date] | None = None) -> NoteDates | None:
    """The real dates of one note, or None when nothing in or about it is dated.

    ``body`` may be a function giving it: it is read only when the frontmatter has no date.

    ``history`` is (first commit, last commit) of the raw file, when it is in git. A page
    that mindgraph compiled carries ``date_source``: its dates keep the source they had."""
    created = _first_key(frontmatter, CREATED_KEYS)
    updated = _first_key(frontmatter, UPDATED_KEYS)
    source = updated_source = _recorded_source(frontmatter)
    if created is None:
        title = frontmatter.get("title") if frontmatter else None
        found = _found_date(body() if callable(body) else body, path,
                            title if isinstance(title, str) else "", history)
        if found is None and updated is None:
            return None
        created, source = found or (updated, updated_source)
    if updated is None:
        updated, updated_source = created, source
        if history is not None and history[1] > created:
            updated, updated_source = history[1], "git"
    if updated < created:
        updated, updated_source = created, source
    return NoteDates(created, updated, source, updated_source)


def _found_date(body: str, path: str, title: str, history: tuple[dt.date, dt.date] | None
                ) -> tuple[dt.date, str] | None:
    date = content_date(body, title)
    if date:
        return date, "content"
    date = filename_date(path)
    if date:
        return date, "filename"
    if history is not None:
        return history[0], "git"
    return None


def _recorded_source(frontmatter: Mapping[str, Any]) -> str:
    given = frontmatter.get("date_source")
    return given if isinstance(given, str) and given in SOURCES else "frontmatter"


def _first_key(frontmatter: Mapping[str, Any], keys: tuple[str, ...]) -> dt.date | None:
    if not frontmatter:
        return None
    given = {str(k).lower(): v for k, v in frontmatter.items() if str(k).lower() in keys}
    for key in keys:
        if key in given and (date := parse_date_value(given[key])):
            return date
    return None


def content_date(body: str, title: str = "") -> dt.date | None:
    """A date the note states about itself: in the title or first heading, or in one of the
    first lines after a word such as "Released" (or alone on the line)."""
    date = find_date(title) if title else None
    if date:
        return date
    for i, line in enumerate(_top_lines(body)):
        heading = _HEADING_RE.match(line)
        if heading:
            if i == 0 and (date := find_date(heading.group(1))):
                return date
            continue
        date = find_date(line)
        if date and (_CUE_RE.search(line) or _only_a_date(line)):
            return date
    return None


def filename_date(path: str) -> dt.date | None:
    """A date in the file's name (not its folders): "2024-05-01 standup.md", "20240501.md"."""
    name = path.rsplit("/", 1)[-1]
    match = ISO_RE.search(name) or COMPACT_RE.search(name)
    return _build(match, "ymd") if match else None


def _top_lines(body: str) -> Iterator[str]:
    count = 0
    for line in body.split("\n", 40)[:40]:
        if line.strip():
            yield line.strip()
            count += 1
            if count >= TOP_LINES:
                return


def _only_a_date(line: str) -> bool:
    rest = ISO_RE.sub("", MDY_RE.sub("", DMY_RE.sub("", CJK_RE.sub("", line))))
    return not _WORD_CHAR_RE.search(_MARKUP_RE.sub("", rest))


def parse_date_value(value: Any) -> dt.date | None:
    """A date from a frontmatter value: a date, a datetime, or text holding one."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        return find_date(value)
    return None


def unreadable_date(value: Any) -> bool:
    """True for a value set under a date key that holds no date ``parse_date_value`` reads
    (None, an empty key, is not a value at all): the compiler does not copy it as a date."""
    return value is not None and value != "" and parse_date_value(value) is None


def find_date(text: str) -> dt.date | None:
    """The first date written in ``text`` in a common format, if any."""
    if not _YEAR_RE.search(text):      # every format has a four-digit year: skip the rest
        return None
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
