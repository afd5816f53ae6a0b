"""Pages without a real summary: nothing at the top says what the page is about.

A page has one when its frontmatter says it (``summary``/``description``/``abstract`` of five
words or more), when it opens with a summary callout of that length, or when its lead (the
text before the first heading) holds a statement of five words (twelve CJK characters): a
title followed straight by headings, or a lead of bare links, is no summary. A dated entry
(a release note or a journal page: a date in its frontmatter, top lines or file name) is
exempt: its date and headings say what it is.
"""

from __future__ import annotations

import re
from typing import Iterator

from ..page.model import Page
from ..page.rawlines import raw_source
from .findings import LintFinding
from .statements import Statement

SUMMARY_KEYS = ("summary", "description", "abstract")
_CALLOUT = re.compile(r"^\s*>\s*\[!(?:summary|abstract|tldr)\][+-]?\s*(.*)$", re.I)
_QUOTED = re.compile(r"^\s*>\s?(.*)$")


def summary_findings(page: Page, statements: list[Statement], dated: bool,
                     raw_label: str = "raw") -> Iterator[LintFinding]:
    """One finding when ``page`` has no real summary (``dated``: the page has a date of its
    own, in its frontmatter, its top lines or its file name); the fix names its raw note in
    ``raw_label``, the raw folder as configured (paths.raw: ``../vault``)."""
    if dated or _frontmatter_summary(page) or _callout_summary(page):
        return
    if any(s.section == "lead" and s.long_enough for s in statements):
        return
    raw = raw_source(page)
    where = f"{raw_label.rstrip('/')}/{raw}" if raw else page.path
    yield LintFinding(
        "no-summary", page.path, "lead", page.body_line,
        "No summary: nothing before the first heading says what the page is about.",
        f"Start {where} with a sentence or two on what it covers, or set 'summary:' in its "
        f"frontmatter.")


def _frontmatter_summary(page: Page) -> bool:
    for key in SUMMARY_KEYS:
        value = page.frontmatter.get(key)
        if isinstance(value, str) and Statement(page.path, "lead", 0, value).long_enough:
            return True
    return False


def _callout_summary(page: Page) -> bool:
    lines = page.body.split("\n")
    for number, line in enumerate(lines):
        if not line.strip() or line.startswith("# "):
            continue
        opened = _CALLOUT.match(line)
        if not opened:
            return False
        quoted = [opened.group(1)]
        for more in lines[number + 1:]:
            inner = _QUOTED.match(more)
            if not inner:
                break
            quoted.append(inner.group(1))
        return Statement(page.path, "lead", 0, " ".join(quoted)).long_enough
    return False


def has_summary(page: Page) -> bool:
    """True when ``page`` says what it is about at its top: a frontmatter summary or a summary
    callout of five words or more (the rule above, without the lead-statement case)."""
    return _frontmatter_summary(page) or _callout_summary(page)
