"""What one `pull` takes of an adapter's listing under ``limits.max_pull_notes`` and
``limits.max_pull_bytes``, and the lines that say why it took less.

A listing fetch() returned whole (a list) is cut to its most recently modified documents
(``metadata["mtime"]``), the ones a person expects to find; a generator is read no further
than the limit, so its first documents are taken. Either way the line says how many were left
out, "at least" when the listing was read no further (the adapter's own ``limit_listing`` cut
it, or the generator was left unread).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from ..config import LimitsSettings


def take(listing: Iterable[Any], adapter: str, limits: LimitsSettings,
         listing_cut: Callable[[], bool] = lambda: False) -> tuple[list[Any], str, int, bool]:
    """The documents one pull takes of ``adapter``'s listing: at most limits.max_pull_notes
    documents and limits.max_pull_bytes bytes (a document over limits.max_page_bytes is
    skipped unwritten, too_large, so its bytes do not count); why it stopped short ("" when
    it did not), how many it left out, and whether more may be (``at_least``).

    A listing fetch() returned whole (a list) is cut to its most recently modified documents
    (``metadata["mtime"]``, newest first; those without one last), which are filed in the
    listing's order; ``listing_cut()`` says the adapter itself stopped listing at
    limits.max_pull_notes (limit_listing), so more may be left out than it gave. Any other
    listing (a generator) is read no further than the cap, so its first documents are taken."""
    if isinstance(listing, Sequence):
        return _take_recent(listing, adapter, limits, listing_cut())
    taken: list[Any] = []
    size = 0
    for doc in listing:
        if len(taken) == limits.max_pull_notes:
            return taken, over_limit(adapter, limits.max_pull_notes, 1, True, False), 1, True
        length = _size(doc)
        if length <= limits.max_page_bytes:
            if size + length > limits.max_pull_bytes:
                return taken, over_bytes(adapter, limits.max_pull_bytes, len(taken), size, 1,
                                         True, False), 1, True
            size += length
        taken.append(doc)
    return taken, "", 0, False


def _take_recent(listing: Sequence[Any], adapter: str, limits: LimitsSettings,
                 listing_cut: bool) -> tuple[list[Any], str, int, bool]:
    """take of a whole listing: its most recently modified documents, in listing order."""
    newest_first = sorted(range(len(listing)), key=lambda n: (-_mtime(listing[n]), n))
    chosen: list[int] = []
    size = 0
    why = ""
    for n in newest_first:
        if len(chosen) == limits.max_pull_notes:
            why = "notes"
            break
        length = _size(listing[n])
        if length <= limits.max_page_bytes:
            if size + length > limits.max_pull_bytes:
                why = "bytes"
                break
            size += length
        chosen.append(n)
    left_out = len(listing) - len(chosen)
    if why == "" and not listing_cut:
        return list(listing), "", 0, False
    if why == "bytes":
        reason = over_bytes(adapter, limits.max_pull_bytes, len(chosen), size, left_out,
                            listing_cut, True)
    else:
        reason = over_limit(adapter, limits.max_pull_notes, left_out, listing_cut, True)
    return [listing[n] for n in sorted(chosen)], reason, left_out, listing_cut


def _size(doc: Any) -> int:
    data = getattr(doc, "data", b"")
    return len(data) if isinstance(data, (bytes, bytearray)) else 0


def _mtime(doc: Any) -> float:
    """A document's modification time (``metadata["mtime"]``), -inf when it has none."""
    metadata = getattr(doc, "metadata", None)
    mtime = metadata.get("mtime") if isinstance(metadata, Mapping) else None
    if isinstance(mtime, (int, float)) and not isinstance(mtime, bool) and mtime == mtime:
        return float(mtime)
    return float("-inf")


def _which(notes: int, recent: bool) -> str:
    return f"the {notes:,} most recently modified" if recent else \
        f"the first {notes:,} as listed"


def _left_out(count: int, at_least: bool) -> str:
    return (f"left out at least {count:,} (the listing was read no further)" if at_least
            else f"left out {count:,}")


def over_bytes(adapter: str, max_bytes: int, notes: int, size: int, left_out: int = 1,
               at_least: bool = True, recent: bool = False) -> str:
    """Why a pull took only part of an adapter's notes by their size: which it took, how
    many it left out, the setting and the fix."""
    return (f"adapter {adapter!r} listed more than limits.max_pull_bytes ({max_bytes:,}) "
            f"bytes of notes; pulled {_which(notes, recent)} ({size:,} bytes), "
            f"{_left_out(left_out, at_least)}, and no note of it removed this run. Raise "
            f"limits.max_pull_bytes in mindgraph.yml or narrow what the adapter lists.")


def over_listing(adapter: str, max_bytes: int, read: int) -> str:
    """Why a pull took none of a note app's notes: its listing's answers passed the bytes one
    pull takes of it (the setting, and the fix)."""
    return (f"adapter {adapter!r}: the app's listing passed limits.max_pull_bytes "
            f"({max_bytes:,}) bytes of answers ({read:,} read); read no further, none of its "
            f"notes pulled and none removed this run. Raise limits.max_pull_bytes in "
            f"mindgraph.yml or narrow what the adapter lists (options.projects, "
            f"completed_days).")


def over_limit(adapter: str, max_notes: int, left_out: int = 1, at_least: bool = True,
               recent: bool = False) -> str:
    """Why a pull took only part of an adapter's notes: which it took, how many it left out,
    the setting and the fix."""
    return (f"adapter {adapter!r} listed more than limits.max_pull_notes ({max_notes:,}) "
            f"notes; pulled {_which(max_notes, recent)}, {_left_out(left_out, at_least)}, "
            f"and no note of it removed this run. Raise limits.max_pull_notes in mindgraph.yml "
            f"(each note may take up to limits.max_page_bytes on disk) or narrow what the "
            f"adapter lists.")


def too_large(name: str, size: int, cap: int) -> str:
    """Why a document was not pulled: its size, the setting and the fix."""
    return (f"{name}: {size:,} bytes is over limits.max_page_bytes ({cap:,}), which no "
            f"command would read; not pulled (never truncated). Split it at the source or "
            f"raise limits.max_page_bytes in mindgraph.yml.")


__all__ = ["over_bytes", "over_limit", "over_listing", "take", "too_large"]
