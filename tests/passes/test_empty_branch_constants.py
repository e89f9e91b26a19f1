"""empty-branch-constants: an If branch returning a constant of no elements against a rank-4
branch (optimum's merged seq2seq decoders) is refused by OpenVINO (P008); the pass computes the
constant with ConstantOfShape, which OpenVINO compiles, and the model computes the same in
onnxruntime on both branches at several sizes (1, odd, batch != length)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.cli.main import main
from shapeinfer.passes import DEFAULT_PASSES, optimize_with_report
from testkit.runtime_probe import available, lint_verdict, probe

ort = pytest.importorskip("onnxruntime")


def _merged(empty: str = "node", both_empty: bool = False, dtype: int = T.FLOAT) -> onnx.ModelProto:
    """past = If(use_cache) then <a constant [0, 4, 1, 8]> else Relu(x) (x: [b, 4, s, 8]);
    y = Relu(x). ``empty``: the constant as a Constant node in the branch ("node"), an
    initializer of the branch ("branch") or of the main graph ("outer")."""
    np_type = h.tensor_dtype_to_np_dtype(dtype)
    zero = onnx.numpy_helper.from_array(np.zeros((0, 4, 1, 8), np_type), "empty_past")
    then_nodes, then_inits = [], []
    if empty == "node":
        then_nodes.append(h.make_node("Constant", [], ["empty_past"], value=zero))
    elif empty == "branch":
        then_inits.append(zero)
    then = h.make_graph(then_nodes, "then", [], [h.make_tensor_value_info("empty_past", dtype, None)], then_inits)
    if both_empty:
        other = h.make_graph(
            [
                h.make_node(
                    "Constant", [], ["past_else"], value=onnx.numpy_helper.from_array(np.zeros((0, 4, 1, 8), np_type))
                )
            ],
            "else",
            [],
            [h.make_tensor_value_info("past_else", dtype, None)],
        )
    else:
        other = h.make_graph(
            [h.make_node("Relu", ["x"], ["past_else"])],
            "else",
            [],
            [h.make_tensor_value_info("past_else", dtype, None)],
        )
    g = h.make_graph(
        [
            h.make_node("If", ["use_cache"], ["past"], then_branch=then, else_branch=other),
            h.make_node("Relu", ["x"], ["y"]),
        ],
        "g",
        [h.make_tensor_value_info("use_cache", T.BOOL, [1]), h.make_tensor_value_info("x", dtype, ["b", 4, "s", 8])],
        [h.make_tensor_value_info("past", dtype, None), h.make_tensor_value_info("y", dtype, ["b", 4, "s", 8])],
        [zero] if empty == "outer" else [],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _same_outputs(a_path: str, b_path: str, dtype=np.float32) -> None:
    a, b = ort.InferenceSession(a_path), ort.InferenceSession(b_path)
    rng = np.random.default_rng(0)
    for cache in (True, False):
        for bs, s in ((1, 1), (3, 5), (2, 7)):
            feeds = {"use_cache": np.array([cache]), "x": rng.standard_normal((bs, 4, s, 8)).astype(dtype)}
            for x, y in zip(a.run(None, feeds), b.run(None, feeds)):
                assert x.shape == y.shape and x.dtype == y.dtype
                np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("empty", ["node", "branch"])
def test_the_constant_is_computed_and_the_model_computes_the_same(tmp_path, empty):
    p, q = tmp_path / "m.onnx", tmp_path / "fixed.onnx"
    m = _merged(empty)
    onnx.save(m, str(p))
    out, _ = optimize_with_report(m, passes=["empty-branch-constants"])
    onnx.save(out, str(q))
    onnx.checker.check_model(str(q), full_check=True)
    then = next(a.g for a in out.graph.node[0].attribute if a.name == "then_branch")
    assert [n.op_type for n in then.node] == ["Constant", "ConstantOfShape"]
    _same_outputs(str(p), str(q))
    if available("openvino"):
        assert probe("openvino", str(p)) is not None  # the original: the If's rank is dynamic
        assert probe("openvino", str(q)) is None, probe("openvino", str(q))


def test_an_outer_initializer_returned_by_a_branch(tmp_path):
    # onnxruntime refuses the original (an outer-scope value returned directly): the fixed
    # model runs, and gives the constant's value and the other branch's
    q = tmp_path / "fixed.onnx"
    out, _ = optimize_with_report(_merged("outer"), passes=["empty-branch-constants"])
    onnx.save(out, str(q))
    onnx.checker.check_model(str(q), full_check=True)
    s = ort.InferenceSession(str(q))
    x = np.arange(2 * 4 * 3 * 8, dtype=np.float32).reshape(2, 4, 3, 8) - 50
    past, _ = s.run(None, {"use_cache": np.array([True]), "x": x})
    assert past.shape == (0, 4, 1, 8) and past.dtype == np.float32
    past, _ = s.run(None, {"use_cache": np.array([False]), "x": x})
    np.testing.assert_array_equal(past, np.maximum(x, 0))
    if available("openvino"):
        assert probe("openvino", str(q)) is None, probe("openvino", str(q))


@pytest.mark.parametrize("dtype", [T.INT64, T.FLOAT16, T.BOOL])
def test_other_element_types(tmp_path, dtype):
    p, q = tmp_path / "m.onnx", tmp_path / "fixed.onnx"
    m = _merged("node", dtype=dtype)
    m.graph.node[1].op_type = "Identity"  # (Relu takes no bool)
    next(a.g for a in m.graph.node[0].attribute if a.name == "else_branch").node[0].op_type = "Identity"
    onnx.save(m, str(p))
    out, _ = optimize_with_report(m, passes=["empty-branch-constants"])
    onnx.save(out, str(q))
    then = next(a.g for a in out.graph.node[0].attribute if a.name == "then_branch")
    assert [n.op_type for n in then.node] == ["Constant", "ConstantOfShape"]
    _same_outputs(str(p), str(q), h.tensor_dtype_to_np_dtype(dtype))


def test_the_report_names_the_pass(tmp_path):
    p, q = tmp_path / "m.onnx", tmp_path / "o.onnx"
    onnx.save(_merged("node"), str(p))
    r = CliRunner().invoke(main, ["optimize", str(p), "--passes", "empty-branch-constants", "-o", str(q)])
    assert r.exit_code == 0, r.output
    assert "empty-branch-constants" in r.output and "1 constants computed" in r.output, r.output


def test_nothing_changes_where_openvino_sees_one_rank():
    for m in (_merged("node", both_empty=True),):
        out, _ = optimize_with_report(m, passes=["empty-branch-constants"])
        assert out.SerializeToString() == optimize_with_report(m, passes=["dce"])[0].SerializeToString()
    assert "empty-branch-constants" not in DEFAULT_PASSES


def test_lint_fix_for_openvino(tmp_path):
    p = tmp_path / "m.onnx"
    onnx.save(_merged("node"), str(p))
    assert "P008" in {f.code for f in lint_verdict(str(p), "openvino")}
    r = CliRunner().invoke(main, ["lint", str(p), "--target", "openvino", "--fix"])
    fixed = tmp_path / "m.fixed.onnx"
    assert fixed.exists(), r.output
    assert "P008" not in {f.code for f in lint_verdict(str(fixed), "openvino")}
    _same_outputs(str(p), str(fixed))
    if available("openvino"):
        assert probe("openvino", str(fixed)) is None
