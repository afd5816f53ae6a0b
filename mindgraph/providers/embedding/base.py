"""The embedding provider contract and helpers shared by every backend.

A provider turns texts into L2-normalised float32 vectors. Documents and queries have their
own entry points because some models embed them differently (a task type, a prefix).
``model_version`` names provider, model and dimension ("local:all-MiniLM-L6-v2-int8:384");
stores key every vector on it so that vectors of two models are never compared.

Chunking needs to know how long a text is in the model's own tokens: ``count_tokens`` is exact
for the local model (its tokenizer) and an estimate for remote ones (see ``estimate_tokens``).

A provider that calls a server says so with a class attribute ``remote = True`` (read with
``getattr(provider, "remote", False)``): retrieval then overlaps the call with keyword search.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Iterator, Protocol, Sequence, TypeVar, runtime_checkable

import numpy as np

from ...errors import ConfigError, ProviderError

T = TypeVar("T")

# CJK ideographs, kana and hangul: roughly one token per character in BPE/SentencePiece models.
_WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_SCRIPTS = (("ja", re.compile(r"[\u3040-\u30ff]")), ("zh", re.compile(r"[\u4e00-\u9fff]")),
            ("ko", re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")))


@runtime_checkable
class EmbeddingProvider(Protocol):
    """Turns texts into unit vectors. Implementations must be safe to call from threads."""

    @property
    def model_version(self) -> str:
        """"<provider>:<model>:<dimension>"; part of every stored vector's key."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector this provider returns."""
        ...

    @property
    def max_tokens(self) -> int:
        """Most tokens of text one chunk may have (model limit less its special tokens)."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Length of each text in the model's tokens (exact or a safe estimate)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts to be stored: float32 array of shape (len(texts), dimension)."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed search queries: float32 array of shape (len(texts), dimension)."""
        ...


REMOTE_CHUNK_TOKENS = 480   # focused chunks, far under remote models' input limits


class EstimatedTokens:
    """Chunk sizing for models whose tokenizer is not available offline: a character-based
    estimate and a fixed chunk budget (mixed into the remote providers)."""

    chunk_tokens: int = REMOTE_CHUNK_TOKENS

    @property
    def max_tokens(self) -> int:
        """Chunk size in estimated tokens."""
        return self.chunk_tokens

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Character-based estimate of each text's length in tokens."""
        return [estimate_tokens(t) for t in texts]


def model_version_of(provider: str, model: str, dimension: int) -> str:
    """Build the "<provider>:<model>:<dimension>" name that keys stored vectors."""
    return f"{provider}:{model}:{dimension}"


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Return float32 rows scaled to unit length (all-zero rows stay zero)."""
    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {out.shape}")
    with np.errstate(invalid="ignore", over="ignore"):  # NaN/inf rows: refused by the sync
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out = np.ascontiguousarray(out / norms, dtype=np.float32)
    # Flush subnormal values (MiniLM emits ~1e-33 in a few dimensions) to zero: they change no
    # cosine, but make every matrix product that touches them many times slower.
    out[np.abs(out) < np.finfo(np.float32).tiny] = 0.0
    return out


def estimate_tokens(text: str) -> int:
    """A cautious token count for models whose tokenizer we do not ship.

    About four characters per token for alphabetic text and one per CJK character; rounded
    up, so a chunk sized with it stays under the real limit.
    """
    wide = len(_WIDE.findall(text))
    return wide + math.ceil((len(text) - wide) / 3.5)


def script_language(text: str) -> str:
    """"ja" (kana), "zh" (Han only), "ko" (Hangul) or "en": page/language.py's rule for a
    query's language, for providers, which must not import page/ (one model per language
    routes a text the caller did not name the language of)."""
    return next((name for name, letters in _SCRIPTS if letters.search(text)), "en")


def batched(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Consecutive slices of at most ``size`` items."""
    if size < 1:
        raise ValueError("batch size must be at least 1")
    for start in range(0, len(items), size):
        yield items[start:start + size]


def empty_matrix(dimension: int) -> np.ndarray:
    """A (0, dimension) float32 array: the answer to embedding no texts."""
    return np.zeros((0, dimension), dtype=np.float32)


def check_matrix(matrix: np.ndarray, count: int, dimension: int, who: str) -> np.ndarray:
    """Validate a provider's answer (row count and width) and return it normalised."""
    if matrix.ndim != 2 or matrix.shape[0] != count:
        raise ProviderError(f"{who} returned {matrix.shape[0] if matrix.ndim else 0} vectors "
                            f"for {count} texts; the server's answer is incomplete.")
    if matrix.shape[1] != dimension:
        raise ConfigError(f"{who} returned vectors of dimension {matrix.shape[1]}, but "
                          f"{dimension} was expected. Set embedding.dimension to "
                          f"{matrix.shape[1]} (or 0 for the model's default) in mindgraph.yml.")
    return normalize_rows(matrix)


KeySource = Callable[[], str]
"""Returns an API key when first needed, so a dry run never asks for one."""


# Models known to be trained on English only: their vectors carry little meaning for
# Chinese or Japanese text, so hybrid retrieval gives them less weight on such queries.
ENGLISH_ONLY_MODELS = ("local:all-MiniLM-L6-v2",)


# Models whose cosines sit in a narrow high band: the E5 family is trained with a contrastive
# temperature of 0.01, so over the vault a nonsense word's best section scores 0.86, a matching
# question's 0.91 and the median section 0.77 (README, Offline models).
COMPRESSED_COSINE_MODELS = ("local:multilingual-e5-small",)


def compresses_cosines(provider: EmbeddingProvider) -> bool:
    """True when the provider's cosines crowd into a narrow band (hybrid fusion measures them
    from the query's zero point and scores every candidate, retrieval/hybrid.py)."""
    declared = getattr(provider, "compressed_cosines", None)
    if declared is not None:
        return bool(declared)
    return provider.model_version.startswith(COMPRESSED_COSINE_MODELS)


def model_languages(provider: EmbeddingProvider) -> tuple[str, ...] | None:
    """Languages the provider's model was trained for (None: multilingual or unknown)."""
    declared = getattr(provider, "languages", None)
    if declared is not None:
        return tuple(declared)
    version = provider.model_version
    return ("en",) if version.startswith(ENGLISH_ONLY_MODELS) else None
