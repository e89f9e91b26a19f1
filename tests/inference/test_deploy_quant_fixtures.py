"""The deployment fixtures with quantized and nchwc ops (QAttention, QEmbedLayerNormalization,
MatMulNBits, GatherBlockQuantized, QDQ pairs, nchwc Conv / ReorderOutput) are inferred completely
and right: every tensor's dims are over the input symbols (nothing fresh, no G007) and evaluate
to the shapes onnxruntime produces at two bindings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import shapeinfer
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

DEPLOY = Path(__file__).resolve().parents[1] / "models" / "deploy"
FIXTURES = [
    "bert_ts.tfopt.qdyn.onnx",
    "gpt2_ts.tfopt.nbits_gather.onnx",
    "llama_dynamo.qdq.onnx",
    "llama_ts.tfopt.ortext.nbits.onnx",
    "vit_dynamo.ortall.onnx",
]
BINDINGS = [{"batch": 2, "seq": 7}, {"batch": 3, "seq": 11}]


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_dims_resolved_and_right(name: str) -> None:
    model = onnx.load(str(DEPLOY / name))
    result = shapeinfer.infer(model)
    assert not [d for d in result.diagnostics if d.code in ("G007", "E001", "E002")]
    fresh = set(result.fresh_symbols)
    checked = 0
    for binding in BINDINGS:
        actual = ort_oracle.run_all(model, ort_oracle.feeds(model, binding))
        for tensor, value in actual.items():
            f = result.facts[tensor]
            assert f.shape is not None and len(f.shape) == np.ndim(value), (tensor, f.shape, np.shape(value))
            for d, want in zip(f.shape, np.shape(value)):
                assert type(d) is int or not (D.symbols(d) & fresh), (tensor, f.shape)
                assert D.evaluate(d, binding) == want, (tensor, f.shape, np.shape(value), binding)
            checked += 1
    assert checked > 2 * 40
