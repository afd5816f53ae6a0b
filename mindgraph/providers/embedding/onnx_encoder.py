"""What the offline models share: run a BERT-style ONNX encoder, mean-pool, normalise.

A subclass says how texts become token ids (``_encode``, with special tokens and truncation;
``_count`` without), what the session is fed (``_feeds``) and how the session is built
(``_build_session``). This class batches, runs batches on threads and pools.

Texts are tokenized once and run one per batch by default: no padding, and the activations
stay in cache (batches of 4, 8, 32 or token budgets measured slower). ``threads`` batches run
at once, each single-threaded: on a busy 2-core machine this beats one run spread over both
cores, whose thread pool meets at each of the graph's 300 to 600 operators and waits whenever
the other thread is descheduled. Results go back in input order. The ONNX session is created
on first use and reused; the provider is safe to call from threads.

Sentence embedding as sentence-transformers does it: mean of the last hidden state over real
tokens (attention mask), then L2 normalisation.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import ProviderError
from .base import empty_matrix, model_version_of, normalize_rows
from .load_notice import announced, counted_load


def default_threads() -> int:
    """Batches run at once: every core up to four."""
    return max(1, min(4, os.cpu_count() or 1))


class OnnxSentenceEncoder:
    """Base of the local providers; subclasses set ``DIMENSION`` and the hooks below."""

    DIMENSION = 0
    MODEL_NAME = ""                      # int8 products (the default)
    FP32_ACTIVATIONS_MODEL_NAME = ""     # fp32 products: other vectors, another name
    QUERY_PREFIX = ""
    DOCUMENT_PREFIX = ""
    ANNOUNCE_LOAD = False                # a slow load (a multilingual model) is announced

    def __init__(self, *, batch_size: int = 1, threads: int | None = None,
                 int8_activations: bool = True):
        self._batch_size = max(1, batch_size)
        self._int8_activations = int8_activations
        self._threads = threads or default_threads()
        self._lock = threading.Lock()
        self._session: Any = None
        self._input_names: tuple[str, ...] = ()
        self.calls = 0                   # embed calls, for tests and reports

    @property
    def model_version(self) -> str:
        """"local:<model name>:<dimension>", the name saying which products it runs."""
        name = self.MODEL_NAME if self._int8_activations else self.FP32_ACTIVATIONS_MODEL_NAME
        return model_version_of("local", name, self.DIMENSION)

    @property
    def dimension(self) -> int:
        """Width of every vector."""
        return self.DIMENSION

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Exact token counts (no special tokens, no prefix); loads only the tokenizer."""
        return self._count(list(texts)) if texts else []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages (with the model's document prefix, if it has one)."""
        return self._embed(texts, self.DOCUMENT_PREFIX)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed queries (with the model's query prefix, if it has one)."""
        return self._embed(texts, self.QUERY_PREFIX)

    def warm(self) -> None:
        """Load what embedding a query needs (the tokenizer and the session) now: a fresh
        process about to search calls this on a thread while it reads its indexes."""
        self._encode(["warm"], self.QUERY_PREFIX)
        self._load_session()

    # -- hooks ------------------------------------------------------------------------------

    def _encode(self, texts: list[str], prefix: str) -> list[list[int]]:
        """Token ids of ``prefix + text`` with special tokens, truncated to the model's limit."""
        raise NotImplementedError

    def _count(self, texts: list[str]) -> list[int]:
        """Token counts of the texts alone (what chunking measures)."""
        raise NotImplementedError

    def _feeds(self, ids: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
        """The session's inputs for a padded batch (int64 ids and mask, batch x tokens)."""
        raise NotImplementedError

    def _build_session(self) -> Any:
        """A ready onnxruntime session (model files checked)."""
        raise NotImplementedError

    # -- the shared path --------------------------------------------------------------------

    def _embed(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        if not texts:
            return empty_matrix(self.DIMENSION)
        ids = self._encode(list(texts), prefix)
        self._load_session()
        self.calls += 1
        batches = self._batches(ids)
        out = np.empty((len(texts), self.DIMENSION), dtype=np.float32)
        if self._threads == 1 or len(batches) == 1:
            for rows in batches:
                out[rows] = self._run_batch([ids[i] for i in rows])
        else:
            # Each worker takes the next batch when it finishes one.
            with ThreadPoolExecutor(self._threads, thread_name_prefix="encoder") as pool:
                pooled = pool.map(lambda rows: self._run_batch([ids[i] for i in rows]), batches)
                for rows, vectors in zip(batches, pooled):
                    out[rows] = vectors
        return normalize_rows(out)

    def _batches(self, ids: list[list[int]]) -> list[list[int]]:
        """Row numbers of each batch: longest texts first, ``batch_size`` at a time."""
        # Sorting keeps each batch's padding small; longest first lets the parallel runs
        # finish together (short batches fill the end). Row numbers map back afterwards.
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        size = self._batch_size
        return [order[start:start + size] for start in range(0, len(order), size)]

    def _run_batch(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled (not yet normalised) vectors of one padded batch of token ids."""
        width = max(len(seq) for seq in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for r, seq in enumerate(batch):
            ids[r, :len(seq)] = seq
            mask[r, :len(seq)] = 1
        feeds = self._feeds(ids, mask)
        try:
            hidden = self._session.run(None, {k: feeds[k] for k in self._input_names})[0]
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ProviderError(f"The local embedding model failed on a batch of "
                                f"{len(batch)} texts: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)

    def _load_session(self) -> Any:
        if self._session is None:
            with self._lock:
                if self._session is None:
                    with announced(self.MODEL_NAME) if self.ANNOUNCE_LOAD else counted_load():
                        session = self._build_session()
                    self._input_names = tuple(i.name for i in session.get_inputs())
                    self._session = session
        return self._session


# onnxruntime's graph optimiser settings (session_cache.py keys the optimised models on them).
# Its fused SkipLayerNormalization CPU kernel is several times slower than the Add +
# LayerNormalization it replaces (profiled: a fifth of all the model's time), so that one
# fusion is turned off. Same formula, float noise only.
OPTIMIZER_SETTINGS = {"level": "ORT_ENABLE_ALL", "disabled": ("SkipLayerNormFusion",)}


def create_session(model: bytes | str, *, intra_op_threads: int = 1,
                   allow_spinning: bool = False, fuse_skip_layer_norm: bool = False,
                   optimized: bool = False, save_optimized: Path | None = None,
                   weights_file: str = "") -> Any:
    """An onnxruntime CPU session with full graph optimisation; one thread per run by default.

    ``optimized``: ``model`` (a path) is a model this function saved, already optimised: no
    optimiser runs. ``save_optimized``: also write the optimised model there, its weights in
    ``weights_file`` beside it (which onnxruntime maps into memory when it loads the model)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_DISABLE_ALL if optimized
                                        else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    options.log_severity_level = 3
    # Idle pool threads sleep instead of spinning: on a busy machine spinning threads fight
    # the other work (measured: a third slower under load).
    options.add_session_config_entry("session.intra_op.allow_spinning",
                                     "1" if allow_spinning else "0")
    if save_optimized is not None:
        options.optimized_model_filepath = str(save_optimized)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", weights_file)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    disabled = [] if fuse_skip_layer_norm else list(OPTIMIZER_SETTINGS["disabled"])
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"],
                                disabled_optimizers=disabled)
