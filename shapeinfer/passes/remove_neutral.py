"""remove-neutral: arithmetic with a neutral constant operand is removed where it is exact.

Contract (main graph, default-domain ``Add``/``Sub``/``Mul``/``Div`` with a stored constant
operand that is not an overridable graph input, dims and types from inference):

- The node's output must have the dims and element type of the other operand (the constant
  broadcasts without growing it); its readers then read that operand, and the node goes.
- Removed, for every value of ``x`` (IEEE semantics, any runtime):
  ``x * 1``, ``1 * x``, ``x / 1`` (integer or floating point: ``x * 1.0`` is ``x`` for every
  float, signed zeros, infinities and NaN included); integer ``x + 0``, ``0 + x``,
  ``x - 0``; float ``x + (-0.0)``, ``(-0.0) + x`` and ``x - (+0.0)`` (which is ``x + (-0.0)``).
- A ``Mul`` by a constant of more than one element, all 1, is kept: it is the scale of a
  normalization (RMSNorm and T5 LayerNorm weights are 1.0 in an untrained model), and
  onnxruntime fuses the normalization into SimplifiedLayerNormalization only with its scale
  Mul (removing it makes such decoders slower in onnxruntime: docs/decisions.md). A scalar 1
  (rotary embeddings' ``attention_scaling``) is removed.
- Float ``x + (+0.0)`` (and ``x - (-0.0)``) is **not** the identity: ``-0.0 + 0.0`` is
  ``+0.0``. It is removed only when ``x`` can never be ``-0.0``: a float32 output of
  ``MatMul``, or of ``Gemm`` without ``C`` and with ``alpha`` 1. A sum of products is
  ``-0.0`` only when its accumulation starts from ``-0.0``; onnxruntime's and OpenVINO's CPU
  kernels start it from ``+0.0`` (the runs that show it: docs/decisions.md). These are the
  zero biases torch.export writes after each linear layer.
- A graph output keeps its name (as in ``remove-noop-reshape``): the operand is renamed to it
  when a main-graph node produces the operand and it is not a graph output itself; else the
  node stays.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import onnx

from shapeinfer.ir.graph import Constant
from shapeinfer.ir.queries import const_array, is_stored_constant, lazy_node_ids, producer
from shapeinfer.passes.base import Pass, PassResult
from shapeinfer.passes.remove_noop_reshape import _bypass, _same

if TYPE_CHECKING:
    from shapeinfer.inference.engine import Result
    from shapeinfer.ir.graph import GraphModel

OPS = {"Add", "Sub", "Mul", "Div"}

#: Largest constant (elements) read to decide: neutral operands are biases and scales.
MAX_ELEMENTS = 1 << 16

_FLOATS = {
    onnx.TensorProto.FLOAT,
    onnx.TensorProto.DOUBLE,
    onnx.TensorProto.FLOAT16,
    onnx.TensorProto.BFLOAT16,
}


def never_negative_zero(t) -> bool:
    """True when tensor ``t`` (float32, see the module docstring) can never hold ``-0.0``: the
    output of a MatMul, or of a Gemm without ``C`` and with ``alpha`` 1."""
    p = producer(t)
    if p is None or p.domain not in ("", "ai.onnx") or p.outputs[0] is not t:
        return False
    if p.op == "MatMul":
        return True
    if p.op == "Gemm":
        no_c = len(p.inputs) < 3 or not p.inputs[2].name
        return no_c and float(p.attrs.get("alpha", 1.0)) == 1.0
    return False


def _value(t, graph_inputs: set[int]) -> np.ndarray | None:
    """The stored value of ``t``, when it is a small constant the model cannot override."""
    if not t.name or not is_stored_constant(t, graph_inputs):
        return None
    if isinstance(t, Constant) and math.prod(t.shape) > MAX_ELEMENTS:
        return None
    v = const_array(t)
    if v is None or v.size > MAX_ELEMENTS or v.dtype == object:
        return None
    return v


def neutral_operand(op: str, k: int, c: np.ndarray, x, dtype: int) -> bool:
    """True when ``op`` with the constant ``c`` as its input ``k`` returns its other operand
    ``x`` (element type ``dtype``) unchanged, for every value ``x`` can have."""
    if c.size == 0:
        return False
    floating = dtype in _FLOATS
    if op == "Mul" and c.size > 1:
        return False  # a normalization's scale (see the module docstring): kept
    if op == "Mul" or (op == "Div" and k == 1):
        return bool(np.all(c == 1))
    if op not in ("Add", "Sub") or (op == "Sub" and k != 1):
        return False
    if not np.all(c == 0):
        return False
    if not floating:
        return True
    neg = np.signbit(c)
    # x + (-0.0) and x - (+0.0) are x for every x; x + (+0.0) maps -0.0 to +0.0
    exact = bool(np.all(neg)) if op == "Add" else not bool(np.any(neg))
    return exact or (dtype == onnx.TensorProto.FLOAT and never_negative_zero(x))


def run(gm: GraphModel, result: Result | None, ctx) -> PassResult:
    """Remove the neutral arithmetic of the main graph (see the module docstring)."""
    facts = result.facts
    g = gm.graph
    outputs = {t.name for t in g.outputs}
    graph_inputs = {id(t) for t in g.inputs}
    main_ids = lazy_node_ids(g)  # ids of the main graph's nodes, asked only in rare cases

    removed: set[int] = set()
    for node in [n for n in g.nodes if n.op in OPS and n.domain in ("", "ai.onnx")]:
        if len(node.inputs) != 2 or len(node.outputs) != 1:
            continue
        y = node.outputs[0]
        fy = facts.get(y.name)
        for k in (1, 0):
            x, c = node.inputs[1 - k], node.inputs[k]
            if not x.name or not _same(facts.get(x.name), fy):
                continue
            v = _value(c, graph_inputs)
            if v is None or not neutral_operand(node.op, k, v, x, fy.dtype):
                continue
            if k == 1 or node.inputs[0] is x:
                swapped = False
            else:  # _bypass reads the node's first input
                node.inputs[0], node.inputs[1] = node.inputs[1], node.inputs[0]
                swapped = True
            if _bypass(node, main_ids, outputs):
                removed.add(id(node))
            elif swapped:
                node.inputs[0], node.inputs[1] = node.inputs[1], node.inputs[0]
            break
    if not removed:
        return PassResult()
    gm.remove_nodes(g, removed)
    return PassResult({"neutral arithmetic removed": len(removed)}, edited=True)


PASS = Pass(
    "remove-neutral",
    run,
    keeps_values=True,
    infers_first=True,
)
