"""The offline MiniLM provider, run for real (onnxruntime, int8 model from the package)."""

from __future__ import annotations

import numpy as np
import pytest

from mindgraph.providers.embedding import EmbeddingProvider
from mindgraph.providers.embedding.local import (LocalMiniLMProvider, default_model_path,
                                                 default_tokenizer_path)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm() -> LocalMiniLMProvider:
    """One provider for the module (the ONNX session is created once)."""
    return LocalMiniLMProvider()


def test_model_files_come_from_the_packages():
    assert default_model_path().name == "model.onnx" and default_model_path().is_file()
    assert default_tokenizer_path().name == "tokenizer.json"
    assert default_tokenizer_path().is_file()


def test_identity(minilm):
    assert isinstance(minilm, EmbeddingProvider)
    assert minilm.model_version == "local:all-MiniLM-L6-v2-int8:384"
    assert (minilm.dimension, minilm.max_tokens) == (384, 254)


def test_paraphrases_are_closer_than_unrelated_sentences(minilm):
    v = minilm.embed_documents([
        "A man is eating food.", "A man is eating a piece of bread.",
        "The girl is carrying a baby.", "How do I sync my notes between phone and laptop?",
        "Keeping notes in step across mobile and desktop devices."])
    assert v.shape == (5, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    # sentence-transformers' fp32 all-MiniLM-L6-v2 gives 0.755 for this pair.
    assert v[0] @ v[1] == pytest.approx(0.755, abs=0.03)
    assert v[0] @ v[1] > 0.5 > v[0] @ v[2]
    assert v[3] @ v[4] > max(v[3] @ v[0], v[3] @ v[2]) + 0.2


def test_identical_text_has_cosine_one_and_order_is_restored(minilm):
    texts = ["short", "a somewhat longer sentence about vaults and plugins",
             "mid length text here", "short"] + [f"note number {i} " * (i % 7 + 1)
                                               for i in range(40)]
    together = minilm.embed_documents(texts)
    assert together[0] @ together[3] == pytest.approx(1.0, abs=1e-5)
    # Each text alone gives the same vector as inside a padded, length-sorted batch (the
    # model computes in fp32; only float summation order differs).
    for i in (0, 1, 2, 17, 43):
        alone = minilm.embed_queries([texts[i]])[0]
        assert alone @ together[i] > 0.99999


def test_inputs_are_truncated_to_256_word_pieces(minilm):
    words = " ".join(f"topic{i}" for i in range(600))
    counts = minilm.count_tokens([words, "Hello world!", ""])
    assert counts[0] > 1000 and counts[1:] == [3, 0]
    long, prefix = minilm.embed_documents([words, " ".join(f"topic{i}" for i in range(150))])
    assert np.isfinite(long).all()
    assert long @ prefix > 0.97


def test_session_is_created_once_and_reused(minilm):
    minilm.embed_documents(["one"])
    session = minilm._session
    minilm.embed_queries(["two"])
    assert minilm._session is session
    assert minilm.embed_documents([]).shape == (0, 384)


def test_counting_tokens_does_not_load_the_model():
    fresh = LocalMiniLMProvider()
    assert fresh.count_tokens(["Hello world!", "tokenization"]) == [3, 2]  # token ##ization
    assert fresh._session is None
