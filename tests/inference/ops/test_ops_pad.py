"""Pad: every version's pads (attribute, input, axes input), negative pads (cropping), symbolic pads
carried from Shape arithmetic; checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from support.op_oracle import IR_VERSION, Runtime, inferred, one_node, one_node_ordered

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


@pytest.mark.parametrize(
    "pads",
    [[0, 0, 0, 0], [1, 2, 3, 4], [0, -1, 2, -2], [-1, 0, 0, -1], [2, 0, 0, 2]],
)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pads_input_against_onnxruntime(pads: list[int], mode: str) -> None:
    p = np.array(pads, np.int64)
    model = one_node_ordered("Pad", ["x", "p"], [("x", FLOAT, ["h", "w"])], {"p": p}, attrs=dict(mode=mode), opset=13)
    rt = Runtime(model)
    for h, w in [(3, 4), (5, 6)]:
        out = rt.run({"x": np.zeros((h, w), np.float32)})
        if out is None:
            continue  # reflect needs pads smaller than the dim
        assert inferred(model, {"h": h, "w": w})[0] == out[0].shape


def test_axes_input_opset18_against_onnxruntime() -> None:
    p, a = np.array([1, -1, 2, 3], np.int64), np.array([-1, 0], np.int64)
    model = one_node_ordered("Pad", ["x", "p", "", "a"], [("x", FLOAT, ["b", 3, "w"])], {"p": p, "a": a}, opset=18)
    want = Runtime(model).run({"x": np.zeros((4, 3, 5), np.float32)})[0].shape
    assert inferred(model, {"b": 4, "w": 5})[0] == want == (4 - 1 + 3, 3, 5 + 1 + 2)


def test_pad_v2_attribute() -> None:
    model = one_node("Pad", [("x", FLOAT, ["n", 4])], attrs=dict(pads=[1, 0, 2, -1]), opset=2)
    assert inferred(model, {"n": 3})[0] == (6, 3)


def test_unknown_pads_open_only_the_padded_axes() -> None:
    model = one_node_ordered(
        "Pad", ["x", "p", "", "a"], [("x", FLOAT, [2, 3, 4]), ("p", INT64, [2])], {"a": np.array([1], np.int64)}
    )
    assert inferred(model)[0] == (2, None, 4)


def test_symbolic_pads_from_shape_arithmetic() -> None:
    # pad the last axis up to 16: pads = [0, 0, 0, 16 - w]
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=1),
        helper.make_node("Sub", ["sixteen", "s"], ["right"]),
        helper.make_node("Concat", ["zeros3", "right"], ["p"], axis=0),
        helper.make_node("Pad", ["x", "p"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", FLOAT, [2, "w"])],
        [helper.make_empty_tensor_value_info("y")],
        [
            helper.make_tensor("sixteen", INT64, [1], [16]),
            helper.make_tensor("zeros3", INT64, [3], [0, 0, 0]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=IR_VERSION)
    for w in (3, 16):
        assert inferred(model, {"w": w})[0] == (2, 16)
    assert Runtime(model).run({"x": np.zeros((2, 5), np.float32)})[0].shape == (2, 16)
