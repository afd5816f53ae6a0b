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

import numpy as np

SHINGLE_WORDS = 3
SIGNATURE_SIZE = 32
_MIX = np.uint64(0x9E3779B97F4A7C15)


# The per-position byte weights of a word hash: numpy.random.default_rng(20261201).integers(1,
# 2**63, 64, dtype=np.uint64) | 1, written out (tests/ingest/test_moves.py checks it) so that
# no process imports numpy.random for them (~12 ms of CPU, on a first run's serial path).
_WEIGHTS = np.array([
    0x5554968B36B161A1, 0x0730E2E19D883E0D, 0x31BC2AA3C5334315, 0x2D3975092AB3C3F7,
    0x4FC13E5DEABA02F1, 0x13D4573DB547B67F, 0x2CF1554636D67F09, 0x3F6FAC21EB3130DD,
    0x180F169C8830E4C1, 0x404A4C76F0BA0387, 0x0A65E9359EA14BBF, 0x1F0D31CD4F54E57D,
    0x24D59F278C15AA0B, 0x76FB21A4A7FD943D, 0x41C3703A304ADE07, 0x1A080F96F185DB95,
    0x428010707E513E97, 0x44E85DF356BF08AD, 0x553C36693F75BB37, 0x3570DFCE6124F0C7,
    0x5BBF0333FF699107, 0x442F2E35B4A1BA6F, 0x25ABCDF0C7B92E65, 0x2C3DC0CF775F5B9B,
    0x35B379D7AE9DF015, 0x65AE36EFDF9B4D57, 0x693A6F7B145BD9CF, 0x5576B24257DCB3EB,
    0x3C8EFB374490E693, 0x226AAD69D46F0481, 0x20EC5D52FA655399, 0x73BD3681AB4CE8F5,
    0x6F15B561F5474E61, 0x6FBECC84774D65BB, 0x01DF47A268DE05FD, 0x0C8256201C1DD34F,
    0x164D17D4A39C1D99, 0x109FCAE7DB6869A5, 0x0B88FA990885D7DD, 0x6F5503D58D3BE5EB,
    0x33220A6FEEAC915B, 0x51115B4B72C4B6DF, 0x76F95AD2F077AA9F, 0x04AEC56D049EC0E5,
    0x3B0D58CE7C7CB8B1, 0x20F24C3934D22C1F, 0x28D046D346C85245, 0x2B3EFE64E7475F19,
    0x361369C8356A5DE1, 0x2C74D923247CF087, 0x2C9745342E802A4B, 0x67538D9EA09A03B1,
    0x664CD68C4E72D65B, 0x052FD680E5464A9B, 0x13E08AB67CF73815, 0x60F5505DEA13CE05,
    0x375A487E41076E83, 0x04C0286E8F2DE72F, 0x2FD1907BA98B847B, 0x053CBFC66BD3A0A7,
    0x42C0566D1C606909, 0x7A64EF41E790C687, 0x7CC1A48204A1878D, 0x0CED19DD6F77BFA3,
], dtype=np.uint64)


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
    # a word starts after whitespace, and at each byte from 0xE3 up (in place: no copies)
    starts_at = np.empty_like(word_bytes)
    starts_at[0] = True
    np.logical_not(word_bytes[:-1], out=starts_at[1:])
    starts_at |= data >= 0xE3
    starts_at &= word_bytes
    starts = np.flatnonzero(starts_at[word_bytes])
    kept = data[word_bytes]
    # each byte's position in its word: its index less its word's start (the running maximum
    # of the starts placed at themselves: np.repeat of the starts took twice as long)
    first = np.zeros(kept.size, dtype=np.intp)
    first[starts] = starts
    np.maximum.accumulate(first, out=first)
    position = np.arange(kept.size, dtype=np.intp)
    position -= first
    position &= _WEIGHTS.size - 1       # % 64
    # each word: its bytes times per-position constants, summed (a polynomial hash)
    weighted = _WEIGHTS[position]
    weighted *= kept
    words = np.add.reduceat(weighted, starts)
    width = min(SHINGLE_WORDS, words.size)
    count = words.size - width + 1
    shingles = words[:count].copy()
    for offset in range(1, width):
        shingles *= _MIX
        shingles += words[offset:offset + count]
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
        lowest = _distinct(np.partition(values, 4 * k)[:4 * k])
        if lowest.size >= k:
            return lowest[:k]
    return _distinct(values)[:k]


def _distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)``, without the numpy.ma import its first call costs (~10 ms)."""
    values = np.sort(values)
    return values[np.concatenate(([True], values[1:] != values[:-1]))]


def _finalise(values: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: spreads the shingle hashes over all 64 bits."""
    values = values ^ (values >> np.uint64(30))
    values = values * np.uint64(0xBF58476D1CE4E5B9)
    values = values ^ (values >> np.uint64(27))
    values = values * np.uint64(0x94D049BB133111EB)
    return values ^ (values >> np.uint64(31))
