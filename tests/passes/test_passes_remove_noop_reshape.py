"""remove-noop-reshape: provable no-ops go, reshape chains collapse, graph output names stay."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.pass_helpers import i64, model_of

from shapeinfer.passes import PassContext, run_pass
from testkit import ort_oracle

ort = pytest.importorskip("onnxruntime")


def noop(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict]:
    out, changes = run_pass("remove-noop-reshape", model, PassContext())
    out, _ = run_pass("dce", out, PassContext())
    onnx.checker.check_model(out, full_check=True)
    return out, changes


def same(a: onnx.ModelProto, b: onnx.ModelProto, shapes: list[dict]) -> None:
    rng = np.random.default_rng(0)
    for dims in shapes:
        ort_oracle.assert_same_outputs(a, b, {k: rng.standard_normal(v).astype(np.float32) for k, v in dims.items()})


def test_shape_preserving_nodes_are_removed():
    nodes = [
        h.make_node("Reshape", ["x", "same"], ["a"]),  # [batch, 4] -> [0, 4]: same dims
        h.make_node("Unsqueeze", ["a", "ax1"], ["b"]),
        h.make_node("Squeeze", ["b", "ax1"], ["c"]),  # an Unsqueeze/Squeeze pair
        h.make_node("Identity", ["c"], ["d"]),
        h.make_node("Cast", ["d"], ["e"], to=T.FLOAT),
        h.make_node("Expand", ["e", "ones"], ["f"]),
        h.make_node("Relu", ["f"], ["y"]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", 4])
    y = h.make_tensor_value_info("y", T.FLOAT, ["batch", 4])
    m = model_of(nodes, [x], [y], [i64("same", [0, 4]), i64("ax1", [1]), i64("ones", [1, 1])])
    out, changes = noop(m)
    assert [n.op_type for n in out.graph.node] == ["Relu"]
    assert list(out.graph.node[0].input) == ["x"]
    # Reshape, Identity, Cast and Expand are no-ops alone; Squeeze undoes Unsqueeze (a chain).
    assert changes["no-op nodes removed"] == 4
    assert changes["reshape chains collapsed"] == 1
    same(m, out, [{"x": (2, 4)}, {"x": (5, 4)}])


def test_noop_producing_a_graph_output_renames_its_input_to_it():
    nodes = [h.make_node("Relu", ["x"], ["r"]), h.make_node("Identity", ["r"], ["y"])]
    x = h.make_tensor_value_info("x", T.FLOAT, ["n"])
    m = model_of(nodes, [x], [h.make_tensor_value_info("y", T.FLOAT, ["n"])])
    out, _ = noop(m)
    assert [(n.op_type, list(n.output)) for n in out.graph.node] == [("Relu", ["y"])]
    assert [o.name for o in out.graph.output] == ["y"]
    same(m, out, [{"x": (3,)}])


def test_graph_input_to_graph_output_identity_stays():
    m = model_of(
        [h.make_node("Identity", ["x"], ["y"])],
        [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n"])],
    )
    out, changes = run_pass("remove-noop-reshape", m, PassContext())
    assert not any(changes.values())
    assert out.SerializeToString() == m.SerializeToString()


def test_reshape_chain_collapses_into_one_reshape_with_a_constant_target():
    nodes = [
        h.make_node("Reshape", ["x", "t1"], ["a"]),  # [batch, 6, 4] -> [batch, 24]
        h.make_node("Reshape", ["a", "t2"], ["b"]),  # -> [batch, 2, 12]: copies batch from a
        h.make_node("Relu", ["b"], ["y"]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", 6, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, ["batch", 2, 12])
    m = model_of(nodes, [x], [y], [i64("t1", [0, -1]), i64("t2", [0, 2, 12])])
    out, changes = noop(m)
    assert changes["reshape chains collapsed"] == 1
    assert [n.op_type for n in out.graph.node] == ["Reshape", "Relu"]
    r = out.graph.node[0]
    assert r.input[0] == "x"
    target = next(numpy_helper.to_array(t) for t in out.graph.initializer if t.name == r.input[1])
    np.testing.assert_array_equal(target, [0, 2, 12])  # batch is x's dim 0: copied
    same(m, out, [{"x": (2, 6, 4)}, {"x": (3, 6, 4)}])


def test_shape_changing_and_reordering_nodes_stay():
    nodes = [
        h.make_node("Reshape", ["x", "t"], ["a"]),  # [4, 4] -> [2, 8]
        h.make_node("Transpose", ["x"], ["b"], perm=[1, 0]),  # square, but not the identity
        h.make_node("Slice", ["b", "st", "en", "ax", "neg"], ["y"]),  # reverses axis 1: same dims
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, [4, 4])
    outs = [h.make_tensor_value_info("a", T.FLOAT, [2, 8]), h.make_tensor_value_info("y", T.FLOAT, [4, 4])]
    inits = [i64("t", [2, 8]), i64("st", [-1]), i64("en", [-(2**62)]), i64("ax", [1]), i64("neg", [-1])]
    m = model_of(nodes, [x], outs, inits)
    out, changes = run_pass("remove-noop-reshape", m, PassContext())
    assert not any(changes.values())
    assert out.SerializeToString() == m.SerializeToString()
