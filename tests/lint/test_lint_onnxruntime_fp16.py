"""P202: onnxruntime (CPU, x86-64) crashes creating the session for a float16 MatMul of a
batch-moving Transpose and a constant of rank 1 or 2. Checked against onnxruntime in a child
process (testkit.runtime_probe: a crash is a refusal) on every rank-3 perm and the rank-4
neighbours, and against onnx's checker and OpenVINO, which load the model."""

from __future__ import annotations

import itertools
import platform

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T

from testkit.lint_models import fp16_transpose_matmul
from testkit.runtime_probe import available, lint_verdict, probe

x86 = pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"), reason="measured on x86-64 (no float16 MatMul kernel)"
)
needs_openvino = pytest.mark.skipif(not available("openvino"), reason="openvino is not installed")

#: (label, keyword arguments of fp16_transpose_matmul, onnxruntime crashes)
CASES = [
    (f"rank3-{''.join(map(str, p))}", {"perm": p}, p in ((1, 0, 2), (1, 2, 0)))
    for p in itertools.permutations(range(3))
]
CASES += [
    ("rank4-1203", {"perm": (1, 2, 0, 3)}, True),
    ("rank4-1230", {"perm": (1, 2, 3, 0)}, True),
    ("rank4-1023", {"perm": (1, 0, 2, 3)}, False),
    ("rank4-0213", {"perm": (0, 2, 1, 3)}, False),
    ("transpose-on-b", {"side": 1}, True),
    ("transpose-on-b-021", {"side": 1, "perm": (0, 2, 1)}, False),
    ("constant-node", {"weight_as": "constant"}, True),
    ("rank-1-weight", {"weight": (8,)}, True),
    ("rank-3-weight", {"weight": (1, 8, 4)}, False),
    ("weight-input", {"weight_as": "input"}, False),
    ("float32", {"dtype": T.FLOAT}, False),
    # what the Transpose reads: a tensor onnxruntime keeps in float16, or one it computes in float
    ("after-a-reshape", {"before": "Reshape"}, True),
    ("after-a-relu", {"before": "Relu"}, False),
    # what reads the MatMul: another fusion first (MatMulScaleFusion; MatMulAddFusion to Gemm
    # when every dim is static) leaves nothing to crash on
    ("then-add", {"after": "Add"}, True),
    ("then-add-static", {"after": "Add", "static": True}, False),
    ("static", {"static": True}, True),
    ("then-mul-scale", {"after": "Mul"}, False),
]
IDS = [c[0] for c in CASES]


def _errors(path: str, target: str) -> set[str]:
    return {f.code for f in lint_verdict(path, target)}


@pytest.mark.parametrize(("label", "kw", "crashes"), CASES, ids=IDS)
def test_p202_reports_exactly_the_crashing_pattern(tmp_path, label, kw, crashes):
    p = str(tmp_path / "m.onnx")
    onnx.save(fp16_transpose_matmul(**kw), p)
    assert ("P202" in _errors(p, "onnxruntime")) == crashes
    for target in ("onnx", "openvino"):
        assert "P202" not in _errors(p, target)


@x86
@pytest.mark.parametrize(("label", "kw", "crashes"), CASES, ids=IDS)
def test_onnxruntime_crashes_exactly_where_p202_reports(tmp_path, label, kw, crashes):
    p = str(tmp_path / "m.onnx")
    onnx.save(fp16_transpose_matmul(**kw), p)
    refused = probe("onnxruntime", p)
    assert (refused is not None) == crashes, refused
    if crashes:
        assert refused.startswith("crashed"), refused


def test_onnx_checker_loads_the_crashing_model(tmp_path):
    p = str(tmp_path / "m.onnx")
    onnx.save(fp16_transpose_matmul(), p)
    assert probe("onnx", p) is None


@needs_openvino
def test_openvino_loads_the_crashing_model(tmp_path):
    p = str(tmp_path / "m.onnx")
    onnx.save(fp16_transpose_matmul(), p)
    assert probe("openvino", p) is None


def test_a_leading_one_on_the_constant_computes_the_same(tmp_path):
    """The doc's remedy: the weight [1, 8, 4] gives the product of the [8, 4] one (the original
    run with the optimizations that do not crash)."""
    import onnxruntime as ort

    x = np.random.default_rng(1).random((3, 5, 8)).astype(np.float16)
    outs = []
    for weight in ((8, 4), (1, 8, 4)):
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        m = fp16_transpose_matmul(weight=weight)
        s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        outs.append(s.run(None, {"x": x})[0])
    assert outs[0].shape == outs[1].shape == (5, 3, 4)
    np.testing.assert_array_equal(outs[0], outs[1])
