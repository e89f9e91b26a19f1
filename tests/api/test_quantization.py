"""onnxruntime's static quantization (QDQ) of a torch.export model, with shapeinfer's shapes
in place of onnxruntime's symbolic shape inference (issue 26), through the example
examples/quantize_qdq.py as a user runs it.

onnxruntime is the oracle twice: its own ``quant_pre_process`` fails on the model, and the
quantized model it runs agrees with the float model it runs within int8 tolerance.
"""

from __future__ import annotations

import json
import subprocess
import sys

import onnx
import pytest
from support.common import ROOT, model_path

pytest.importorskip("onnxruntime.quantization", reason="onnxruntime (with its quantization tools) is in the test extra")

from onnxruntime.quantization.shape_inference import quant_pre_process

MODEL = "llama_dynamo"  # torch.export (dynamo) model with [batch, seq] inputs


def test_onnxruntime_own_pre_processing_fails_on_the_model(tmp_path):
    """The case: quant_pre_process with onnxruntime's symbolic shape inference crashes on a
    torch.export model (AttributeError 'HasField' in onnxruntime 1.32)."""
    with pytest.raises(Exception):  # noqa: B017  (any failure: the tool's crash is not an API contract)
        quant_pre_process(str(model_path(MODEL)), str(tmp_path / "pre.onnx"), skip_symbolic_shape=False)


def test_quantize_static_qdq_after_shapeinfer(tmp_path):
    """shapeinfer's shapes, quant_pre_process(skip_symbolic_shape=True), quantize_static QDQ:
    the quantized model runs and matches the float model on unseen inputs; the pre-processed
    model keeps a named shape for every tensor (no unk__ dim) and the dims shapeinfer wrote."""
    code = (
        "import json, sys; sys.path.insert(0, 'examples'); import quantize_qdq; "
        f"print(json.dumps(quantize_qdq.quantize({str(model_path(MODEL))!r}, {str(tmp_path)!r}, "
        "{'batch': 2, 'seq': 16})))"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    figures = json.loads(r.stdout.strip().splitlines()[-1])
    assert figures["quantize_linear"] > 50 and figures["dequantize_linear"] >= figures["quantize_linear"]
    # int8 per-tensor QDQ with random calibration: close, not equal
    assert figures["relative_error"] < 0.15 and figures["correlation"] > 0.99, figures
    assert figures["unk_dims"] == 0
    q = onnx.load(str(tmp_path / "model.qdq.onnx"))
    assert {n.op_type for n in q.graph.node} >= {"QuantizeLinear", "DequantizeLinear", "MatMul"}
    shapes = {v.name: v.type.tensor_type.shape for v in onnx.load(str(tmp_path / "shapes.onnx")).graph.value_info}
    pre = {v.name: v.type.tensor_type.shape for v in onnx.load(str(tmp_path / "pre.onnx")).graph.value_info}
    assert len(pre) >= 0.9 * len(shapes)
    kept = [n for n in pre if n in shapes]
    assert kept and all(pre[n] == shapes[n] for n in kept)


def test_example_script_runs(tmp_path):
    r = subprocess.run(
        [sys.executable, "examples/quantize_qdq.py", str(model_path("vit_dynamo")), str(tmp_path), "--bind", "batch=2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "QuantizeLinear" in r.stdout and (tmp_path / "model.qdq.onnx").exists()
