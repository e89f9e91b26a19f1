"""onnx-shape-inference's own test suite (shipped in its package, 1,879 tests in 0.4.0) run against
the original and through shapeinfer.compat.onnx_shape_inference (tests/osi_suite/osi_harness.py):
the figures are floors and ceilings, every failure through the drop-in has a category, and
onnxruntime refutes none of the dims the drop-in wrote."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

osi = pytest.importorskip("onnx_shape_inference")
pytest.importorskip("parameterized")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "osi_suite"))

import osi_harness as harness  # noqa: E402

if osi.__version__ != harness.VERSION:
    pytest.skip(f"figures measured on onnx-shape-inference {harness.VERSION}", allow_module_level=True)

#: Floors (at least) and ceilings (at most), as measured on 0.4.0's tests.
AT_LEAST = {"pass": 1165}
AT_MOST = {
    "refuted": 0,
    "serialiser": 1,
    "invalid-node": 221,
    "unjudged": 67,
    "no-rule": 55,
    "value-unknown": 4,
}


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    return harness.run_suite(dropin=True)


def test_the_original_passes_its_own_suite():
    original = harness.run_suite(dropin=False)
    assert len(original) == 1879
    assert {r["status"] for r in original.values()} <= {"pass", "skipped"}


def test_figures_through_the_drop_in(results):
    assert len(results) == 1879
    f = harness.figures(results)
    report = harness.report(results, show=("refuted", "serialiser"))
    assert f["dropin"]["pass"] >= AT_LEAST["pass"], report
    for category, n in AT_MOST.items():
        assert f["categories"].get(category, 0) <= n, report
    assert f["internal"].get("fail", 0) == 0, report  # the original's internals, untouched


def test_every_failure_through_the_drop_in_is_categorised_and_none_is_refuted(results):
    failed = [r for r in results.values() if r["status"] == "fail" and harness.through_dropin(r)]
    assert failed and all(harness.category(r) in harness.CATEGORIES for r in failed)
    assert [r["onnxruntime"] for r in failed if r["onnxruntime"].startswith("refuted")] == []
    assert sum(r["onnxruntime"].startswith("verified") for r in failed) >= 15
