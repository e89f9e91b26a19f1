"""tf2onnx's shape idioms at dynamic height and width, checked against onnxruntime.

Each model is the minimal form of a pattern tf2onnx writes for a Keras or ``tf.function`` vision
model (``tf.image.resize_with_pad``, ``x[:, :n]`` with a tensor ``n``); every tensor inferred
must agree with onnxruntime at every size of the grid where it runs.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from support.written import size_grid

import shapeinfer
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle


def _ints(name: str, v) -> onnx.TensorProto:
    return nh.from_array(np.array(v, np.int64), name)


def _model(nodes, inits, x_dims, opset: int = 13) -> onnx.ModelProto:
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, x_dims)],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        inits,
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def _agrees_with_onnxruntime(m: onnx.ModelProto, keys) -> shapeinfer.Result:
    return ort_oracle.assert_inferred_dims_hold(m, size_grid(keys))


def test_a_constant_pad_with_one_axis_padded_by_a_value_read_at_run_time_keeps_its_rank():
    """``tf.image.resize_with_pad``: pads ``[0, p, 0, 0, 0, 0, 1, 0]`` with ``p`` read from the
    data. The padded axis is unknown; the others are known (the rule raised on the unknown one
    and the output lost even its rank)."""
    nodes = [
        h.make_node("ReduceMax", ["x"], ["m"], keepdims=0),
        h.make_node("Cast", ["m"], ["mi"], to=T.INT64),
        h.make_node("Abs", ["mi"], ["p0"]),
        h.make_node("Reshape", ["p0", "one"], ["p"]),
        h.make_node("Concat", ["z", "p", "z", "z", "z", "z", "one", "z"], ["pads"], axis=0),
        h.make_node("Pad", ["x", "pads"], ["y"], mode="constant"),
    ]
    m = _model(nodes, [_ints("z", [0]), _ints("one", [1])], ["batch", "height", "width", 3])
    r = _agrees_with_onnxruntime(m, ["batch", "height", "width"])
    y = r.facts["y"].shape
    assert y[0] == D.sym("batch") and y[2] == D.add(D.sym("width"), 1) and y[3] == 3
    assert not any(d.code == "E001" for d in r.diagnostics), r.diagnostics


def _strided_slice_end(logic: str, constant: list[bool]) -> onnx.ModelProto:
    """tf2onnx's ``x[:, :n]``: ``ends = Where(L(Equal(n, 1e9), c), -1e9, n)``, ``L`` And or
    Or, ``c`` a constant (tf2onnx's ``Less(step, 0)``, False for a positive step); ``n`` is the
    input's height."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Slice", ["s", "one", "two"], ["n"]),
        h.make_node("Equal", ["n", "big"], ["eq"]),
        h.make_node(logic, ["eq", "c"], ["cond"]),
        h.make_node("Where", ["cond", "nbig", "n"], ["ends"]),
        h.make_node("Slice", ["x", "zero", "ends", "one", "one"], ["y"]),
    ]
    inits = [_ints("one", [1]), _ints("two", [2]), _ints("big", [10**9]), _ints("nbig", [-(10**9)])]
    inits += [_ints("zero", [0]), nh.from_array(np.array(constant, bool), "c")]
    return _model(nodes, inits, ["batch", "height", 8])


def test_and_with_a_false_operand_is_false_whatever_the_other_and_the_slice_keeps_its_end():
    r = _agrees_with_onnxruntime(_strided_slice_end("And", [False]), ["batch", "height"])
    assert r.facts["cond"].value == (0,)
    assert r.facts["y"].shape == (D.sym("batch"), D.sym("height"), 8)


def test_or_with_a_false_operand_is_the_other_operand_and_with_true_is_true():
    r = _agrees_with_onnxruntime(_strided_slice_end("Or", [False]), ["batch", "height"])
    assert r.facts["cond"].value == r.facts["eq"].value  # (unknown: height may be 1e9)
    r = _agrees_with_onnxruntime(_strided_slice_end("Or", [True]), ["batch", "height"])
    assert r.facts["cond"].value == (1,)
    height = D.sym("height")
    assert r.facts["y"].shape == (D.sym("batch"), D.dmax(D.sub(height, 10**9), 0), 8)  # (ends -1e9)
