"""Fact changes: statements replaced by similar ones since the last snapshot, or stated."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..fsutil import atomic_write_text
from ..lint.facts import quantities
from ..lint.statements import Statement, page_statements
from ..page.model import Page

MIN_SIMILAR = 0.5        # Jaccard of content words: the new statement is the old one changed
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")


@dataclass(frozen=True)
class FactChange:
    """What a page said, and what it says now (``page`` "" for a stated correction)."""

    page: str
    old: str
    new: str
    context: str = ""       # the heading the new statement sits under (its subject, often)

    @property
    def numbers_only(self) -> bool:
        """Only numbers differ: the old numbers can be replaced by the new ones in order."""
        return (_NUMBER.sub("#", self.old) == _NUMBER.sub("#", self.new)
                and len(_NUMBER.findall(self.old)) == len(_NUMBER.findall(self.new)))

    def number_map(self) -> list[tuple[str, str]]:
        """(old number, new number) pairs that differ, in order."""
        return [(a, b) for a, b in zip(_NUMBER.findall(self.old), _NUMBER.findall(self.new))
                if a != b]

    def changed_quantities(self) -> set[tuple[str, str]]:
        """(unit, old number) of each quantity whose number changed ("mb", "5")."""
        old, new = quantities(self.old), quantities(self.new)
        return {(unit, n) for unit, numbers in old.items() for n in numbers
                if n not in new.get(unit, set())}

    def subject_words(self) -> set[str]:
        """The content words of the old statement and of the heading it sits under."""
        return set(Statement("", "", 0, f"{self.old} {self.context}").words)

    def removed_words(self) -> set[str]:
        """Content words (and numbers) of the old statement the new one no longer has."""
        old, new = _terms(self.old), _terms(self.new)
        return old - new


def snapshot_path(state_dir: Path) -> Path:
    """Where the statements of the last snapshot are kept."""
    return Path(state_dir) / "propagate" / "statements.json"


def take_snapshot(pages: dict[str, Page], state_dir: Path) -> None:
    """Record every page's statements as the baseline for the next run."""
    data = {path: [s.text for s in page_statements(page)] for path, page in sorted(pages.items())}
    path = snapshot_path(state_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=0) + "\n")


def load_snapshot(state_dir: Path) -> dict[str, list[str]] | None:
    """The baseline (None when none was taken, or it cannot be read)."""
    try:
        data = json.loads(snapshot_path(state_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def changes_since(snapshot: dict[str, list[str]], pages: dict[str, Page]) -> list[FactChange]:
    """Each statement replaced by a similar one on the same page since ``snapshot``."""
    found = []
    for path in sorted(pages.keys() & snapshot.keys()):
        before = snapshot[path]
        statements = page_statements(pages[path])
        now = [s.text for s in statements]
        headings = {s.text: _heading(pages[path], s.section) for s in statements}
        gone = [t for t in before if t not in set(now)]
        added = [t for t in now if t not in set(before)]
        for old in gone:
            best = max(added, key=lambda new: similarity(old, new), default=None)
            if best is not None and similarity(old, best) >= MIN_SIMILAR:
                found.append(FactChange(path, old, best, headings.get(best, "")))
                added.remove(best)
    return found


def _heading(page: Page, section_id: str) -> str:
    section = page.section(section_id)
    return " ".join(section.path) if section else ""


def similarity(a: str, b: str) -> float:
    """Jaccard of the two statements' content words and numbers."""
    ta, tb = _terms(a), _terms(b)
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


def _terms(text: str) -> set[str]:
    s = Statement("", "", 0, text)
    return set(s.words) | set(s.numbers)
