"""P009: OpenVINO's frontend refuses a com.microsoft GroupQueryAttention with a softcap."""

from __future__ import annotations

import onnx
import pytest

from testkit.lint_models import group_query_attention
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
