"""Guards of a subgraph that may not run: a Loop body whose trip count may be 0, an If branch
whose condition inference does not decide. What the subgraph needs of the sizes holds where it
runs, so each of its guards is kept as "that guard, or the subgraph does not run" (``n <= 3 or
n == 8`` for a Gemm of x[1, n] by a [8, 3] weight in a Loop of n - 3 iterations) where the
condition under which it runs is a comparison of sizes. onnxruntime is the oracle: over a grid
of sizes it runs each model exactly where the guards hold, and the output's dims are its own."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.guards import check

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _i64(v) -> np.ndarray:
    return np.asarray(v, np.int64)


_INITS = {
    "one": _i64([1]),
    "k1": _i64(1),
    "k2": _i64(2),
    "k3": _i64(3),
    "k6": _i64(6),
    "k8": _i64(8),
    "true": np.array(True),
    "W": np.ones((8, 3), np.float32),  # Gemm of x[1, n]: n == 8
    "c5": np.ones(5, np.float32),  # x[1, n] + c[5]: n == 1 or n == 5
    "r4": _i64([-1, 4]),  # x reshaped to [-1, 4]: n % 4 == 0
    "i5": _i64(5),  # column 5 of x: 6 <= n
    "ax0": _i64([0]),
}

#: what the subgraph does with the outer x[1, n], making "g"
_OPS = {
    "gemm": [helper.make_node("Gemm", ["x", "W"], ["g"])],
    "broadcast": [helper.make_node("Add", ["x", "c5"], ["g"])],
    "divisible": [helper.make_node("Reshape", ["x", "r4"], ["g"])],
    "index": [helper.make_node("Gather", ["x", "i5"], ["g"], axis=1)],
    "pool": [
        helper.make_node("Unsqueeze", ["x", "ax0"], ["u"]),
        helper.make_node("MaxPool", ["u"], ["g"], kernel_shape=[5]),
    ],
}

#: the trip count as nodes from "n" (x's size) to "trip"
_TRIPS = {
    "n - 3": [helper.make_node("Sub", ["n", "k3"], ["trip"])],
    "n//2 - 1": [helper.make_node("Div", ["n", "k2"], ["h"]), helper.make_node("Sub", ["h", "k1"], ["trip"])],
    "6 - n": [helper.make_node("Sub", ["k6", "n"], ["trip"])],
}

#: the If condition as nodes from "n" to "cond"
_CONDITIONS = {
    "n > 3": [helper.make_node("Greater", ["n", "k3"], ["cond"])],
    "not n >= 6": [helper.make_node("GreaterOrEqual", ["n", "k6"], ["c1"]), helper.make_node("Not", ["c1"], ["cond"])],
    "3 < n <= 8": [
        helper.make_node("Greater", ["n", "k3"], ["c1"]),
        helper.make_node("LessOrEqual", ["n", "k8"], ["c2"]),
        helper.make_node("And", ["c1", "c2"], ["cond"]),
    ],
    "n//2 == 3": [helper.make_node("Div", ["n", "k2"], ["h"]), helper.make_node("Equal", ["h", "k3"], ["cond"])],
}


def _model(nodes: list) -> onnx.ModelProto:
    size = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "one"], ["n"], axis=0)]
    g = helper.make_graph(
        size + nodes,
        "g",
        [helper.make_tensor_value_info("x", F, [1, "n"])],
        [onnx.ValueInfoProto(name="y")],
        [numpy_helper.from_array(v, k) for k, v in _INITS.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _body(op: str) -> onnx.GraphProto:
    return helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), *_OPS[op]],
        "body",
        [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", B, [])],
        [helper.make_tensor_value_info("c_out", B, []), onnx.ValueInfoProto(name="g")],
    )


def _loop(trip: str, op: str, nested: bool) -> onnx.ModelProto:
    loop = helper.make_node("Loop", ["trip", "true"], ["y"], body=_body(op))
    if nested:  # the same loop in the body of a loop of two iterations
        outer = helper.make_graph(
            [
                helper.make_node("Identity", ["c_in2"], ["c_out2"]),
                helper.make_node("Loop", ["trip", "true"], ["inner"], body=_body(op)),
                helper.make_node("Shape", ["inner"], ["g2"]),
            ],
            "outer",
            [helper.make_tensor_value_info("i2", I64, []), helper.make_tensor_value_info("c_in2", B, [])],
            [helper.make_tensor_value_info("c_out2", B, []), onnx.ValueInfoProto(name="g2")],
        )
        loop = helper.make_node("Loop", ["k2", "true"], ["y"], body=outer)
    return _model([*_TRIPS[trip], loop])


def _if(condition: str, op: str, branch: str) -> onnx.ModelProto:
    out = [onnx.ValueInfoProto(name="g")]
    runs = helper.make_graph(list(_OPS[op]), "runs", [], out)
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["g"])], "other", [], out)
    then_g, else_g = (runs, other) if branch == "then" else (other, runs)
    return _model(
        [*_CONDITIONS[condition], helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)]
    )


def _runs_exactly_where_guards_hold(m: onnx.ModelProto, sizes=range(1, 14)) -> list[str]:
    """Over x[1, n] for n in ``sizes``: onnxruntime runs ``m`` exactly where every guard holds,
    and y's dims in n are its sizes there. Returns the guards' texts."""
    ort = pytest.importorskip("onnxruntime")
    result = shapeinfer.infer(m)
    guards, dims = result.guards(), result.dims("y")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    texts = [g.text for g in guards]
    for n in sizes:
        try:
            (y,) = sess.run(None, {"x": np.ones((1, n), np.float32)})
        except Exception:
            y = None
        assert (y is not None) == all(check(g, {"n": n}) for g in guards), (n, texts)
        if y is not None and dims is not None:
            assert len(dims) == y.ndim, (n, dims, y.shape)
            for d, a in zip(dims, y.shape):
                if D.symbols(d) <= {"n"}:
                    assert D.evaluate(d, {"n": n}) == a, (n, dims, y.shape)
    return texts


@pytest.mark.parametrize("nested", [False, True], ids=["loop", "nested"])
@pytest.mark.parametrize("op", ["gemm", "broadcast", "divisible", "index"])
@pytest.mark.parametrize("trip", list(_TRIPS))
def test_a_loop_body_that_may_not_run_keeps_its_guards_where_it_runs(trip: str, op: str, nested: bool) -> None:
    _runs_exactly_where_guards_hold(_loop(trip, op, nested))


@pytest.mark.parametrize("count", ["", "trip"], ids=["while", "for"])
@pytest.mark.parametrize("op", ["gemm", "broadcast", "divisible", "index"])
@pytest.mark.parametrize("condition", ["n > 3", "not n >= 6"])
def test_a_loop_whose_condition_on_entry_is_a_comparison_of_sizes(condition: str, op: str, count: str) -> None:
    """A Loop entered under a condition on the sizes (with or without a trip count of n - 3;
    the body stops after its third iteration) keeps its body's guards where it runs."""
    body = _body(op)
    body.node[0].CopyFrom(helper.make_node("Less", ["i", "k2"], ["c_out"]))
    loop = helper.make_node("Loop", [count, "cond0"], ["y"], body=body)
    trip = _TRIPS["n - 3"] if count else []
    squeeze = helper.make_node("Squeeze", ["cond"], ["cond0"])  # (the body's c_in is a scalar)
    _runs_exactly_where_guards_hold(_model([*trip, *_CONDITIONS[condition], squeeze, loop]))


@pytest.mark.parametrize("branch", ["then", "else"])
@pytest.mark.parametrize("op", ["gemm", "broadcast", "divisible", "index", "pool"])
@pytest.mark.parametrize("condition", list(_CONDITIONS))
def test_an_if_branch_that_may_not_run_keeps_its_guards_where_it_runs(condition: str, op: str, branch: str) -> None:
    _runs_exactly_where_guards_hold(_if(condition, op, branch))


def test_the_guards_say_the_condition_plainly() -> None:
    """Each guard of the subgraph, or where it does not run; a guard the condition implies
    (a pool that needs 4 <= n, run where n > 3) is not said at all."""
    assert _runs_exactly_where_guards_hold(_loop("n - 3", "gemm", False)) == ["n <= 3 or n == 8"]
    assert _runs_exactly_where_guards_hold(_loop("n - 3", "divisible", False)) == ["n <= 3 or n % 4 == 0"]
    assert _runs_exactly_where_guards_hold(_if("n > 3", "pool", "then")) == []
    assert _runs_exactly_where_guards_hold(_if("n > 3", "pool", "else")) == ["4 <= n"]
