"""Moves and renames of raw notes: told apart from a delete plus a new note, and remembered.

A run pairs the notes gone from their path with the notes new at a path (no record yet):
  1. same content: equal SHA-256 (several gone notes with one hash: the one with the same
     file name first, then path order);
  2. small edits: among the rest, a gone and a new note whose word-shingle similarity is at
     least ``SIMILAR`` and that are each other's best match. Similarity estimates the
     Jaccard similarity of the two notes' sets of shingles (every run of ``SHINGLE_WORDS``
     words; a CJK character counts as a word) from bottom-k MinHash sketches (the
     ``SIGNATURE_SIZE`` lowest shingle hashes: sketches.py); the gone note's sketch was kept
     in its record when it was ingested. Over the 883-page vault, one word changed in a
     note of 20 words or more scores 0.71 to 1 (median 0.97), and a note's nearest other
     note at most 0.34.

A pair is a move: the note compiles at its new path and takes the old page's trust record and
created date with it (see pipeline.py). Every move is remembered in the ingest state's
``moves``, old page → new page (chains followed, an old name that is a page again dropped), so
links people wrote to the old name resolve to the moved page, marked stale, and the vector
store hands the old page's vectors to the new one without embedding them again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Mapping

from ..errors import MindgraphError

SIMILAR = 0.7


@dataclass(frozen=True)
class Move:
    """A raw note that left ``old`` for ``new``; ``how`` says why it counts as one."""

    old: str        # raw-relative path it left
    new: str        # raw-relative path it is at now
    how: str        # "same content" or "similar content (0.84)"


def signature(text: str) -> str:
    """The note's sketch as base64 ("" for a note of no words): sketches.signature."""
    from .sketches import signature as sketch_of

    return sketch_of(text)


def similarity(a: str, b: str) -> float:
    """Estimated Jaccard similarity of two notes from their signatures: sketches.similarity."""
    from .sketches import similarity as estimate

    return estimate(a, b)


def pair_moves(gone: Mapping[str, tuple[str, str]],
               added: Mapping[str, tuple[str, str]]) -> list[Move]:
    """Moves among ``gone`` (raw path → (sha256, signature)) and ``added`` (raw path →
    (sha256, signature)), in new-path order."""
    moves: list[Move] = []
    left = dict(gone)
    by_hash: dict[str, list[str]] = {}
    for path in sorted(left):
        by_hash.setdefault(left[path][0], []).append(path)
    unpaired = []
    for path in sorted(added):
        digest = added[path][0]
        candidates = [p for p in by_hash.get(digest, []) if p in left]
        if not digest or not candidates:
            unpaired.append(path)
            continue
        name = PurePosixPath(path).name
        old = next((p for p in candidates if PurePosixPath(p).name == name), candidates[0])
        del left[old]
        moves.append(Move(old, path, "same content"))
    if left and unpaired:
        moves.extend(_similar(left, {p: added[p] for p in unpaired}))
    return sorted(moves, key=lambda m: m.new)


def _similar(gone: Mapping[str, tuple[str, str]],
             added: Mapping[str, tuple[str, str]]) -> list[Move]:
    """The pairs above ``SIMILAR`` that are each other's best match. Only pairs whose sketches
    share enough hashes to reach it are scored (found through an index of the hashes), so
    this stays cheap for thousands of notes."""
    from .sketches import overlap, sketch

    old_sketches = {p: sketch(gone[p][1]) for p in gone}
    holders: dict[int, list[str]] = {}
    for path in sorted(old_sketches):
        for value in old_sketches[path]:
            holders.setdefault(value, []).append(path)
    scores: dict[tuple[str, str], float] = {}
    for new in sorted(added):
        found = sketch(added[new][1])
        shared: dict[str, int] = {}
        for value in found:
            for old in holders.get(value, ()):
                shared[old] = shared.get(old, 0) + 1
        for old, count in shared.items():
            if count >= SIMILAR * min(len(found), len(old_sketches[old])):
                scores[old, new] = overlap(old_sketches[old], found)
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    best_new: dict[str, str] = {}
    best_old: dict[str, str] = {}
    for (old, new), _ in ranked:
        best_new.setdefault(new, old)
        best_old.setdefault(old, new)
    return [Move(old, new, f"similar content ({scores[old, new]:.2f})")
            for new, old in sorted(best_new.items())
            if scores[old, new] >= SIMILAR and best_old[old] == new]


def record_move(moves: dict[str, dict[str, Any]], old_page: str, new_page: str,
                **facts: Any) -> None:
    """Remember that ``old_page`` is now ``new_page`` (earlier moves to ``old_page`` now point
    to ``new_page``; a move back to an old name forgets that name's record)."""
    for entry in moves.values():
        if entry["page"] == old_page:
            entry["page"] = new_page
            if "raw" in facts:
                entry["raw"] = facts["raw"]
    moves.pop(new_page, None)
    if old_page != new_page:
        moves[old_page] = {"page": new_page, **facts}


def prune_moves(moves: dict[str, dict[str, Any]], pages: Iterable[str]) -> None:
    """Forget moves whose old name is a page again or whose new page is gone."""
    live = {p.casefold() for p in pages}
    for old in [o for o, e in moves.items()
                if o.casefold() in live or str(e.get("page", "")).casefold() not in live]:
        del moves[old]


def old_titles(moves: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """New page → the titles it had before (for the title index: mentions of an old name
    link to the moved page)."""
    out: dict[str, list[str]] = {}
    for old in sorted(moves):
        title = str(moves[old].get("title", ""))
        if title:
            out.setdefault(str(moves[old]["page"]), []).append(title)
    return out


def moved_pages(moves: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Old page → new page, for link resolution."""
    return {old: str(entry["page"]) for old, entry in moves.items()}


def vector_sources(moves: Mapping[str, Mapping[str, Any]]) -> dict[str, list[tuple[str, str]]]:
    """New page → [(old page, its title)]: where the vector store may find its vectors."""
    out: dict[str, list[tuple[str, str]]] = {}
    for old in sorted(moves):
        entry = moves[old]
        out.setdefault(str(entry["page"]), []).append((old, str(entry.get("title", ""))))
    return out


_DATE_LINE = re.compile(r"(?m)^(created|updated|date_source|updated_source):[ \t]*(.*)$")


def carry_created(old: bytes | None, new_text: str) -> str:
    """``new_text`` with the old page's dates when the old page was created earlier (or the
    new one has no dates): a moved note keeps its history. Both are pages the compiler wrote
    (render.py), so their date keys are plain ``key: value`` lines of the frontmatter."""
    if old is None or not new_text.startswith("---\n"):
        return new_text
    old_head = _head(old.decode("utf-8", errors="replace"))
    old_dates = dict(m.groups() for m in _DATE_LINE.finditer(old_head))
    if "created" not in old_dates:
        return new_text
    end = new_text.find("\n---", 3)
    if end < 0:
        return new_text
    head, rest = new_text[:end], new_text[end:]
    new_dates = dict(m.groups() for m in _DATE_LINE.finditer(head))
    if "created" in new_dates and new_dates["created"].strip("'\"") <= \
            old_dates["created"].strip("'\""):
        return new_text
    if "created" in new_dates:
        head = _DATE_LINE.sub(lambda m: f"created: {old_dates['created']}"
                              if m.group(1) == "created" else m.group(0), head)
        return head + rest
    block = "".join(f"\n{key}: {value}" for key, value in old_dates.items())
    at = head.find("\nsources:")
    return (head[:at] + block + head[at:] if at >= 0 else head + block) + rest


def _head(text: str) -> str:
    if not text.startswith("---\n"):
        return ""
    end = text.find("\n---", 3)
    return text[:end] if end >= 0 else ""


def moves_of(state_dir: Path) -> dict[str, dict[str, Any]]:
    """The moves recorded in the ingest state under ``state_dir`` ({} when there is none or
    it cannot be read: the state is derived data, and `ingest` reports its errors). Read from
    the small moves file beside the state when it matches the state (moves_file.py), else
    from the whole state, which then writes that file for the next process."""
    from .moves_file import read_moves, stamps_of, write_moves
    from .state import STATE_FILENAME, IngestState

    path = Path(state_dir) / STATE_FILENAME
    stamps = stamps_of(path)        # before anything is read: see moves_file.py
    if stamps[0] is None:
        return {}
    moves = read_moves(path, stamps)
    if moves is not None:
        return moves
    try:
        moves = IngestState.load(path).moves
    except MindgraphError:
        return {}
    try:
        write_moves(path, moves, stamps)
    except OSError:
        pass            # a read-only workspace: the next process reads the whole state again
    return moves
