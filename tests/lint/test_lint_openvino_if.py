"""P007: OpenVINO refuses an If whose condition has rank 2 or more; onnx and onnxruntime run it.
``lint --fix --target openvino`` reshapes the condition to a scalar: the fixed model loads in
OpenVINO and computes what the original computes in onnxruntime, at every condition value."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.cli.main import main
from testkit.runtime_probe import available, lint_verdict, probe

needs_openvino = pytest.mark.skipif(not available("openvino"), reason="openvino is not installed")


def _if_model(cond_dims: list) -> onnx.ModelProto:
    """y = If(Equal(c, 1)) then Relu(x) else Neg(x), c of the given dims (int64)."""
    then = h.make_graph(
        [h.make_node("Relu", ["x"], ["a"])], "then", [], [h.make_tensor_value_info("a", T.FLOAT, ["n"])]
    )
    other = h.make_graph(
        [h.make_node("Neg", ["x"], ["b"])], "else", [], [h.make_tensor_value_info("b", T.FLOAT, ["n"])]
    )
    g = h.make_graph(
        [
            h.make_node("Equal", ["c", "one"], ["cond"]),
            h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other),
        ],
        "g",
        [h.make_tensor_value_info("c", T.INT64, cond_dims), h.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n"])],
        [h.make_tensor("one", T.INT64, [], [1])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("dims", [[], [1], [1, 1], [1, 1, 1]], ids=lambda d: f"rank{len(d)}")
def test_p007_only_where_the_rank_is_two_or_more(tmp_path, dims):
    p = tmp_path / "m.onnx"
    onnx.save(_if_model(dims), str(p))
    found = {f.code for f in lint_verdict(str(p), "openvino") if f.severity == "error"}
    assert ("P007" in found) == (len(dims) >= 2)
    for target in ("onnx", "onnxruntime"):
        assert "P007" not in {f.code for f in lint_verdict(str(p), target)}
    assert probe("onnxruntime", str(p)) is None and probe("onnx", str(p)) is None


@needs_openvino
@pytest.mark.parametrize("dims", [[1], [1, 1]], ids=lambda d: f"rank{len(d)}")
def test_openvino_refuses_exactly_what_p007_reports(tmp_path, dims):
    p = tmp_path / "m.onnx"
    onnx.save(_if_model(dims), str(p))
    refused = probe("openvino", str(p))
    assert (refused is not None) == (len(dims) >= 2), refused


def test_fix_reshapes_the_condition_and_computes_the_same(tmp_path):
    import onnxruntime as ort

    p = tmp_path / "m.onnx"
    onnx.save(_if_model([1, 1]), str(p))
    r = CliRunner().invoke(main, ["lint", str(p), "--target", "openvino", "--fix"])
    fixed = tmp_path / "m.fixed.onnx"
    assert fixed.exists(), r.output
    onnx.checker.check_model(str(fixed), full_check=True)
    assert "P007" not in {f.code for f in lint_verdict(str(fixed), "openvino")}
    a, b = ort.InferenceSession(str(p)), ort.InferenceSession(str(fixed))
    x = np.array([1.0, -2.0, 3.0], np.float32)
    for c in (1, 0, 7):
        feeds = {"c": np.full((1, 1), c, np.int64), "x": x}
        np.testing.assert_array_equal(a.run(None, feeds)[0], b.run(None, feeds)[0])
    if available("openvino"):
        assert probe("openvino", str(fixed)) is None


def test_optimize_leaves_the_condition_alone_unless_asked():
    from shapeinfer.passes import DEFAULT_PASSES, optimize_with_report

    m = _if_model([1, 1])
    assert "scalar-if-condition" not in DEFAULT_PASSES
    out, _ = optimize_with_report(m)
    assert not any(n.op_type == "Reshape" for n in out.graph.node)
    out, _ = optimize_with_report(m, passes=["scalar-if-condition"])
    assert [n.op_type for n in out.graph.node] == ["Equal", "Reshape", "If"]
