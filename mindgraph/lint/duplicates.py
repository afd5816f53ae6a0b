"""Near-duplicate pages: two pages that share most of their text.

Each page is a set of word 5-shingles; two pages are near-duplicates when the Jaccard
similarity of their sets is at least 0.7 and both have 40 words or more. Candidates come from
shingles shared by few pages (an inverted index), so the cost grows with the vault, not with
its square. The index is one sort of every page's shingles (numpy), the pairs of each rare
shingle's pages counted at once; a pair whose sizes alone keep it under 0.7 is not compared.
"""

from __future__ import annotations

import re
import zlib
from itertools import accumulate
from typing import Callable, Iterator

import numpy as np

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
    ordered = sorted(pages, key=lambda p: p.path)
    shingles: list[set[int]] = []
    for done, page in enumerate(ordered, 1):
        shingles.append(_shingles(page.indexed_body))
        if indexing is not None:
            indexing(done, len(ordered), page.path)
    comparing = phases("Finding near-duplicates") if phases is not None else None
    shortest = MIN_WORDS - SHINGLE + 1
    for a, b in _candidates(shingles):
        if comparing is not None:
            comparing(a + 1, len(ordered), ordered[a].path)
        sa, sb = shingles[a], shingles[b]
        small, large = sorted((len(sa), len(sb)))
        # the sizes bound the similarity (shared ≤ the smaller, union ≥ the larger)
        if small < shortest or small / large < MIN_JACCARD:
            continue
        shared = len(sa & sb)
        similarity = shared / (len(sa) + len(sb) - shared)
        if similarity >= MIN_JACCARD:
            yield ordered[a], ordered[b], similarity
    if comparing is not None:
        comparing(len(ordered), len(ordered), "")


def _candidates(shingles: list[set[int]]) -> list[tuple[int, int]]:
    """The pairs (a < b, indexes into ``shingles``) that share at least MIN_RARE_SHARED
    shingles found on 2 to RARE sets, in order."""
    sizes = [len(s) for s in shingles]
    if sum(sizes) == 0:
        return []
    values = np.fromiter((h for s in shingles for h in s), dtype=np.uint32, count=sum(sizes))
    owners = np.repeat(np.arange(len(shingles), dtype=np.int64), sizes)
    order = np.lexsort((owners, values))         # by shingle, then by set
    values, owners = values[order], owners[order]
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    counts = np.diff(np.r_[starts, len(values)])
    codes = []
    for k in range(2, RARE + 1):                 # each shingle on k sets: its k(k-1)/2 pairs
        first = starts[counts == k]
        if not len(first):
            continue
        members = owners[first[:, None] + np.arange(k)]
        i, j = np.triu_indices(k, 1)
        codes.append(members[:, i].ravel() * len(shingles) + members[:, j].ravel())
    if not codes:
        return []
    pairs, shared = np.unique(np.concatenate(codes), return_counts=True)
    kept = pairs[shared >= MIN_RARE_SHARED]
    return [(int(c) // len(shingles), int(c) % len(shingles)) for c in kept]


def _shingles(text: str) -> set[int]:
    tokens = [t for w in _WORD.findall(text.lower())
              for t in (_CJK.findall(w) if _CJK.search(w) else (w,))]
    if len(tokens) < SHINGLE:
        return set()
    # each shingle's CRC is of " ".join of its five tokens: here a slice of the tokens joined
    # and encoded once (each joined and encoded apart took most of a lint of 519 pages)
    joined = " ".join(tokens) + " "
    data = memoryview(joined.encode())
    sizes = map(len, tokens) if joined.isascii() else (len(t.encode()) for t in tokens)
    ends = list(accumulate(size + 1 for size in sizes))    # past each token's space
    starts = [0, *ends]
    crc32 = zlib.crc32
    return {crc32(data[starts[i]:ends[i + SHINGLE - 1] - 1])
            for i in range(len(tokens) - SHINGLE + 1)}
