"""Attributes against the op's schema (shapeinfer/lint/rules/attributes.py): G017 an attribute the
op does not define at the opset in force, E007 one of another type, E030 a required one missing.

Each fixture is checked against the runtimes in the test itself: ``onnx.checker.check_model(
full_check=True)`` and onnxruntime's ``InferenceSession`` (CPU). Under a target whose runtime
refuses the fixture lint reports an error; under one whose runtime loads it, no error. Each
fixture has a neighbour, the same model with the attribute right, that both runtimes load and
lint passes."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from shapeinfer.lint import lint_model

ort = pytest.importorskip("onnxruntime")

MS = ("com.microsoft", 1)
ML = ("ai.onnx.ml", 3)


def _model(op, attrs, opset=18, domain="", extra=(), x=(2, 3), n_out=1, out_rank=2):
    node = h.make_node(op, ["x"], [f"y{i}" for i in range(n_out)], name="n", domain=domain, **attrs)
    outs = [h.make_tensor_value_info(f"y{i}", T.FLOAT, [None] * out_rank) for i in range(n_out)]
    if op == "LinearClassifier":
        outs[0] = h.make_tensor_value_info("y0", T.INT64, [None])
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, list(x))], outs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset), *(h.make_opsetid(d, v) for d, v in extra)])
    m.ir_version = 9
    return m


LINCLF = {"classlabels_ints": [0, 1], "intercepts": [0.0, 0.0]}

#: (id, code, model, neighbour the runtimes load): each model differs from its neighbour in one attribute
CASES = [
    (
        "reducemean-18-axes-attribute",
        "G017",
        _model("ReduceMean", {"axes": [1]}),
        _model("ReduceMean", {}),
    ),
    ("relu-unknown-attribute", "G017", _model("Relu", {"foo": 1}), _model("Relu", {})),
    (
        "ml-unknown-attribute",
        "G017",
        _model("LinearRegressor", {"coefficients": [1.0] * 3, "foo": 2}, domain="ai.onnx.ml", extra=[ML]),
        _model("LinearRegressor", {"coefficients": [1.0] * 3}, domain="ai.onnx.ml", extra=[ML]),
    ),
    ("leakyrelu-alpha-int", "E007", _model("LeakyRelu", {"alpha": 1}), _model("LeakyRelu", {"alpha": 1.0})),
    ("softmax-axis-float", "E007", _model("Softmax", {"axis": 1.0}), _model("Softmax", {"axis": 1})),
    (
        "ml-threshold-int",
        "E007",
        _model("Binarizer", {"threshold": 1}, domain="ai.onnx.ml", extra=[ML]),
        _model("Binarizer", {"threshold": 1.0}, domain="ai.onnx.ml", extra=[ML]),
    ),
    (
        "contrib-alpha-int",
        "E007",
        _model("QuickGelu", {"alpha": 1}, domain="com.microsoft", extra=[MS]),
        _model("QuickGelu", {"alpha": 1.0}, domain="com.microsoft", extra=[MS]),
    ),
    ("cast-without-to", "E030", _model("Cast", {}), _model("Cast", {"to": T.FLOAT})),
    (
        "lrn-without-size",
        "E030",
        _model("LRN", {}, x=(1, 2, 3, 3), out_rank=4),
        _model("LRN", {"size": 3}, x=(1, 2, 3, 3), out_rank=4),
    ),
    (
        "ml-without-coefficients",
        "E030",
        _model("LinearClassifier", LINCLF, domain="ai.onnx.ml", extra=[ML], n_out=2),
        _model("LinearClassifier", {**LINCLF, "coefficients": [1.0] * 6}, domain="ai.onnx.ml", extra=[ML], n_out=2),
    ),
]


def _checker_refuses(m: onnx.ModelProto) -> str | None:
    try:
        onnx.checker.check_model(m, full_check=True)
    except onnx.checker.ValidationError as e:
        return str(e)
    return None


def _onnxruntime_refuses(m: onnx.ModelProto) -> str | None:
    so = ort.SessionOptions()
    so.log_severity_level = 4
    try:
        ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    except Exception as e:
        return str(e)
    return None


REFUSES = {"onnx": _checker_refuses, "onnxruntime": _onnxruntime_refuses}


def _errors(m: onnx.ModelProto, target: str, code: str) -> list:
    return [f for f in lint_model(m, "m.onnx", target=target) if f.code == code and f.severity == "error"]


@pytest.mark.parametrize(("case", "code", "model", "neighbour"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("target", ["onnx", "onnxruntime"])
def test_lint_errs_exactly_where_the_runtime_refuses(case, code, model, neighbour, target):
    refused = REFUSES[target](model)
    found = _errors(model, target, code)
    if refused:
        assert found, f"{target} refuses ({refused.splitlines()[0][:120]}) but lint has no {code} error"
        assert found[0].node == "n"
    else:
        assert not found, [f.message for f in found]
    # the neighbour: both runtimes load it, lint has nothing to say about its attributes
    assert REFUSES[target](neighbour) is None
    assert not [f for f in lint_model(neighbour, "m.onnx", target=target) if f.code in ("G017", "E007", "E030")]


def test_the_motivating_case_is_refused_by_both_and_an_error_under_both():
    """ReduceMean-18 with the ``axes`` attribute (a quantization pipeline's output): both refuse
    it with "Unrecognized attribute: axes for operator ReduceMean"; lint errs under both targets."""
    m = CASES[0][2]
    assert "Unrecognized attribute: axes" in _checker_refuses(m)
    assert "Unrecognized attribute: axes" in _onnxruntime_refuses(m)
    for target in ("onnx", "onnxruntime"):
        (f,) = _errors(m, target, "G017")
        assert "'axes'" in f.message and "ReduceMean" in f.message


def test_the_same_attribute_at_opset_17_is_fine():
    m = _model("ReduceMean", {"axes": [1]}, opset=17)
    assert _checker_refuses(m) is None and _onnxruntime_refuses(m) is None
    assert not [f for f in lint_model(m, "m.onnx") if f.code == "G017"]


def test_internal_attribute_names_are_not_checked():
    m = _model("Relu", {"__private": 1})
    assert _checker_refuses(m) is None and _onnxruntime_refuses(m) is None
    assert not [f for f in lint_model(m, "m.onnx") if f.code == "G017"]


@pytest.mark.parametrize(("case", "code", "model", "neighbour"), CASES, ids=[c[0] for c in CASES])
def test_no_error_under_openvino_which_ignores_attributes_it_does_not_read(case, code, model, neighbour):
    """OpenVINO loads a node with an attribute it does not read: lint cannot tell which ones its
    converters read, so these are warnings under --target openvino (where it does read one, as
    Softmax's ``axis``, OpenVINO refuses the model: a miss rather than a false error)."""
    found = [f for f in lint_model(model, "m.onnx", target="openvino") if f.code == code]
    assert found and all(f.severity == "warning" for f in found)


def test_an_attribute_the_contrib_table_lacks_is_a_warning_everywhere():
    """onnxruntime refuses an attribute its contrib schema lacks, but the table is its documented
    schema of an older version, and later versions add attributes without a new opset version:
    lint warns under every target rather than err on a model a newer onnxruntime loads."""
    m = _model("FastGelu", {"foo": 1}, domain="com.microsoft", extra=[MS])
    assert _checker_refuses(m) is None
    assert "Unrecognized attribute: foo" in _onnxruntime_refuses(m)
    for target in ("onnx", "onnxruntime", "openvino"):
        (f,) = [f for f in lint_model(m, "m.onnx", target=target) if f.code == "G017"]
        assert f.severity == "warning" and "'foo'" in f.message and "ContribOperators.md, version" in f.message
    neighbour = _model("FastGelu", {}, domain="com.microsoft", extra=[MS])
    assert _onnxruntime_refuses(neighbour) is None
    assert not [f for f in lint_model(neighbour, "m.onnx", target="onnxruntime") if f.code == "G017"]


def test_an_attribute_onnxruntime_added_after_the_table_is_no_error():
    """MatMulNBits' ``weight_prepacked`` came after the contrib table's document (onnxruntime
    1.24): onnxruntime 1.32 loads the node; lint must not err under --target onnxruntime."""
    import numpy as np
    from onnx import numpy_helper

    k, n, block = 16, 4, 16
    b = numpy_helper.from_array(np.zeros((n, k // block, block // 2), np.uint8), "b")
    scales = numpy_helper.from_array(np.ones((n * (k // block),), np.float32), "s")
    node = h.make_node(
        "MatMulNBits",
        ["a", "b", "s"],
        ["y"],
        domain="com.microsoft",
        K=k,
        N=n,
        bits=4,
        block_size=block,
        weight_prepacked=0,
    )
    a, y = h.make_tensor_value_info("a", T.FLOAT, [2, k]), h.make_tensor_value_info("y", T.FLOAT, [2, n])
    g = h.make_graph([node], "g", [a], [y], [b, scales])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid(*MS)])
    m.ir_version = 8
    assert _onnxruntime_refuses(m) is None
    assert not [f for f in lint_model(m, "m.onnx", target="onnxruntime") if f.severity == "error"]
