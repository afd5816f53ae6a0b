"""A deterministic hashing embedder: no model, no network, same vectors on every machine.

Words (lower-cased; each CJK character is a word) and their character trigrams are hashed
with BLAKE2b into ``dimension`` signed buckets, then the vector is L2-normalised. Texts that
share words get a high cosine, unrelated texts a cosine near zero. Meant for fast tests and
for trying the pipeline; its vectors carry no real meaning. ``calls`` and ``texts_embedded``
count the work, so tests can assert that a re-run embeds nothing.
"""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Sequence

import numpy as np

from .base import empty_matrix, estimate_tokens, model_version_of

_WORD = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\W_]+",
                   re.UNICODE)


def _features(text: str) -> list[tuple[str, float]]:
    feats: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        feats.append(("w:" + word, 1.0))
        padded = f"^{word}$"
        for i in range(len(padded) - 2):
            feats.append(("t:" + padded[i:i + 3], 0.3))
    return feats or [("empty:", 1.0)]


def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dimension, (1.0 if (value >> 63) & 1 else -1.0)


class HashingEmbedder:
    """Feature-hashing vectors of a fixed dimension (default 256)."""

    def __init__(self, dimension: int = 256, *, max_tokens: int = 256, name: str = "v1"):
        if dimension < 8:
            raise ValueError("hashing dimension must be at least 8")
        self._dimension = dimension
        self._max_tokens = max_tokens
        self._name = name
        self._lock = threading.Lock()
        self.calls = 0
        self.texts_embedded = 0

    @property
    def model_version(self) -> str:
        """"hashing:<name>:<dimension>"."""
        return model_version_of("hashing", self._name, self._dimension)

    @property
    def dimension(self) -> int:
        """The configured dimension."""
        return self._dimension

    @property
    def max_tokens(self) -> int:
        """The configured chunk limit (estimated tokens)."""
        return self._max_tokens

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Character-based estimate, as for remote models."""
        return [estimate_tokens(t) for t in texts]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Hash each text into a unit vector."""
        return self._embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Same as documents: the hashing space is symmetric."""
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.calls += 1
            self.texts_embedded += len(texts)
        if not texts:
            return empty_matrix(self._dimension)
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, weight in _features(text):
                index, sign = _bucket(feature, self._dimension)
                out[row, index] += sign * weight
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0  # features can cancel out exactly; keep the zero vector
        return out / norms
