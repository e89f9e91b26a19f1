"""Issue 35's examples of models nobody here wrote, each checked against the runtime that
judges it. (ReduceMean-18 carrying the ``axes`` attribute: tests/lint/test_lint_attributes.py.)"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from testkit.runtime_probe import available, lint_verdict, probe


def _saved(tmp_path, m: onnx.ModelProto) -> str:
    p = str(tmp_path / "m.onnx")
    onnx.save(m, p)
    return p


def _expand_fp16_declared_float() -> onnx.ModelProto:
    """What onnxconverter-common's ``convert_float_to_float16`` left in a torch.export model: an
    Expand of a float16 tensor (so float16) whose ``value_info`` still says float."""
    shape = numpy_helper.from_array(np.array([2, 3], np.int64), "shape")
    g = h.make_graph(
        [h.make_node("Expand", ["x", "shape"], ["e"]), h.make_node("Relu", ["e"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT16, [1, 3])],
        [h.make_tensor_value_info("y", T.FLOAT16, [2, 3])],
        [shape],
        value_info=[h.make_tensor_value_info("e", T.FLOAT, [2, 3])],
    )
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_a_float16_expand_declared_float_is_an_error_where_the_runtime_refuses(tmp_path, target):
    """onnxruntime refuses to load it ("Type (tensor(float16)) of output arg ... does not match
    expected type (tensor(float))"); under --target onnx lint agrees with onnx's checker."""
    if not available(target):
        pytest.skip(f"{target} is not installed")
    p = _saved(tmp_path, _expand_fp16_declared_float())
    refused = probe(target, p)
    if target == "onnxruntime":
        assert refused is not None and "Type Error" in refused, refused  # the message is cut short
    errors = lint_verdict(p, target)
    assert bool(errors) == (refused is not None), ([f.code for f in errors], refused)
    if refused:
        assert "G006" in {f.code for f in errors}


def _constant_declared_scalar(contrib: bool) -> onnx.ModelProto:
    """onnxruntime-genai's Whisper encoder: a Constant ``[-1, 6, 4]`` (a Reshape target) whose
    ``value_info`` declares a scalar, after a com.microsoft node (``contrib``) or not."""
    c = numpy_helper.from_array(np.array([-1, 6, 4], np.int64), "v")
    nodes = [h.make_node("Constant", [], ["c"], value=c), h.make_node("Reshape", ["x", "c"], ["y"])]
    opsets = [h.make_opsetid("", 17)]
    first = "x"
    if contrib:
        first = "x0"
        nodes.insert(0, h.make_node("FastGelu", ["x0"], ["x"], domain="com.microsoft"))
        opsets.append(h.make_opsetid("com.microsoft", 1))
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info(first, T.FLOAT, ["n", 24])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n", 6, 4])],
        value_info=[h.make_tensor_value_info("c", T.INT64, [])],
    )
    return h.make_model(g, opset_imports=opsets, ir_version=8)


@pytest.mark.parametrize("contrib", [True, False], ids=["after-a-contrib-op", "default-domain-only"])
def test_a_constant_declared_a_scalar_is_an_error_only_where_the_checker_refuses(tmp_path, contrib):
    """The checker's strict inference does not reach the Constant past a com.microsoft node and
    accepts the Whisper encoder: no error under --target onnx there (it was a false G006 error);
    without the contrib node it refuses the model, and lint errs. onnxruntime loads both."""
    p = _saved(tmp_path, _constant_declared_scalar(contrib))
    refused = probe("onnx", p)
    assert (refused is None) == contrib, refused
    errors = {f.code for f in lint_verdict(p, "onnx")}
    assert ("G006" in errors) == (not contrib)
    assert bool(errors) == (refused is not None)
    if available("onnxruntime"):
        assert probe("onnxruntime", p) is None
        assert not lint_verdict(p, "onnxruntime")
