"""The trust record across a recompile: ingest keeps it, and compares pages without it.

A recompile rewrites a page from its raw note; the page's ``verification`` and ``evidence``
are carried over unchanged. When the new body is the one validated the page stays fresh;
when it differs, freshness reports ``content_changed`` (the record keeps the old body hash).
A page whose raw note moved keeps its record too, its evidence now naming the note's new path.
Whether a person edited a page is judged without the record, so a verification write-back
is never taken for a hand edit.
"""

from __future__ import annotations

from typing import Any

from .record import RECORD_KEYS
from .writeback import WritebackError, record_values, set_record_keys


def carry_record(old: bytes | None, new_text: str, path: str, moved: tuple[str, str] = ("", "")
                 ) -> str:
    """``new_text`` with the old page's trust record (if it had one) set in it; ``moved``
    (raw paths, old and new) repoints the record's references to the moved note."""
    if old is None or not _may_have_record(old):
        return new_text
    values = record_values(old.decode("utf-8", errors="replace"))
    if not values:
        return new_text
    if moved[0] and moved[0] != moved[1]:
        values = _repointed(values, f"raw:{moved[0]}", f"raw:{moved[1]}")
    try:
        return set_record_keys(new_text, values, path)
    except WritebackError:
        return new_text         # the new page's frontmatter is unusual: compiled fresh, L0


def record_text(data: bytes) -> str:
    """A page's trust record alone, as the frontmatter of an empty page ("" when it has none):
    what ``carry_record`` takes as the old page when the page itself is gone."""
    if not _may_have_record(data):
        return ""
    values = record_values(data.decode("utf-8", errors="replace"))
    if not values:
        return ""
    try:
        return set_record_keys("", values)
    except WritebackError:
        return ""


def without_record(data: bytes) -> bytes:
    """A page's bytes with its trust record removed (the bytes themselves when it has none)."""
    if not _may_have_record(data):
        return data
    try:
        text = data.decode("utf-8")
        return set_record_keys(text, dict.fromkeys(RECORD_KEYS)).encode("utf-8")
    except (UnicodeDecodeError, WritebackError):
        return data


def _repointed(value: Any, old: str, new: str) -> Any:
    """``value`` with every string that is the reference ``old`` made ``new``."""
    if isinstance(value, dict):
        return {k: _repointed(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_repointed(v, old, new) for v in value]
    return new if value == old else value


def _may_have_record(data: bytes) -> bool:
    head = data[:200_000]
    return any(b"\n" + key.encode() + b":" in head for key in RECORD_KEYS)
