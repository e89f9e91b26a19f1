"""P009, P010, P011: com.microsoft nodes OpenVINO's frontend and CPU plugin refuse (attention, a
GatherBlockQuantized with computed operands)."""

from __future__ import annotations

import onnx
import pytest

from testkit.lint_models import attention, gather_block_quantized, group_query_attention
from testkit.runtime_probe import available, lint_verdict, probe

needs_openvino = pytest.mark.skipif(not available("openvino"), reason="openvino is not installed")


@pytest.mark.parametrize("softcap", [50.0, 0.0])
def test_p009_reports_a_softcap_under_openvino_only(tmp_path, softcap):
    p = tmp_path / "m.onnx"
    onnx.save(group_query_attention(softcap), str(p))
    errors = {f.code for f in lint_verdict(str(p), "openvino") if f.severity == "error"}
    assert ("P009" in errors) == bool(softcap)
    assert not {f.code for f in lint_verdict(str(p), "onnxruntime") if f.severity == "error"}
    assert probe("onnxruntime", str(p)) is None


@needs_openvino
@pytest.mark.parametrize("softcap", [50.0, 0.0])
def test_openvino_refuses_exactly_the_softcap(tmp_path, softcap):
    p = tmp_path / "m.onnx"
    onnx.save(group_query_attention(softcap), str(p))
    refused = probe("openvino", str(p))
    assert (refused is not None) == bool(softcap), refused


@pytest.mark.parametrize("bias,n_inputs", [(False, 7), (False, 2), (True, 7)], ids=["empty-name", "two-inputs", "bias"])
def test_p010_reports_an_attention_without_bias_under_openvino_only(tmp_path, bias, n_inputs):
    p = tmp_path / "m.onnx"
    onnx.save(attention(bias, n_inputs), str(p))
    errors = {f.code for f in lint_verdict(str(p), "openvino") if f.severity == "error"}
    assert ("P010" in errors) == (not bias)
    assert not {f.code for f in lint_verdict(str(p), "onnxruntime") if f.severity == "error"}
    assert probe("onnxruntime", str(p)) is None


@needs_openvino
@pytest.mark.parametrize("bias,n_inputs", [(False, 7), (False, 2), (True, 7)], ids=["empty-name", "two-inputs", "bias"])
def test_openvino_refuses_exactly_the_attention_without_bias(tmp_path, bias, n_inputs):
    p = tmp_path / "m.onnx"
    onnx.save(attention(bias, n_inputs), str(p))
    refused = probe("openvino", str(p))
    assert (refused is not None) == (not bias), refused


GBQ = [
    (None, "input", False),
    ("data", "input", True),
    ("scales", "input", True),
    ("zp", "input", True),
    ("data", "cast", True),
    ("scales", "cast", True),
    ("data", "identity", False),
    ("scales", "identity", False),
]


@pytest.mark.parametrize("computed,via,refused", GBQ, ids=[f"{c}-{v}" for c, v, _ in GBQ])
def test_p011_reports_a_computed_operand_under_openvino_only(tmp_path, computed, via, refused):
    p = tmp_path / "m.onnx"
    onnx.save(gather_block_quantized(computed, via), str(p))
    errors = {f.code for f in lint_verdict(str(p), "openvino") if f.severity == "error"}
    assert ("P011" in errors) == refused
    assert not {f.code for f in lint_verdict(str(p), "onnxruntime") if f.severity == "error"}
    assert probe("onnxruntime", str(p)) is None


@needs_openvino
@pytest.mark.parametrize("computed,via,refused", GBQ, ids=[f"{c}-{v}" for c, v, _ in GBQ])
def test_openvino_refuses_exactly_a_computed_operand(tmp_path, computed, via, refused):
    p = tmp_path / "m.onnx"
    onnx.save(gather_block_quantized(computed, via), str(p))
    got = probe("openvino", str(p))
    assert (got is not None) == refused, got
