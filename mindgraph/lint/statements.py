"""A page's statements (sentences and list items outside code, quotes and tables) with the
section each sits in and its content words, shared by the rules that read what pages say."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property

from ..page.model import Page
from ..retrieval.analyzer import analyze
from ..trust.claims import page_claims

_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")


@dataclass(frozen=True)
class Statement:
    """One sentence or list item of a page, as plain words."""

    page: str
    section: str
    line: int
    text: str

    @cached_property
    def words(self) -> tuple[str, ...]:
        """Its content words (stemmed, stop words out, CJK segmented), numbers left out."""
        return tuple(w for w in analyze(self.text) if not _NUMBER.fullmatch(w))

    @cached_property
    def numbers(self) -> tuple[str, ...]:
        """The numbers it states, in order ("1.9", "200", "30")."""
        return tuple(_NUMBER.findall(self.text))

    @property
    def long_enough(self) -> bool:
        """A statement a reader can learn from: five words, or twelve CJK characters."""
        return len(self.text.split()) >= 5 or len(_CJK.findall(self.text)) >= 12


def page_statements(page: Page) -> list[Statement]:
    """The statements of ``page`` in file order, each with its section id and file line."""
    starts = [s.start_line for s in page.sections]
    offset = page.body_line - 1
    out = []
    for claim in page_claims(page.body):
        line = claim.line + offset
        at = bisect.bisect_right(starts, line) - 1
        section = page.sections[at].id if at >= 0 and page.sections else "lead"
        out.append(Statement(page.path, section, line, claim.text))
    return out
