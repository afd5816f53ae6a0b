"""The deterministic hashing embedder used by fast tests."""

from __future__ import annotations

import numpy as np

from mindgraph.providers.embedding import EmbeddingProvider, HashingEmbedder


def test_is_an_embedding_provider_with_a_versioned_name():
    h = HashingEmbedder(64)
    assert isinstance(h, EmbeddingProvider)
    assert h.model_version == "hashing:v1:64" and h.dimension == 64


def test_vectors_are_unit_length_deterministic_and_counted():
    texts = ["Sync notes across devices", "同期は端末間でノートを保つ", ""]
    a = HashingEmbedder(128).embed_documents(texts)
    b = HashingEmbedder(128).embed_queries(texts)
    assert a.dtype == np.float32 and a.shape == (3, 128)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(a, b)
    counting = HashingEmbedder(32)
    counting.embed_documents(["x", "y"])
    counting.embed_documents([])
    assert (counting.calls, counting.texts_embedded) == (2, 2)
    assert counting.embed_documents([]).shape == (0, 32)


def test_shared_words_score_higher_than_unrelated_text():
    v = HashingEmbedder(256).embed_documents([
        "configure the sync plugin on iOS", "sync plugin configuration for iOS devices",
        "baking sourdough bread at home"])
    assert v[0] @ v[1] > 0.4 > v[0] @ v[2]
