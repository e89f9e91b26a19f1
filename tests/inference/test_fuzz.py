"""Differential fuzzing of shape inference and optimize against onnxruntime (testkit/fuzz_graphs.py).

- ``test_fuzz_bounded``: a fixed, derandomized set of generated graphs, run in every test
  session (about a minute on two cores).
- ``test_fuzz_long`` (marker ``fuzz``, deselected by default): ``pytest -m fuzz
  --hypothesis-seed=N`` runs ``FUZZ_EXAMPLES`` (default 5000) random graphs; a failure is shrunk
  by hypothesis to a minimal model. ``python tools/fuzz/fuzz.py`` runs the same check as a
  script that counts every failure instead of stopping at the first.

The remaining tests check the fuzzer itself: its model of Slice agrees with onnxruntime, it
finds deliberately broken rules and a broken optimize, and its known-issue list is tied to
regression tests.
"""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.inference import op_registry as registry

pytest.importorskip("onnxruntime")

from testkit import fuzz_graphs as fg

CI_EXAMPLES = 2000
LONG_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "5000"))
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


@settings(max_examples=CI_EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=HEALTH)
@given(fg.cases(max_steps=10))
def test_fuzz_bounded(case):
    fg.check_or_raise(case)


@pytest.mark.fuzz
@settings(max_examples=LONG_EXAMPLES, deadline=None, database=None, suppress_health_check=HEALTH)
@given(fg.cases(max_steps=12))
def test_fuzz_long(case):
    fg.check_or_raise(case)


# ------------------------------------------------------------------------- the fuzzer itself


def _slice_grid_model(n: int) -> tuple[onnx.ModelProto, list[tuple[int, int, int]]]:
    combos = list(itertools.product(fg.SLICE_BOUNDS, fg.SLICE_BOUNDS, fg.SLICE_STEPS))
    nodes, inits, outs = [], [numpy_helper.from_array(np.array([0], np.int64), "axis")], []
    for j, (s, e, k) in enumerate(combos):
        for name, v in (("s", s), ("e", e), ("k", k)):
            inits.append(numpy_helper.from_array(np.array([v], np.int64), f"{name}{j}"))
        nodes.append(helper.make_node("Slice", ["x", f"s{j}", f"e{j}", "axis", f"k{j}"], [f"y{j}"]))
        outs.append(helper.make_tensor_value_info(f"y{j}", TensorProto.INT64, None))
    g = helper.make_graph(nodes, "grid", [helper.make_tensor_value_info("x", TensorProto.INT64, [n])], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), combos


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_generator_slice_model_agrees_with_onnxruntime(n):
    """The generator's own Slice semantics (which it builds valid graphs from) are onnxruntime's."""
    m, combos = _slice_grid_model(n)
    got = fg.session(m).run(None, {"x": np.arange(n, dtype=np.int64)})
    for (s, e, k), arr in zip(combos, got):
        assert arr.tolist() == list(fg._slice_indices(n, s, e, k)), (n, s, e, k)


def _transpose_case() -> fg.Case:
    g = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])],
        "t",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return fg.Case(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), [{"a": 2}])


def _identity_rule(ctx, ins):
    return [ins[0]]


def test_checker_reports_a_wrong_dim(monkeypatch):
    assert not fg.check_case(_transpose_case()).failures
    registry.load_all()  # the real rules first: families are imported lazily
    monkeypatch.setitem(registry._RULES, ("", "Transpose"), [(1, _identity_rule)])
    rep = fg.check_case(_transpose_case(), optimize=False)
    assert [(f.kind, f.tensor, f.op) for f in rep.failures] == [("dim", "y", "Transpose"), ("bind", "y", "Transpose")]
    assert "actual [3, 2]" in rep.failures[0].detail


def test_checker_reports_an_optimize_that_changes_outputs(monkeypatch):
    case = _transpose_case()

    def bad_optimize(model, **kw):
        m = onnx.ModelProto()
        m.CopyFrom(model)
        m.graph.node[0].attribute[0].ints[:] = [0, 1]  # no longer a transpose
        return m

    monkeypatch.setattr(shapeinfer, "optimize", bad_optimize)
    rep = fg.check_case(case)
    assert {f.kind for f in rep.failures} == {"optimize", "optimize-bind"}


def test_fuzzer_finds_a_broken_rule(monkeypatch):
    """With Unsqueeze's rule broken for negative axes only, a short derandomized search finds it,
    and the failing tensor's ancestors alone still show it (the repro the script prints)."""
    from hypothesis import Phase, find

    real = registry.lookup("", "Unsqueeze", 17)

    def negative_axes_wrong(ctx, ins):
        out = real(ctx, ins)
        if ctx.version >= 13 and len(ins) > 1 and ins[1].value and min(ins[1].value) < 0 and out[0].shape:
            shape = out[0].shape
            return [out[0].with_shape(shape[1:] + shape[:1])]  # rotated: wrong dims
        return out

    registry.load_all()  # the real rules first: families are imported lazily

    monkeypatch.setitem(registry._RULES, ("", "Unsqueeze"), [(1, negative_axes_wrong)])

    def wrong(case: fg.Case) -> list:
        return [f for f in fg.check_case(case, optimize=False).failures if f.kind in ("dim", "rank")]

    found = find(
        fg.cases(),
        lambda case: bool(wrong(case)),
        settings=settings(
            max_examples=300, derandomize=True, database=None, phases=[Phase.generate], suppress_health_check=HEALTH
        ),
    )
    first = next(f for f in wrong(found) if f.op == "Unsqueeze")
    small = fg.Case(fg.ancestors_model(found.model, [first.tensor]), found.bindings)
    assert len(small.model.graph.node) <= len(found.model.graph.node)
    assert first.tensor in {f.tensor for f in wrong(small)}
    assert {f.op for f in wrong(small)} == {"Unsqueeze"}


def test_every_known_issue_has_a_strict_xfail_regression_test():
    """A known issue is set aside only while its regression tests are strict xfails."""
    text = (Path(__file__).parent / "test_fuzz_regressions.py").read_text()
    for k in fg.KNOWN_ISSUES:
        assert k.tests
        for test in k.tests:
            path, name = test.split("::")
            assert path == "tests/inference/test_fuzz_regressions.py"
            m = re.search(r"@pytest\.mark\.xfail\(\s*strict=True,.*?\)\s*def " + re.escape(name) + r"\(", text, re.S)
            assert m, f"{name} must exist and be xfail(strict=True)"


def test_ancestors_model_keeps_what_a_tensor_needs():
    m = fg.Case(_transpose_case().model, []).model
    m.graph.node.append(helper.make_node("Shape", ["x"], ["s"]))
    small = fg.ancestors_model(m, ["y"])
    assert [n.op_type for n in small.graph.node] == ["Transpose"]
    assert [o.name for o in small.graph.output] == ["y"]
