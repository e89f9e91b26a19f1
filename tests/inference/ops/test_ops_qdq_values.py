"""Tracked values through QuantizeLinear -> DequantizeLinear (ai.onnx), checked element by element
against onnxruntime: a value inference keeps must equal what onnxruntime computes bit for bit,
an integer wrapped in a per-tensor QDQ pair (a Range delta in QDQ models) keeps its value, and a
value that rounding changes is kept exactly as onnxruntime computes it (or not at all)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from support.op_oracle import IR_VERSION

import shapeinfer
from testkit import ort_oracle

F, I8, U8, I16, I64 = TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.INT64

# (x values, scale, zero point, zero point type): each becomes one Q -> DQ -> Cast(int64) chain.
XS = np.array([0, 1, 2, 3, 7, -1, -2, 64, -64, 127, 200, -300, 1000], np.float32)
CHAINS = [
    (XS, 1 / 255, -128, I8),  # the scale and zero point of llama_dynamo.qdq's Range delta
    (XS, 1 / 255, 0, U8),
    (XS, 1.0, 0, I8),  # saturation at both ends
    (XS, 0.5, 3, U8),
    (XS, 1 / 3, 0, I16),
    (XS, 0.1, -7, I8),
    (np.array([0.3, 1.3, 2.71, -0.45, 5.5, 0.049, 1e-3, 9.9], np.float32), 0.1, 2, I8),  # rounding changes x
    (np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.5], np.float32), 1.0, 0, I8),  # exact ties: half to even
    (np.array([0.35, 0.45, 0.25, 0.15], np.float32), 0.1, 0, U8),  # near ties
]


def _chain_model() -> onnx.ModelProto:
    nodes, inits, outs = [], [], []
    for k, (x, s, zp, zt) in enumerate(CHAINS):
        inits += [
            numpy_helper.from_array(np.asarray(x, np.float32), f"x{k}"),
            numpy_helper.from_array(np.array(s, np.float32), f"s{k}"),
            numpy_helper.from_array(np.array(zp, helper.tensor_dtype_to_np_dtype(zt)), f"z{k}"),
        ]
        nodes += [
            helper.make_node("QuantizeLinear", [f"x{k}", f"s{k}", f"z{k}"], [f"q{k}"]),
            helper.make_node("DequantizeLinear", [f"q{k}", f"s{k}", f"z{k}"], [f"d{k}"]),
            helper.make_node("Cast", [f"d{k}"], [f"c{k}"], to=I64),
        ]
        outs += [f"q{k}", f"d{k}", f"c{k}"]
    graph = helper.make_graph(nodes, "qdq", [], [helper.make_empty_tensor_value_info(o) for o in outs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def test_qdq_values_match_onnxruntime_exactly() -> None:
    model = _chain_model()
    want = dict(zip([o.name for o in model.graph.output], ort_oracle.run(model, {})))
    facts = shapeinfer.infer(model).facts
    for k in range(len(CHAINS)):
        for name in (f"q{k}", f"d{k}", f"c{k}"):
            got, w = facts[name].value, want[name]
            if got is None:
                continue
            # bit-for-bit: floats compared as float32 arrays, ints as ints
            assert np.array_equal(np.array(got, w.dtype), w.reshape(-1)), (name, got, w.tolist())
            assert facts[name].dtype == helper.np_dtype_to_tensor_dtype(w.dtype), name
    # Integers through a per-tensor QDQ pair are tracked, exact ties included.
    for k in (0, 1, 2, 3, 4, 5, 6, 7):
        for name in (f"q{k}", f"d{k}", f"c{k}"):
            assert facts[name].value is not None, name
    # The llama Range delta: 1 -> Q -> DQ -> CastLike stays 1.
    assert facts["c0"].value[1] == 1 == want["c0"][1]


def test_qdq_range_delta_keeps_range_length() -> None:
    """Range(0, n, DQ(Q(1.0))) has length n, as in QDQ-quantized dynamo exports."""
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "start"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(1 / 255, np.float32), "s"),
        numpy_helper.from_array(np.array(-128, np.int8), "z"),
    ]
    nodes = [
        helper.make_node("Shape", ["x"], ["shp"], start=1, end=2),
        helper.make_node("Squeeze", ["shp"], ["n"]),
        helper.make_node("QuantizeLinear", ["one", "s", "z"], ["q"]),
        helper.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"]),
        helper.make_node("CastLike", ["dq", "n"], ["delta"]),
        helper.make_node("Range", ["start", "n", "delta"], ["r"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["batch", "seq"])],
        [helper.make_empty_tensor_value_info("r")],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)], ir_version=IR_VERSION)
    r = shapeinfer.infer(model)
    assert r.dims("r") == (r.facts["shp"].value[0],)
    for seq in (7, 11):
        got = ort_oracle.run(model, {"x": np.zeros((2, seq), np.float32)})[0]
        assert got.shape == (seq,)


def test_per_axis_unknown_scale_or_other_precision_leave_values_unknown() -> None:
    inits = [
        numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "x"),
        numpy_helper.from_array(np.array([0.5, 0.25], np.float32), "s"),
        numpy_helper.from_array(np.array([0, 0], np.int8), "z"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=0),
        helper.make_node("QuantizeLinear", ["x", "t", "z1"], ["q1"]),
        helper.make_node("QuantizeLinear", ["x", "s1", "z1"], ["q2"], precision=TensorProto.FLOAT16),
    ]
    inits.append(numpy_helper.from_array(np.array(0.5, np.float32), "s1"))
    inits.append(numpy_helper.from_array(np.array(0, np.int8), "z1"))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("t", F, [])],
        [helper.make_empty_tensor_value_info(o) for o in ("q", "q1", "q2")],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)], ir_version=IR_VERSION)
    facts = shapeinfer.infer(model).facts
    assert facts["q2"].value is None and facts["q2"].dtype == I8
    assert facts["q"].value is None and facts["q"].shape == (2,)
    assert facts["q1"].value is None and facts["q1"].dtype == I8
