"""Helpers shared by the per-pass tests."""

from __future__ import annotations

import onnx
from onnx import helper as h

from shapeinfer.passes import PassContext, pass_module


def vo(name: str, dtype: int, rank: int) -> onnx.ValueInfoProto:
    """A graph output of known rank (the checker wants a shape) with open dims."""
    return h.make_tensor_value_info(name, dtype, [f"{name}_{i}" for i in range(rank)])


def run_pass(name: str, m: onnx.ModelProto) -> tuple[onnx.ModelProto, dict]:
    """Run one pass on ``m``; its output must pass the full checker."""
    out, changes = pass_module(name).run(m, PassContext())
    onnx.checker.check_model(out, full_check=True)
    return out, changes
