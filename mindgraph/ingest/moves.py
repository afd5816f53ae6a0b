"""Moves and renames of raw notes: told apart from a delete plus a new note, and remembered.

A run pairs the notes gone from their path with the notes new at a path (no record yet):
  1. same content: equal SHA-256 (several gone notes with one hash: the one with the same
     file name first, then path order);
  2. small edits: among the rest, a gone and a new note whose word-shingle similarity is at
     least ``SIMILAR`` and that are each other's best match. Similarity estimates the
     Jaccard similarity of the two notes' sets of shingles (every run of ``SHINGLE_WORDS``
     words; a CJK character counts as a word) from bottom-k MinHash sketches (the
     ``SIGNATURE_SIZE`` lowest shingle hashes); the gone note's sketch was kept in its record
     when it was ingested. Over the 883-page vault, one word changed in a note of 20 words or
     more scores 0.71 to 1 (median 0.97), and a note's nearest other note at most 0.34.

A pair is a move: the note compiles at its new path and takes the old page's trust record and
created date with it (see pipeline.py). Every move is remembered in the ingest state's
``moves``, old page → new page (chains followed, an old name that is a page again dropped), so
links people wrote to the old name resolve to the moved page, marked stale, and the vector
store hands the old page's vectors to the new one without embedding them again.
"""

from __future__ import annotations

import base64
import functools
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Mapping

import numpy as np

from ..errors import MindgraphError

SHINGLE_WORDS = 3
SIGNATURE_SIZE = 32
SIMILAR = 0.7
_MIX = np.uint64(0x9E3779B97F4A7C15)


@functools.lru_cache(maxsize=1)
def _weights() -> np.ndarray:
    """The per-position byte weights of a word hash (made on first use: numpy.random costs
    a search that only reads where moved pages' vectors went ~20 ms of its start-up)."""
    return np.random.default_rng(20261201).integers(1, 1 << 63, 64, dtype=np.uint64) | 1


@dataclass(frozen=True)
class Move:
    """A raw note that left ``old`` for ``new``; ``how`` says why it counts as one."""

    old: str        # raw-relative path it left
    new: str        # raw-relative path it is at now
    how: str        # "same content" or "similar content (0.84)"


def signature(text: str) -> str:
    """The bottom-k MinHash sketch of a note's word shingles, as base64 ("" for a note of no
    words): the ``SIGNATURE_SIZE`` lowest 64-bit hashes of its shingles. Words are runs of
    bytes between whitespace, and each character of a script written without spaces (UTF-8
    lead byte 0xE3 and up: kana, CJK, hangul) starts a word of its own. All hashing is
    vectorised and wraps around 2**64 (the 883-page vault: 1.2 s at load 15, where a Python
    loop over shingles took 3.2 s)."""
    data = np.frombuffer(text.casefold().encode("utf-8"), dtype=np.uint8)
    word_bytes = (data != 32) & ((data < 9) | (data > 13))      # not ASCII whitespace
    if not word_bytes.any():
        return ""
    after_space = np.concatenate(([True], ~word_bytes[:-1]))
    starts = np.flatnonzero((word_bytes & (after_space | (data >= 0xE3)))[word_bytes])
    kept = data[word_bytes].astype(np.uint64)
    # each word: its bytes times per-position constants, summed (a polynomial hash)
    position = np.arange(kept.size) - np.repeat(starts, np.diff(np.append(starts, kept.size)))
    weights = _weights()
    words = np.add.reduceat(kept * weights[position % weights.size], starts)
    width = min(SHINGLE_WORDS, words.size)
    count = words.size - width + 1
    shingles = words[:count].copy()
    for offset in range(1, width):
        shingles = shingles * _MIX + words[offset:offset + count]
    lowest = _lowest(_finalise(shingles), SIGNATURE_SIZE)
    return base64.b64encode(lowest.astype("<u8").tobytes()).decode("ascii")


def similarity(a: str, b: str) -> float:
    """Estimated Jaccard similarity of two notes' shingle sets from their sketches: the share
    of the union's lowest hashes that both notes hold (0 when one is missing)."""
    return _overlap(_sketch(a), _sketch(b))


def _sketch(signature: str) -> frozenset[int]:
    return frozenset(np.frombuffer(base64.b64decode(signature), dtype="<u8").tolist()) \
        if signature else frozenset()


def _overlap(left: frozenset[int], right: frozenset[int]) -> float:
    if not left or not right:
        return 0.0
    lowest = sorted(left | right)[:SIGNATURE_SIZE]
    return sum(1 for x in lowest if x in left and x in right) / len(lowest)


def _lowest(values: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` lowest distinct values, sorted (a partial sort first: notes are long)."""
    if values.size > 8 * k:
        lowest = np.unique(np.partition(values, 4 * k)[:4 * k])
        if lowest.size >= k:
            return lowest[:k]
    return np.unique(values)[:k]


def _finalise(values: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: spreads the shingle hashes over all 64 bits."""
    values = values ^ (values >> np.uint64(30))
    values = values * np.uint64(0xBF58476D1CE4E5B9)
    values = values ^ (values >> np.uint64(27))
    values = values * np.uint64(0x94D049BB133111EB)
    return values ^ (values >> np.uint64(31))


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
    old_sketches = {p: _sketch(gone[p][1]) for p in gone}
    holders: dict[int, list[str]] = {}
    for path in sorted(old_sketches):
        for value in old_sketches[path]:
            holders.setdefault(value, []).append(path)
    scores: dict[tuple[str, str], float] = {}
    for new in sorted(added):
        sketch = _sketch(added[new][1])
        shared: dict[str, int] = {}
        for value in sketch:
            for old in holders.get(value, ()):
                shared[old] = shared.get(old, 0) + 1
        for old, count in shared.items():
            if count >= SIMILAR * min(len(sketch), len(old_sketches[old])):
                scores[old, new] = _overlap(old_sketches[old], sketch)
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
    it cannot be read: the state is derived data, and `ingest` reports its errors)."""
    from .state import STATE_FILENAME, IngestState

    try:
        return IngestState.load(Path(state_dir) / STATE_FILENAME).moves
    except MindgraphError:
        return {}
