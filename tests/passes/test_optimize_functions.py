"""optimize in model-local function bodies: only the passes that read no shapes (dedupe, dce),
checked with onnxruntime on a function called at two different shapes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.passes import optimize_with_report
from testkit import ort_oracle

ort = pytest.importorskip("onnxruntime")

BINDINGS = [{"batch": 2, "seq": 7}, {"batch": 3, "seq": 11}]


def ref(name: str, kind: int) -> onnx.AttributeProto:
    """An attribute ``name`` referring to the function's attribute of the same name."""
    a = onnx.AttributeProto()
    a.name = a.ref_attr_name = name
    a.type = kind
    return a


def body() -> onnx.FunctionProto:
    """``Twice(x; axis, scale)``: two equal Relus (one merges), a dead Neg, a Softmax over
    ``@axis`` and one over the last axis (different nodes: never merged), a Shape/Reshape pair
    that depends on the caller's shape (left as it is), ``2 * 2`` from two Constant nodes (folds)
    and ``@scale * 2`` (a Constant reading the caller's attribute: never folded)."""
    nodes = [
        h.make_node("Constant", [], ["two"], value=onnx.numpy_helper.from_array(np.array([2.0], np.float32))),
        h.make_node("Mul", ["two", "two"], ["four"]),
        h.make_node("Constant", [], ["scale"]),
        h.make_node("Mul", ["scale", "two"], ["scale2"]),
        h.make_node("Mul", ["x", "four"], ["x4"]),
        h.make_node("Mul", ["x4", "scale2"], ["xs"]),
        h.make_node("Relu", ["x"], ["a"]),
        h.make_node("Relu", ["x"], ["b"]),
        h.make_node("Add", ["a", "b"], ["c"]),
        h.make_node("Neg", ["x"], ["dead"]),
        h.make_node("Softmax", ["c"], ["s_ref"]),
        h.make_node("Softmax", ["c"], ["s_last"], axis=-1),
        h.make_node("Add", ["s_ref", "s_last"], ["s0"]),
        h.make_node("Add", ["s0", "xs"], ["s"]),
        h.make_node("Shape", ["x"], ["shape"]),
        h.make_node("Flatten", ["s"], ["flat"], axis=0),
        h.make_node("Reshape", ["flat", "shape"], ["y"]),
    ]
    nodes[2].attribute.append(ref("value_float", onnx.AttributeProto.FLOAT))
    nodes[2].attribute[0].ref_attr_name = "scale"
    nodes[10].attribute.append(ref("axis", onnx.AttributeProto.INT))
    return h.make_function("local", "Twice", ["x"], ["y"], nodes, [h.make_opsetid("", 17)], ["axis", "scale"])


def model() -> onnx.ModelProto:
    calls = [
        h.make_node("Twice", ["x1"], ["y1"], domain="local", axis=0, scale=0.5),
        h.make_node("Twice", ["x2"], ["y2"], domain="local", axis=1, scale=3.0),
    ]
    ins = [
        h.make_tensor_value_info("x1", T.FLOAT, ["batch", 4]),
        h.make_tensor_value_info("x2", T.FLOAT, [3, "seq", 5]),
    ]
    outs = [
        h.make_tensor_value_info("y1", T.FLOAT, ["o0", "o1"]),
        h.make_tensor_value_info("y2", T.FLOAT, ["p0", "p1", "p2"]),
    ]
    m = h.make_model(
        h.make_graph(calls, "g", ins, outs),
        opset_imports=[h.make_opsetid("", 17), h.make_opsetid("local", 1)],
        functions=[body()],
        ir_version=8,
    )
    onnx.checker.check_model(m, full_check=True)
    return m


def test_function_bodies_fold_merge_and_lose_dead_nodes_and_compute_the_same():
    m = model()
    out, report = optimize_with_report(m)
    onnx.checker.check_model(out, full_check=True)
    ops = [n.op_type for n in out.functions[0].node]
    # one Relu merged, the Neg gone, 2 * 2 a Constant; both Softmaxes (one reads @axis), the
    # shape pair and @scale * 2 stay
    kept = ["Relu", "Add", "Softmax", "Softmax", "Add", "Add", "Shape", "Flatten", "Reshape"]
    kept += ["Constant", "Constant", "Mul", "Constant", "Mul", "Mul"]
    assert sorted(ops) == sorted(kept)
    softmax = [n for n in out.functions[0].node if n.op_type == "Softmax"]
    assert sorted(a.ref_attr_name for n in softmax for a in n.attribute) == ["", "axis"]
    changes = {p.name: p.changes for p in report.passes}
    assert changes["dedupe-shapes"]["nodes merged in functions"] == 1
    assert changes["fold-constants"]["tensors evaluated in functions"] == 1
    assert changes["dce"]["nodes removed in functions"] == 1  # the Neg
    assert (report.function_nodes_before, report.function_nodes_after) == (len(m.functions[0].node), len(ops))
    assert [f.name for f in out.functions] == ["Twice"]
    assert list(out.functions[0].input) == ["x"] and list(out.functions[0].output) == ["y"]
    for binding in BINDINGS:
        ort_oracle.assert_same_outputs(m, out, ort_oracle.feeds(m, binding))
    again, report = optimize_with_report(out)
    assert not any(p.changed for p in report.passes)
    assert again.functions[0].SerializeToString() == out.functions[0].SerializeToString()


def test_equal_folded_values_in_a_body_are_stored_once_and_a_second_run_changes_nothing():
    two = onnx.numpy_helper.from_array(np.array([2.0], np.float32))
    nodes = [
        h.make_node("Constant", [], ["two"], value=two),
        h.make_node("Mul", ["two", "two"], ["fa"]),
        h.make_node("Add", ["two", "two"], ["fb"]),  # the same value: merged, the other constant dropped
        h.make_node("Mul", ["x", "fa"], ["xa"]),
        h.make_node("Mul", ["xa", "fb"], ["y"]),
    ]
    f = h.make_function("local", "F", ["x"], ["y"], nodes, [h.make_opsetid("", 17)])
    calls = [h.make_node("F", ["x"], ["y1"], domain="local"), h.make_node("F", ["z"], ["y2"], domain="local")]
    ins = [h.make_tensor_value_info("x", T.FLOAT, ["batch"]), h.make_tensor_value_info("z", T.FLOAT, [3, "seq"])]
    outs = [h.make_tensor_value_info("y1", T.FLOAT, ["batch"]), h.make_tensor_value_info("y2", T.FLOAT, [3, "seq"])]
    g = h.make_graph(calls, "g", ins, outs)
    opsets = [h.make_opsetid("", 17), h.make_opsetid("local", 1)]
    m = h.make_model(g, opset_imports=opsets, functions=[f], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    out, report = optimize_with_report(m)
    onnx.checker.check_model(out, full_check=True)
    assert sorted(n.op_type for n in out.functions[0].node) == ["Constant", "Mul", "Mul"]
    assert report.function_nodes_after == 3
    for binding in BINDINGS:
        ort_oracle.assert_same_outputs(m, out, ort_oracle.feeds(m, binding))
    again, report = optimize_with_report(out)
    assert not any(p.changed for p in report.passes)
    assert again.functions[0].SerializeToString() == out.functions[0].SerializeToString()
