"""Helpers shared by the per-pass tests."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper as h
from onnx import numpy_helper

from shapeinfer.passes import run_pass as run_one


def vo(name: str, dtype: int, rank: int) -> onnx.ValueInfoProto:
    """A graph output of known rank (the checker wants a shape) with open dims."""
    return h.make_tensor_value_info(name, dtype, [f"{name}_{i}" for i in range(rank)])


def run_pass(name: str, m: onnx.ModelProto) -> tuple[onnx.ModelProto, dict]:
    """Run one pass on ``m``; its output must pass the full checker."""
    out, changes = run_one(name, m)
    onnx.checker.check_model(out, full_check=True)
    return out, changes


def model_of(nodes, inputs, outputs, inits=(), opset: int = 17) -> onnx.ModelProto:
    """A model of one graph at default-domain ``opset`` (IR 8); it must pass the full checker."""
    m = h.make_model(
        h.make_graph(nodes, "g", inputs, outputs, list(inits)), opset_imports=[h.make_opsetid("", opset)], ir_version=8
    )
    onnx.checker.check_model(m, full_check=True)
    return m


def i64(name: str, values) -> onnx.TensorProto:
    """An int64 initializer ``name`` holding ``values`` (a scalar for a plain int)."""
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)
