"""Slice: ONNX clamping of starts / ends for positive and negative steps, sentinel bounds, and
tracked values, checked against onnxruntime; symbolic lengths evaluated at every size."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from onnx import TensorProto
from support.op_oracle import Runtime, inferred, inferred_values, one_node, one_node_ordered

import shapeinfer
from shapeinfer.inference.ops.gather_slice import onnx_slice_range, slice_len
from shapeinfer.symbolic import dims as D

INT64 = TensorProto.INT64
FLOAT = TensorProto.FLOAT
MAX, MIN = 2**63 - 1, -(2**63)
BOUNDS = [MIN, -9, -6, -3, -1, 0, 1, 3, 6, 9, MAX]
STEPS = [-3, -2, -1, 1, 2, 3]


@pytest.fixture(scope="module")
def runtime() -> Runtime:
    model = one_node_ordered(
        "Slice",
        ["x", "s", "e", "a", "k"],
        [("x", FLOAT, ["n"]), ("s", INT64, [1]), ("e", INT64, [1]), ("k", INT64, [1])],
        {"a": np.array([0], np.int64)},
        opset=13,
    )
    return Runtime(model)


def _ort_len(rt: Runtime, n: int, s: int, e: int, k: int) -> int:
    arr = lambda v: np.array([v], np.int64)  # noqa: E731
    out = rt.run({"x": np.arange(n, dtype=np.float32), "s": arr(s), "e": arr(e), "k": arr(k)})
    assert out is not None
    return out[0].shape[0]


def test_negative_step_clamps_start_to_zero_not_like_python() -> None:
    # Python: range(5)[-10:-10:-1] is empty; ONNX clamps start into [0, 4] and end into [-1, 4]
    assert list(onnx_slice_range(5, -10, -10, -1)) == [0]
    assert list(range(5)[-10:-10:-1]) == []


@pytest.mark.parametrize("k", STEPS)
def test_lengths_against_onnxruntime(runtime: Runtime, k: int) -> None:
    n_sym = D.sym("n")
    for s, e in itertools.product(BOUNDS, BOUNDS):
        sym_len = slice_len(n_sym, s, e, k)
        if k < 0 and e == MAX:
            # onnxruntime runs to index 0, the ONNX clamping stops at d-1: left open
            assert sym_len is None and slice_len(5, s, e, k) is None
            continue
        for n in range(0, 8):
            want = _ort_len(runtime, n, s, e, k)
            assert len(onnx_slice_range(n, s, e, k)) == want, (n, s, e, k)
            assert slice_len(n, s, e, k) == want, (n, s, e, k)
            if n >= 1 and sym_len is not None:  # symbols stand for positive dims
                assert D.evaluate(sym_len, {"n": n}) == want, (n, s, e, k, D.format(sym_len))


def test_symbolic_bound_of_unknown_sign_is_left_open() -> None:
    n, m = D.sym("n"), D.sym("m")
    assert slice_len(n, D.sub(n, m), n, 1) is None  # n - m may be negative
    # a provably non-negative bound is fine
    assert D.evaluate(slice_len(n, m, D.add(m, 2), 1), {"n": 9, "m": 3}) == 2


@pytest.mark.parametrize(
    "starts,ends,axes,steps",
    [
        ([1, -1], [3, -5], [0, 1], [1, -2]),
        ([-10], [-10], [1], [-1]),
        ([MAX], [MIN], [0], [-1]),
        ([MIN], [-10], [1], [-1]),
        ([0, 0], [MAX, MAX], [1, 0], [3, 2]),
    ],
)
def test_values_and_shapes_against_onnxruntime(starts, ends, axes, steps) -> None:
    data = np.arange(20, dtype=np.int64).reshape(4, 5)
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    consts = {"x": data, "s": i64(starts), "e": i64(ends), "a": i64(axes), "k": i64(steps)}
    model = one_node_ordered("Slice", ["x", "s", "e", "a", "k"], [], consts, opset=13)
    want = Runtime(model).run({})[0]
    assert inferred(model)[0] == want.shape
    assert inferred_values(model)[0] == tuple(want.reshape(-1).tolist())


def test_slice_v1_attributes() -> None:
    model = one_node(
        "Slice", [("x", FLOAT, ["n", 6])], attrs=dict(starts=[1, -4], ends=[MAX, -1], axes=[0, 1]), opset=9
    )
    assert inferred(model, {"n": 5})[0] == (4, 3)


@pytest.mark.parametrize("sign", [1, -1])
def test_symbolic_step_against_onnxruntime(runtime: Runtime, sign: int) -> None:
    """A step that is a symbol (``m``, ``-m``: provably positive / negative) gives a length
    (``-m`` was left open); at every size it is onnxruntime's."""
    n, m = D.sym("n"), D.sym("m")
    dims = {"n": n, "2*m": D.mul(2, m), "m + 3": D.add(m, 3)}
    for label, d in dims.items():
        for s, e in itertools.product(BOUNDS, BOUNDS):
            got = slice_len(d, s, e, D.mul(sign, m))
            if sign < 0 and e == MAX:
                assert got is None  # onnxruntime and ONNX disagree there: left open
                continue
            assert got is not None, (label, s, e)
            for nv, mv in itertools.product(range(1, 5), range(1, 5)):
                size = D.evaluate(d, {"n": nv, "m": mv})
                want = _ort_len(runtime, size, s, e, sign * mv)
                assert D.evaluate(got, {"n": nv, "m": mv}) == want, (label, s, e, nv, mv, D.format(got))
    # onnxruntime's own test: [B, 2N] sliced from -1 to -2**32 by -N has 2 columns
    assert slice_len(D.mul(2, n), -1, -(2**32), D.mul(-1, n)) == 2
    assert slice_len(n, 0, 5, D.sub(n, m)) is None  # sign unknown: left open


def test_gather_elements_indices_no_longer_than_the_data_off_axis() -> None:
    """onnxruntime refuses GatherElements indices longer than the data on another axis than
    ``axis``: indices [b, s] over data [2, 64] along axis 1 run for b <= 2 only, the guard."""
    model = one_node(
        "GatherElements", [("x", TensorProto.FLOAT, [2, 64]), ("i", TensorProto.INT64, ["b", "s"])], attrs={"axis": 1}
    )
    rt = Runtime(model)
    x = np.zeros((2, 64), np.float32)
    runs = {b for b in (1, 2, 3) if rt.run({"x": x, "i": np.zeros((b, 5), np.int64)}) is not None}
    assert runs == {1, 2}
    r = shapeinfer.infer(model)
    assert [(g.kind, str(g.lhs), g.rhs) for g in r.guards()] == [("bound", "b", 2)]
