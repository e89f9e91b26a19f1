"""fold-shapes: static shape arithmetic becomes initializers; symbolic or large values stay nodes."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.pass_helpers import model_of, vo

from shapeinfer.passes import PassContext, run_pass


def fold(model: onnx.ModelProto, cap: int | None = None) -> tuple[onnx.ModelProto, dict]:
    ctx = PassContext() if cap is None else PassContext(fold_cap=cap)
    out, changes = run_pass("fold-shapes", model, ctx)
    out, _ = run_pass("dce", out, ctx)
    onnx.checker.check_model(out, full_check=True)
    return out, changes


def init_value(model: onnx.ModelProto, name: str) -> np.ndarray | None:
    for t in model.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    return None


def test_static_shape_chain_folds_to_an_initializer_of_the_same_name():
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "i2"], ["g"], axis=0),
        h.make_node("Unsqueeze", ["g", "ax"], ["u"]),
        h.make_node("Concat", ["m1", "u"], ["t"], axis=0),
        h.make_node("Reshape", ["x", "t"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(2, np.int64), "i2"),
        numpy_helper.from_array(np.array([0], np.int64), "ax"),
        numpy_helper.from_array(np.array([-1], np.int64), "m1"),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 5])
    m = model_of(nodes, [x], [vo("y", T.FLOAT, 2)], inits)
    out, changes = fold(m)
    assert [n.op_type for n in out.graph.node] == ["Reshape"]
    assert changes["tensors folded to initializers"] == 1
    # Concat of -1 and dim 2 of x (5): the Reshape reads the folded tensor under its old name.
    np.testing.assert_array_equal(init_value(out, "t"), [-1, 5])
    assert list(out.graph.node[0].input) == ["x", "t"]


def test_symbolic_values_and_graph_outputs_stay():
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),  # [batch, 3]: symbolic, stays
        h.make_node("Gather", ["s", "i1"], ["three"], axis=0),  # static 3 but a graph output
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, ["batch", 3])
    outs = [vo("s", T.INT64, 1), h.make_tensor_value_info("three", T.INT64, [])]
    m = model_of(nodes, [x], outs, [numpy_helper.from_array(np.array(1, np.int64), "i1")])
    out, changes = run_pass("fold-shapes", m, PassContext())
    assert not any(changes.values())
    assert out.SerializeToString() == m.SerializeToString()


def test_big_constant_of_shape_stays_a_node_and_constants_become_initializers():
    nodes = [
        h.make_node("Constant", [], ["shape"], value=numpy_helper.from_array(np.array([64, 64], np.int64))),
        h.make_node("ConstantOfShape", ["shape"], ["zeros"]),
        h.make_node("Add", ["x", "zeros"], ["y"]),
    ]
    x = h.make_tensor_value_info("x", T.FLOAT, [64, 64])
    m = model_of(nodes, [x], [vo("y", T.FLOAT, 2)])
    out, changes = fold(m)
    # 4096 zeros are weights-sized: the node stays; the shape it reads became an initializer.
    assert [n.op_type for n in out.graph.node] == ["ConstantOfShape", "Add"]
    assert changes["Constant nodes made initializers"] == 1
    np.testing.assert_array_equal(init_value(out, "shape"), [64, 64])


def test_small_static_constant_of_shape_folds_and_the_cap_is_respected():
    nodes = [
        h.make_node("ConstantOfShape", ["shape"], ["ones"], value=numpy_helper.from_array(np.array([1], np.int64))),
        h.make_node("Mul", ["x", "ones"], ["y"]),
    ]
    x = h.make_tensor_value_info("x", T.INT64, [2, 3])
    inits = [numpy_helper.from_array(np.array([2, 3], np.int64), "shape")]
    m = model_of(nodes, [x], [vo("y", T.INT64, 2)], inits)
    out, _ = fold(m)
    assert [n.op_type for n in out.graph.node] == ["Mul"]
    np.testing.assert_array_equal(init_value(out, "ones"), np.ones((2, 3), np.int64))
    capped, changes = fold(m, cap=4)  # 6 elements > 4: stays a node
    assert [n.op_type for n in capped.graph.node] == ["ConstantOfShape", "Mul"]
    assert changes.get("tensors folded to initializers", 0) == 0


def test_a_reshape_target_of_zero_count_beside_a_symbol_stays_computed():
    """optimize --bind seq=1 of paddle's floordiv export folded the target [batch, seq//2, 32]
    of a [batch, 0, 16] input into Concat(Shape slice, [0], [32]): onnx's load-time inference
    reads the symbolic entry as -1 and the rest multiplies to 0, and onnxruntime refused the
    written model ("Invalid Target shape product of 0"), which its input loads and runs (fuzz
    seed 182, case 1189). Such a target's sources stay computed; the written model loads and
    gives the input's outputs."""
    import pytest

    ort = pytest.importorskip("onnxruntime")
    from support.common import ROOT

    import shapeinfer

    src = ROOT / "tests" / "models" / "exporters" / "paddle_floordiv_shape.onnx"
    out = shapeinfer.optimize(str(src), bind={"seq": 1})
    x = np.random.default_rng(0).standard_normal((2, 1, 16)).astype(np.float32)
    want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    got = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert [w.shape for w in want] == [g.shape for g in got] == [(2, 0, 32), (2, 0, 48)]
