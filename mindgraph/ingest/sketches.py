"""Bottom-k MinHash sketches of a note's word shingles, which tell a moved note with small
edits from a new one (moves.py).

Similarity estimates the Jaccard similarity of two notes' sets of shingles (every run of
``SHINGLE_WORDS`` words; a CJK character counts as a word) from their sketches (the
``SIGNATURE_SIZE`` lowest shingle hashes). Apart from moves.py so that NumPy is imported only
by a run that makes or compares sketches, and by a first run while its workers read (in the
parent, not before them: pipeline.py).
"""

from __future__ import annotations

import base64
import functools

import numpy as np

SHINGLE_WORDS = 3
SIGNATURE_SIZE = 32
_MIX = np.uint64(0x9E3779B97F4A7C15)


@functools.lru_cache(maxsize=1)
def _weights() -> np.ndarray:
    """The per-position byte weights of a word hash (made on first use: numpy.random costs
    a search that only reads where moved pages' vectors went ~20 ms of its start-up)."""
    return np.random.default_rng(20261201).integers(1, 1 << 63, 64, dtype=np.uint64) | 1


def warm() -> None:
    """Import now what the first sketch imports on its way (numpy.random for the weights,
    numpy.ma, which ``np.unique`` imports on its first call): a parent that calls this before
    forking spares each worker both imports (~70 ms of CPU a worker)."""
    _weights()
    np.ma.is_masked(np.zeros(0))


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
    return overlap(sketch(a), sketch(b))


def sketch(signature: str) -> frozenset[int]:
    """A signature's hashes (empty for "")."""
    return frozenset(np.frombuffer(base64.b64decode(signature), dtype="<u8").tolist()) \
        if signature else frozenset()


def overlap(left: frozenset[int], right: frozenset[int]) -> float:
    """The share of the union's ``SIGNATURE_SIZE`` lowest hashes that both sketches hold."""
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
