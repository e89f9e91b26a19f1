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
from shapeinfer.analysis.verify import compare
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
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    ran = 0
    for binding in size_grid(keys):
        try:
            actual = ort_oracle.run_all(m, ort_oracle.feeds(m, binding))
        except Exception:
            continue
        ran += 1
        for name, a in actual.items():
            reason, _, expected = compare(r.facts.get(name), a, binding)
            assert reason is None, (binding, name, reason, expected, np.asarray(a).shape)
    assert ran
    return r


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
