"""Tracked values of integer and float arithmetic, checked element by element against onnxruntime:
integer Div (truncation), Mod (both fmod modes), Cast (wrapping, truncation, float32 rounding),
Range counts; and the symbolic forms of Div on dims."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from support.op_oracle import IR_VERSION, Runtime, inferred, inferred_values, one_node_ordered

from shapeinfer.symbolic import dims as D

INT64 = TensorProto.INT64
FLOAT = TensorProto.FLOAT

A = np.array([7, -7, 7, -7, 0, 1, -1, 9, -9, 12, -12, 5, 2**40, -(2**40), 3, -3], np.int64)
B = np.array([2, 2, -2, -2, 3, -5, 5, 4, 4, -7, 7, 5, 3, 3, -1, 1], np.int64)


def _values(op: str, consts: dict, attrs: dict | None = None, opset: int = 13):
    model = one_node_ordered(op, list(consts), [], consts, attrs, opset=opset)
    want = Runtime(model).run({})[0]
    return inferred_values(model)[0], tuple(want.reshape(-1).tolist()), model


@pytest.mark.parametrize("op,attrs", [("Div", None), ("Mod", {"fmod": 0}), ("Mod", {"fmod": 1})])
def test_integer_division_against_onnxruntime(op: str, attrs) -> None:
    got, want, _ = _values(op, {"a": A, "b": B}, attrs)
    assert got == want


@pytest.mark.parametrize(
    "a,b",
    [
        (np.array([2**30, 2**31 - 1, -(2**31), 7], np.int32), np.array([2**30, 1, -1, 3], np.int32)),
        (np.array([2**31, 1, 0, 7], np.uint32), np.array([2**31, 2, 1, 3], np.uint32)),
    ],
)
def test_narrow_integer_types_wrap_like_onnxruntime(a, b) -> None:
    for op in ("Add", "Mul", "Sub"):
        got, want, _ = _values(op, {"a": a, "b": b})
        assert got == want, op


@pytest.mark.parametrize(
    "src,to",
    [
        (np.array([1.7, -1.7, 2.5, -0.5, 300.0, -129.0], np.float32), TensorProto.INT64),
        (np.array([1.7, -1.7, 2.5, 127.9, -128.9, 0.0], np.float32), TensorProto.INT8),
        (np.array([2**24 + 1, 2**53 + 1, -3, 7], np.int64), TensorProto.FLOAT),
        (np.array([300, -1, 255, 256], np.int64), TensorProto.UINT8),
        (np.array([1, 0, 5, -2], np.int64), TensorProto.BOOL),
        (np.array([70000.5, 1e-8, 3.14159, -2.0], np.float32), TensorProto.FLOAT16),
    ],
)
def test_cast_values_against_onnxruntime(src: np.ndarray, to: int) -> None:
    got, want, _ = _values("Cast", {"x": src}, {"to": to})
    if to == TensorProto.BOOL:
        want = tuple(int(v) for v in want)
    assert got == want


@pytest.mark.parametrize(
    "start,limit,delta,dtype",
    [
        (0, 10, 3, np.int64),
        (10, -3, -4, np.int64),
        (5, 5, 1, np.int32),
        (0.0, 1.0, 0.1, np.float32),
        (1.0, 2.2, 0.4, np.float32),
        (-1.5, 3.0, 0.7, np.float64),
    ],
)
def test_range_against_onnxruntime(start, limit, delta, dtype) -> None:
    consts = {"s": np.array(start, dtype), "l": np.array(limit, dtype), "d": np.array(delta, dtype)}
    got, want, model = _values("Range", consts, opset=11)
    assert inferred(model)[0] == (len(want),)
    assert got == want


def test_symbolic_integer_div_of_dims() -> None:
    # Shape -> Div by 2 / by -2: truncation toward zero of a non-negative dim
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Div", ["s", "two"], ["q"]),
        helper.make_node("Neg", ["s"], ["ns"]),
        helper.make_node("Div", ["ns", "two"], ["nq"]),
        helper.make_node("Mod", ["s", "three"], ["r"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", FLOAT, ["n"])],
        [helper.make_empty_tensor_value_info(o) for o in ("q", "nq", "r")],
        [helper.make_tensor("two", INT64, [1], [2]), helper.make_tensor("three", INT64, [1], [3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=IR_VERSION)
    q, nq, r = inferred_values(model)
    rt = Runtime(model)
    for n in range(1, 12):
        want = rt.run({"x": np.zeros(n, np.float32)})
        got = [D.evaluate(v[0], {"n": n}) for v in (q, nq, r)]
        assert got == [int(w[0]) for w in want], n


@pytest.mark.parametrize(
    "op,consts,attrs",
    [
        ("Tile", {"x": np.arange(6).reshape(2, 3), "r": np.array([2, 3])}, {}),
        ("ReduceSum", {"x": np.arange(24).reshape(2, 3, 4), "a": np.array([1, -1])}, {"keepdims": 0}),
        ("ReduceProd", {"x": np.arange(1, 13).reshape(3, 4)}, {"axes": [0]}),
        ("ReduceMax", {"x": np.arange(12).reshape(3, 4)}, {"axes": [1], "keepdims": 1}),
        ("ReduceMin", {"x": -np.arange(12).reshape(3, 4)}, {}),
    ],
)
def test_tile_and_reduce_values_against_onnxruntime(op: str, consts: dict, attrs: dict) -> None:
    got, want, model = _values(op, consts, attrs)
    assert got == want
    assert inferred(model)[0] == Runtime(model).run({})[0].shape


def test_symbolic_reduce_of_a_shape() -> None:
    # ReduceProd(Shape(x)[1:]) is the element count per row: a product of symbols
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=1),
        helper.make_node("ReduceProd", ["s"], ["p"], keepdims=1),
        helper.make_node("ReduceMax", ["s"], ["m"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", FLOAT, ["a", "b", 4])],
        [helper.make_empty_tensor_value_info(o) for o in ("p", "m")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=IR_VERSION)
    p, m = inferred_values(model)
    assert p == (D.mul(D.sym("b"), 4),)
    assert m == (D.dmax(D.sym("b"), 4),)
