"""Regression tests for what the differential fuzzer (testkit/fuzz_graphs.py) found.

Each is the minimal graph written out with onnx.helper and checked against onnxruntime at
bindings that exercise the bug. A bug still open would be ``xfail(strict=True)`` here, tied to an
entry of ``fuzz_graphs.KNOWN_ISSUES``; none is open now.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

pytest.importorskip("onnxruntime")

from testkit.fuzz_graphs import run_all, run_outputs

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def ints(name: str, values, shape=None) -> onnx.TensorProto:
    arr = np.array(values, dtype=np.int64)
    return numpy_helper.from_array(arr if shape is None else arr.reshape(shape), name)


def model(nodes, inputs, outputs, inits, opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "regression",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, dims) for n, dims in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],
        initializer=inits,
    )
    opsets = [helper.make_opsetid("", opset)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=helper.find_min_ir_version_for(opsets))


def assert_inferred_dims_match_onnxruntime(
    m: onnx.ModelProto, bindings: list[dict[str, int]], unresolved_ok: bool = False
) -> None:
    """Every node output's inferred dims, evaluated at each binding, equal onnxruntime's shape.

    With ``unresolved_ok`` a dim holding a fresh symbol is skipped (not known is not wrong).
    """
    res = shapeinfer.infer(m)
    fresh = set(res.fresh_symbols)
    for b, actual in zip(bindings, run_all(m, bindings)):
        for name, arr in actual.items():
            dims = res.facts[name].shape
            assert dims is not None, name
            assert len(dims) == arr.ndim, (name, [str(d) for d in dims], arr.shape)
            for d, a in zip(dims, arr.shape):
                if type(d) is not int and D.symbols(d) & fresh:
                    assert unresolved_ok, (name, [str(d) for d in dims])
                    continue
                assert (d if type(d) is int else D.evaluate(d, b)) == a, (name, b, [str(d) for d in dims], arr.shape)


def assert_optimize_keeps_outputs(m: onnx.ModelProto, bindings: list[dict[str, int]], bind=None) -> None:
    want = run_outputs(m, bindings)
    got = run_outputs(shapeinfer.optimize(m, bind=bind), bindings)
    diff = ort_oracle.outputs_differ(want, got, rtol=0, atol=0)
    assert diff is None, diff


# --------------------------------------------------------------------------- shape inference


def test_slice_negative_step_over_a_dim_that_can_be_zero():
    """ops/gather_slice.py slice_len: with a negative step the start clamps into [0, d-1], which
    is empty when d is 0; the symbolic length assumed d >= 1 and gave 1 for an empty dim."""
    m = model(
        [
            helper.make_node("Slice", ["x", "one", "end"], ["y"]),  # a - 1: 0 when a = 1
            helper.make_node("Slice", ["y", "minus1", "start_of_dim", "axis0", "minus1"], ["z"]),  # reversed
        ],
        [("x", ["a"])],
        ["z"],
        [
            ints("one", [1]),
            ints("end", [INT64_MAX]),
            ints("minus1", [-1]),
            ints("start_of_dim", [INT64_MIN]),
            ints("axis0", [0]),
        ],
    )
    assert_inferred_dims_match_onnxruntime(m, [{"a": 1}, {"a": 2}, {"a": 5}])


def test_slice_negative_step_over_a_slice_that_can_be_empty():
    """The fuzzer's original form: a strided slice that is empty for small dims, then reversed up
    to its own length read back with Shape (a symbolic end)."""
    m = model(
        [
            helper.make_node("Slice", ["x", "three", "thousand", "axis0", "two"], ["y"]),  # empty for a <= 3
            helper.make_node("Shape", ["y"], ["n"], start=-1),
            helper.make_node("Slice", ["y", "minus1", "n", "axis0", "minus1"], ["z"]),
        ],
        [("x", ["a"])],
        ["z"],
        [ints("three", [3]), ints("thousand", [1000]), ints("axis0", [0]), ints("two", [2]), ints("minus1", [-1])],
    )
    assert_inferred_dims_match_onnxruntime(m, [{"a": 1}, {"a": 3}, {"a": 4}, {"a": 6}], unresolved_ok=True)


def test_broadcast_with_an_unknown_dim_does_not_make_it_equal_to_the_other_side():
    """ops/common.py broadcast_dim: broadcasting an unknown (fresh) dim with a known one unified
    them, so the unknown input dim was rewritten to the other side everywhere; it may be 1.
    (Fuzzer's form: an ambiguous negative-step Slice, then Where against a ``c`` dim.)"""
    m = model(
        [
            helper.make_node("ConstantOfShape", ["n"], ["y"]),  # [n[0]]: a data-dependent dim
            helper.make_node("Add", ["y", "w"], ["z"]),
        ],
        [("w", ["c"])],
        ["z"],
        [],
    )
    m.graph.input.append(helper.make_tensor_value_info("n", TensorProto.INT64, [1]))
    res = shapeinfer.infer(m)
    fresh = set(res.fresh_symbols)
    (y,) = res.facts["y"].shape
    (z,) = res.facts["z"].shape
    assert isinstance(y, D.Expr) and D.symbols(y) <= fresh  # unknown, and still unknown
    assert res.equalities == []
    # c may be 1, where the sum has y's length (the second op sweep): not c; with c of at
    # least 2 the unknown side must be 1 or c, and the sum is c
    assert z != D.sym("c")
    (z2,) = shapeinfer.infer(m, dim_ranges={"c": (2, None)}).facts["z"].shape
    assert z2 == D.sym("c")
    got = ort_oracle.run_all(m, {"w": np.ones(1, np.float32), "n": np.array([3], np.int64)})
    assert got["z"].shape == (3,)
    for c in (2, 4):
        got = ort_oracle.run_all(m, {"w": np.ones(c, np.float32), "n": np.array([1], np.int64)})
        assert (got["z"].shape, got["y"].shape) == ((c,), (1,))
        assert D.evaluate(z2, {"c": c}) == c


# --------------------------------------------------------------------------- optimize (open bugs)


def test_optimize_keeps_a_folded_scalar_0d():
    m = model(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "last"], ["d"], axis=0),  # 0-D
            helper.make_node("Range", ["zero", "d", "two"], ["r"]),
        ],
        [("x", [3])],
        [],
        [ints("last", -1), ints("zero", 0), ints("two", 2)],
        opset=21,
    )
    m.graph.output.append(helper.make_tensor_value_info("r", TensorProto.INT64, None))
    assert_optimize_keeps_outputs(m, [{}])


def test_optimize_bind_keeps_a_folded_scalar_0d():
    m = model(
        [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "first"], ["d"], axis=0),
            helper.make_node("Range", ["zero", "d", "one"], ["r"]),
        ],
        [("x", ["a", 2])],
        [],
        [ints("first", 0), ints("zero", 0), ints("one", 1)],
        opset=17,
    )
    m.graph.output.append(helper.make_tensor_value_info("r", TensorProto.INT64, None))
    assert_optimize_keeps_outputs(m, [{"a": 4}], bind={"a": 4})


def test_optimize_reshape_over_a_dim_that_can_be_zero():
    m = model(
        [
            helper.make_node("Slice", ["x", "minus1", "two", "axis0"], ["y"]),  # [0 or 1, c, c]
            helper.make_node("Shape", ["x"], ["s1"], start=1, end=2),
            helper.make_node("Shape", ["x"], ["s2"], start=2),
            helper.make_node("Mul", ["s1", "s2"], ["cc"]),
            helper.make_node("Concat", ["minus1", "cc"], ["target"], axis=0),
            helper.make_node("Reshape", ["y", "target"], ["z"]),
        ],
        [("x", ["b", "c", "c"])],
        ["z"],
        [ints("minus1", [-1]), ints("two", [2]), ints("axis0", [0])],
    )
    assert_optimize_keeps_outputs(m, [{"b": 1, "c": 2}, {"b": 4, "c": 2}])


def test_optimize_reshape_target_entry_that_can_be_zero():
    m = model(
        [
            helper.make_node("Slice", ["x", "minus1", "two", "axis0"], ["y"]),  # [0 or 1, c]
            helper.make_node("Shape", ["x"], ["c"], start=1),
            helper.make_node("Concat", ["one_minus1", "c"], ["target"], axis=0),  # [1, -1, c]
            helper.make_node("Reshape", ["y", "target"], ["z"]),
        ],
        [("x", ["b", "c"])],
        ["z"],
        [ints("minus1", [-1]), ints("two", [2]), ints("axis0", [0]), ints("one_minus1", [1, -1])],
    )
    assert_optimize_keeps_outputs(m, [{"b": 1, "c": 2}, {"b": 4, "c": 2}])
