"""onnx's own shape-inference test suite (1,066 tests, vendored in tests/onnx_suite/upstream)
run against shapeinfer (tests/onnx_suite/harness.py): the figures are floors and ceilings.

What is not a pass is listed by name with the reason it is acceptable in
``harness.EXPLAINED``; a test whose status changes to something not explained fails here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "onnx_suite"))

import harness

#: Floors (at least) and ceilings (at most) of the statuses, as measured.
AT_LEAST = {"pass": 845}
AT_MOST = {"missed-error": 0, "crash": 0, "false-error": 3, "wrong": 5, "other-failure": 2}


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    return harness.run_suite()


def test_suite_runs_every_test(results):
    assert len(results) == 1066


def test_figures(results):
    c = harness.figures(results)
    report = harness.report(results, show=("crash", "missed-error", "false-error", "wrong", "other-failure"))
    for status, n in AT_LEAST.items():
        assert c.get(status, 0) >= n, report
    for status, n in AT_MOST.items():
        assert c.get(status, 0) <= n, report


def test_onnxruntime_refutes_no_dim_where_shapeinfer_differs_from_onnx(results):
    """Where shapeinfer is more precise than onnx (or differs), onnxruntime, wherever it can run
    the test's model, computes the shapes shapeinfer inferred."""
    judged = [
        (harness._short(t), r["detail"][0]) for t, r in results.items() if r["status"] in ("more-precise", "wrong")
    ]
    assert judged and all(d.startswith("onnxruntime: ") for _, d in judged)
    assert [j for j in judged if "refuted" in j[1]] == []
    assert sum("verified" in d for _, d in judged) >= 7


def test_every_non_pass_but_precision_is_explained(results):
    unexplained = [
        (harness._short(tid), r["status"], r["detail"][:2])
        for tid, r in results.items()
        if r["status"] in ("wrong", "false-error", "other-failure", "missed-error", "crash")
        and harness._short(tid) not in harness.EXPLAINED
    ]
    assert unexplained == []


def test_stft_onesided_default_against_onnxruntime():
    """test_stft_reals expects 5 frequency bins for 5-sample frames with the default ``onesided``;
    the spec's default is onesided=1 (5//2 + 1 = 3 bins), which onnxruntime computes and
    shapeinfer infers (the test's int64 window is swapped for a float one so that it runs)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    import shapeinfer
    from testkit.ort_oracle import run

    node = helper.make_node("STFT", ["signal", "frame_step", "window"], ["output"])
    g = helper.make_graph(
        [node],
        "stft",
        [helper.make_tensor_value_info("signal", TensorProto.FLOAT, (2, 10, 1))],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
        [
            helper.make_tensor("frame_step", TensorProto.INT64, (), (2,)),
            helper.make_tensor("window", TensorProto.FLOAT, (5,), (1, 2, 3, 4, 5)),
        ],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    (actual,) = run(m, {"signal": np.arange(20, dtype=np.float32).reshape(2, 10, 1)})
    assert actual.shape == (2, 3, 3, 2)
    assert shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString())).dims("output") == (2, 3, 3, 2)
