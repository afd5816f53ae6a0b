"""Near-duplicate pages: two pages that share most of their text.

Each page is a set of word 5-shingles; two pages are near-duplicates when the Jaccard
similarity of their sets is at least 0.7 and both have 40 words or more. Candidates come from
shingles shared by few pages (an inverted index), so the cost grows with the vault, not with
its square.
"""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from typing import Callable, Iterator

from ..page.model import Page

SHINGLE = 5
MIN_WORDS = 40
MIN_JACCARD = 0.7
RARE = 8           # a shingle on more pages than this is boilerplate, not evidence
MIN_RARE_SHARED = 3  # rare shingles two pages must share to be compared at all
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
Progress = Callable[[int, int, str], None]     # (pages done, of how many, the last one)


def near_duplicates(pages: list[Page], phases: Callable[[str], Progress] | None = None
                    ) -> Iterator[tuple[Page, Page, float]]:
    """(page, other, similarity) for each near-duplicate pair, in path order; ``phases``
    (label → progress in pages) hears of each page's shingles indexed ("Indexing text"),
    then of each page compared with those after it ("Finding near-duplicates")."""
    indexing = phases("Indexing text") if phases is not None else None
    shingles: dict[str, set[int]] = {}
    index: dict[int, list[str]] = defaultdict(list)
    for done, page in enumerate(sorted(pages, key=lambda p: p.path), 1):
        shingles[page.path] = _shingles(page.indexed_body)
        for shingle in shingles[page.path]:
            index[shingle].append(page.path)
        if indexing is not None:
            indexing(done, len(pages), page.path)
    by_path = {p.path: p for p in pages}
    pairs: dict[tuple[str, str], int] = defaultdict(int)
    for paths in index.values():
        if 1 < len(paths) <= RARE:
            for i, a in enumerate(paths):
                for b in paths[i + 1:]:
                    pairs[(a, b)] += 1
    comparing = phases("Finding near-duplicates") if phases is not None else None
    place = {path: i for i, path in enumerate(sorted(by_path), 1)}
    for (a, b), rare_shared in sorted(pairs.items()):
        if comparing is not None:
            comparing(place[a], len(pages), a)
        sa, sb = shingles[a], shingles[b]
        if min(len(sa), len(sb)) < MIN_WORDS - SHINGLE + 1:
            continue
        if rare_shared < MIN_RARE_SHARED:
            continue
        similarity = len(sa & sb) / len(sa | sb)
        if similarity >= MIN_JACCARD:
            yield by_path[a], by_path[b], similarity
    if comparing is not None:
        comparing(len(pages), len(pages), "")


def _shingles(text: str) -> set[int]:
    tokens = [t for w in _WORD.findall(text.lower())
              for t in (_CJK.findall(w) if _CJK.search(w) else (w,))]
    return {zlib.crc32(" ".join(tokens[i:i + SHINGLE]).encode())
            for i in range(max(0, len(tokens) - SHINGLE + 1))}
