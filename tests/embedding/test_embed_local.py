"""The offline MiniLM provider, run for real (onnxruntime, int8 model from the package)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mindgraph.errors import ConfigError
from mindgraph.providers.embedding import EmbeddingProvider
from mindgraph.providers.embedding.local import (LocalMiniLMProvider, create_session,
                                                 default_model_path, default_tokenizer_path)
from mindgraph.providers.embedding.minilm_graph import prepare_model

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm() -> LocalMiniLMProvider:
    """One provider for the module (the ONNX session is created once)."""
    return LocalMiniLMProvider()


@pytest.fixture(scope="module")
def minilm_fp32() -> LocalMiniLMProvider:
    """The same model with fp32 products (the packaged graph's arithmetic)."""
    return LocalMiniLMProvider(int8_activations=False, batch_size=8)


@pytest.fixture(scope="module")
def vault_paragraphs(corpora: Path) -> list[str]:
    """120 real paragraphs of the Obsidian Help vault (English, Japanese and Chinese)."""
    texts = []
    for lang in ("en", "ja", "zh"):
        for page in sorted((corpora / "obsidian-help" / lang).rglob("*.md"))[:12]:
            texts += [p.strip() for p in page.read_text(encoding="utf-8").split("\n\n")
                      if len(p.strip()) > 80]
    return texts[:120]


def _op_counts(model: bytes) -> Counter:
    import onnx

    return Counter(node.op_type for node in onnx.load_from_string(model).graph.node)


def test_model_files_come_from_the_packages():
    assert default_model_path().name == "model.onnx" and default_model_path().is_file()
    assert default_tokenizer_path().name == "tokenizer.json"
    assert default_tokenizer_path().is_file()


def test_identity(minilm, minilm_fp32):
    assert isinstance(minilm, EmbeddingProvider)
    assert minilm.model_version == "local:all-MiniLM-L6-v2-w8a8:384"
    # fp32 products give other vectors: they must never share a model_version.
    assert minilm_fp32.model_version == "local:all-MiniLM-L6-v2-int8:384"
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
    for i in (0, 1, 2, 17, 43):
        alone = minilm.embed_queries([texts[i]])[0]
        assert alone @ together[i] > 0.99999


def test_vectors_do_not_depend_on_the_batch(minilm, vault_paragraphs):
    # Activations are quantised per token, so a text padded inside a batch of 8 others gets
    # the vector it gets alone (only fp32 summation order differs). A per-batch scale
    # (onnxruntime's quantize_dynamic) fails this: minimum about 0.992 on the vault.
    texts = vault_paragraphs[:40]
    batched = LocalMiniLMProvider(batch_size=8).embed_documents(texts)
    alone = minilm.embed_documents(texts)
    assert (batched * alone).sum(axis=1).min() > 0.99999


def test_parallel_runs_give_the_same_bits_in_input_order(vault_paragraphs):
    texts = vault_paragraphs[:30]
    one = LocalMiniLMProvider(threads=1, batch_size=4).embed_documents(texts)
    three = LocalMiniLMProvider(threads=3, batch_size=4).embed_documents(texts)
    np.testing.assert_array_equal(one, three)


def test_int8_and_uint8_weights_give_the_same_bits(vault_paragraphs):
    # Integer sums are exact in both layouts (int8 weights on VNNI CPUs, uint8 elsewhere), so
    # the vectors do not depend on which one this CPU gets. (Where the CPU lacks VNNI the
    # int8 kernel itself may saturate; that is why it is not used there.)
    vectors = []
    for signed in (True, False):
        provider = LocalMiniLMProvider(threads=1)
        provider._session = create_session(prepare_model(default_model_path(), True, signed))
        provider._input_names = tuple(i.name for i in provider._session.get_inputs())
        vectors.append(provider.embed_documents(vault_paragraphs[:40]))
    np.testing.assert_array_equal(vectors[0], vectors[1])


def test_int8_activations_agree_with_fp32_products(minilm, minilm_fp32, vault_paragraphs):
    fast = minilm.embed_documents(vault_paragraphs)
    exact = minilm_fp32.embed_documents(vault_paragraphs)
    cosines = (fast * exact).sum(axis=1)
    assert len(vault_paragraphs) >= 100
    assert cosines.min() > 0.99 and cosines.mean() > 0.997


def test_exact_rewrites_keep_the_packaged_graphs_numbers(vault_paragraphs, minilm):
    # NaN guards dropped, GELU fused, SkipLayerNormalization left unfused: the same hidden
    # states up to float noise.
    tokenizer = minilm._load_tokenizer()
    ids = [e.ids for e in tokenizer.encode_batch(vault_paragraphs[:6])]
    width = max(map(len, ids))
    feeds = {"input_ids": np.zeros((6, width), np.int64),
             "attention_mask": np.zeros((6, width), np.int64)}
    for r, seq in enumerate(ids):
        feeds["input_ids"][r, :len(seq)] = seq
        feeds["attention_mask"][r, :len(seq)] = 1
    feeds["token_type_ids"] = np.zeros_like(feeds["input_ids"])
    # The packaged graph as the provider used to run it (SkipLayerNormalization fused).
    packaged = create_session(str(default_model_path()),
                              fuse_skip_layer_norm=True).run(None, feeds)[0]
    rewritten = create_session(prepare_model(default_model_path(), False)).run(None, feeds)[0]
    assert np.abs(packaged).max() > 1.0          # hidden states, not near-zero noise
    np.testing.assert_allclose(rewritten, packaged, atol=1e-4)   # measured 6e-6


def test_the_graph_is_rewritten_as_described():
    packaged = _op_counts(default_model_path().read_bytes())
    fast = _op_counts(prepare_model(default_model_path(), True))
    exact = _op_counts(prepare_model(default_model_path(), False))
    assert packaged["IsNaN"] == 6 and packaged["Erf"] == 6 and packaged["MatMul"] == 48
    for counts in (fast, exact):
        assert counts["IsNaN"] == 0 and counts["Erf"] == 0 and counts["Gelu"] == 6
    # 36 weight products become int8 (Q, K, V share one quantised input); the 12 attention
    # products stay fp32.
    assert (fast["MatMulInteger"], fast["QuantizeLinear"], fast["MatMul"]) == (36, 24, 12)
    assert _op_counts(prepare_model(default_model_path(), True, False)) == fast
    assert (exact["MatMulInteger"], exact["MatMul"]) == (0, 48)


def test_an_unexpected_model_file_is_refused(tmp_path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "plain",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                              [weight])
    path = tmp_path / "other.onnx"
    onnx.save(helper.make_model(graph), str(path))
    with pytest.raises(ConfigError, match=r"other\.onnx.*0 int8-weight products.*reinstall"):
        prepare_model(path)
    with pytest.raises(ConfigError, match="other.onnx"):
        LocalMiniLMProvider(model_path=path).embed_documents(["hello"])


def test_missing_onnx_package_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)   # import onnx now raises ImportError
    with pytest.raises(ConfigError, match="pip install onnx"):
        LocalMiniLMProvider().embed_documents(["hello"])


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
