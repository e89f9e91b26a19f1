"""remove-neutral: x * 1, x / 1 and x + 0 go where that is exact, signed zeros included."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.common import model_path
from support.pass_helpers import model_of, run_pass

from shapeinfer.passes import optimize_with_report
from testkit import ort_oracle

pytest.importorskip("onnxruntime")


def f32(name: str, arr) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def _signed_zeros(shape) -> np.ndarray:
    """Random floats with +0.0 and -0.0 among them (the values that tell x + 0.0 from x)."""
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[::3] = 0.0
    flat[1::3] = -0.0
    return x


def _bits(a: onnx.ModelProto, b: onnx.ModelProto, feeds: dict) -> bool:
    ra, rb = ort_oracle.run(a, feeds), ort_oracle.run(b, feeds)
    return all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(ra, rb))


def _one(op: str, a: str, b: str, const, dtype=T.FLOAT, shape=("n", 4)) -> onnx.ModelProto:
    nodes = [h.make_node(op, [a, b], ["t"]), h.make_node("Neg", ["t"], ["y"])]
    arr = np.asarray(const, dtype=onnx.helper.tensor_dtype_to_np_dtype(dtype))
    return model_of(
        nodes,
        [h.make_tensor_value_info("x", dtype, list(shape))],
        [h.make_tensor_value_info("y", dtype, list(shape))],
        [numpy_helper.from_array(arr, "c")],
    )


EXACT = [
    ("Mul", "x", "c", [1.0], T.FLOAT),
    ("Mul", "c", "x", 1.0, T.FLOAT),
    ("Div", "x", "c", [1.0], T.FLOAT),
    ("Add", "x", "c", [-0.0] * 4, T.FLOAT),
    ("Add", "c", "x", -0.0, T.FLOAT),
    ("Sub", "x", "c", [0.0] * 4, T.FLOAT),
    ("Add", "x", "c", [0, 0, 0, 0], T.INT64),
    ("Sub", "x", "c", 0, T.INT32),
    ("Mul", "x", "c", 1, T.INT64),
    ("Mul", "x", "c", 1.0, T.FLOAT16),
    ("Div", "x", "c", [1.0] * 4, T.FLOAT),
]


@pytest.mark.parametrize("op,a,b,const,dtype", EXACT)
def test_exact_neutral_operands_are_removed_with_the_same_bits(op, a, b, const, dtype):
    m = _one(op, a, b, const, dtype)
    out, changes = run_pass("remove-neutral", m)
    assert changes == {"neutral arithmetic removed": 1}
    assert [n.op_type for n in out.graph.node] == ["Neg"] and list(out.graph.node[0].input) == ["x"]
    np_type = onnx.helper.tensor_dtype_to_np_dtype(dtype)
    x = _signed_zeros((5, 4)) if np.dtype(np_type).kind == "f" else np.arange(-10, 10).reshape(5, 4)
    x = x.astype(np_type)
    if np.dtype(np_type).kind == "f":
        x[0, 0], x[0, 1], x[0, 2] = np.inf, -np.inf, np.nan
    assert _bits(m, out, {"x": x})


NOT_EXACT = [
    ("Add", "x", "c", [0.0] * 4),  # -0.0 + 0.0 is +0.0
    ("Add", "c", "x", 0.0),
    ("Sub", "x", "c", [-0.0] * 4),  # x - (-0.0) is x + 0.0
    ("Add", "x", "c", [0.0, -0.0, 0.0, -0.0]),  # mixed signs: +0.0 where x is -0.0
]


@pytest.mark.parametrize("op,a,b,const", NOT_EXACT)
def test_adding_positive_zero_to_what_may_be_negative_zero_stays(op, a, b, const):
    m = _one(op, a, b, const)
    out, changes = run_pass("remove-neutral", m)
    assert not changes and out is m
    # onnxruntime computes +0.0 there: removing the node would change the bits
    without = _one("Mul", "x", "c", 1.0)
    assert not _bits(m, without, {"x": _signed_zeros((5, 4))})


@pytest.mark.parametrize(
    "op,a,b,const",
    [
        ("Sub", "c", "x", 0.0),
        ("Div", "c", "x", 1.0),
        ("Mul", "x", "c", [1.0, 1.0, 1.0, 2.0]),
        ("Mul", "x", "c", [1.0, 1.0, 1.0, 1.0]),  # a normalization's scale: onnxruntime fuses it
    ],
)
def test_operands_that_are_not_neutral_stay(op, a, b, const):
    _, changes = run_pass("remove-neutral", _one(op, a, b, const))
    assert not changes


def test_a_constant_that_broadcasts_the_result_larger_stays():
    nodes = [h.make_node("Mul", ["x", "c"], ["t"]), h.make_node("Neg", ["t"], ["y"])]
    m = model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [3, "n", 4])],
        [f32("c", np.ones((3, 1, 4)))],
    )
    _, changes = run_pass("remove-neutral", m)
    assert not changes


def test_an_overridable_initializer_is_not_a_constant():
    m = _one("Mul", "x", "c", 1.0)
    m.graph.input.append(h.make_tensor_value_info("c", T.FLOAT, []))
    _, changes = run_pass("remove-neutral", m)
    assert not changes


def _matmul_bias(bias, producer: str = "MatMul", **attrs) -> onnx.ModelProto:
    w = -np.abs(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32))  # x row of zeros: products -0.0
    nodes = [h.make_node(producer, ["x", "w"], ["p"], **attrs), h.make_node("Add", ["p", "b"], ["y"])]
    return model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, [5, 4])],
        [h.make_tensor_value_info("y", T.FLOAT, [5, 3])],
        [f32("w", w), f32("b", bias)],
    )


def test_a_zero_bias_after_matmul_goes_and_the_graph_output_keeps_its_name():
    m = _matmul_bias([0.0, 0.0, 0.0])
    out, changes = run_pass("remove-neutral", m)
    assert changes == {"neutral arithmetic removed": 1}
    assert [(n.op_type, list(n.output)) for n in out.graph.node] == [("MatMul", ["y"])]
    x = _signed_zeros((5, 4))
    x[0], x[1] = 0.0, -0.0  # rows whose every product is -0.0
    assert _bits(m, out, {"x": x})
    # onnxruntime's MatMul gives +0.0 there, which the removed Add would have kept
    y = ort_oracle.run(out, {"x": x})[0]
    assert (y[:2] == 0).all() and not np.signbit(y[:2]).any()


def test_a_zero_bias_after_a_gemm_that_may_give_negative_zero_stays():
    assert run_pass("remove-neutral", _matmul_bias([0.0] * 3, "Gemm"))[1]
    assert not run_pass("remove-neutral", _matmul_bias([0.0] * 3, "Gemm", alpha=-1.0))[1]  # (+0.0) * -1 is -0.0


@pytest.mark.parametrize("name", ["vit_dynamo", "bert_dynamo", "llama_dynamo"])
def test_torch_export_models_lose_their_neutral_arithmetic_with_the_same_bits(name):
    original = onnx.load(str(model_path(name)))
    from shapeinfer.passes import DEFAULT_PASSES

    before, _ = optimize_with_report(original, passes=[p for p in DEFAULT_PASSES if p != "remove-neutral"])
    out, rep = optimize_with_report(original)
    at_least = {"vit_dynamo": 24, "bert_dynamo": 25, "llama_dynamo": 3}[name]
    assert next(p for p in rep.passes if p.name == "remove-neutral").changes["neutral arithmetic removed"] >= at_least
    assert len(out.graph.node) <= len(before.graph.node) - at_least
    feeds = ort_oracle.feeds(original, {"batch": 2, "seq": 7}, seed=1)
    assert _bits(before, out, feeds)  # the neutral arithmetic removed changes no bit
    # (llama_dynamo: onnxruntime prepacks fold-constants' weights and rounds them differently)
    ort_oracle.assert_same_outputs(original, out, feeds, atol=0 if name != "llama_dynamo" else 1e-6)


def test_inside_if_branches_neutral_arithmetic_transpose_pairs_and_expands_go():
    """remove-neutral, merge-transposes and remove-expand run in every branch like the other
    passes; an outer-scope value is never taken for a constant there."""

    def vi(name, rank):
        return h.make_tensor_value_info(name, T.FLOAT, [f"{name}{i}" for i in range(rank)])

    then_g = h.make_graph(
        [
            h.make_node("Mul", ["x", "one"], ["m"]),  # x * 1
            h.make_node("Transpose", ["m"], ["t1"], perm=[1, 0, 2]),
            h.make_node("Transpose", ["t1"], ["t2"], perm=[1, 0, 2]),  # undoes t1
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Expand", ["row", "s"], ["e"]),  # [1, 1, 4] over leading dims
            h.make_node("Add", ["t2", "e"], ["ty"]),
        ],
        "then",
        [],
        [vi("ty", 3)],
        [f32("one", 1.0), f32("row", [[[1.0, 2.0, 3.0, 4.0]]])],
    )
    else_g = h.make_graph([h.make_node("Mul", ["x", "k"], ["ey"])], "else", [], [vi("ey", 3)])  # k: outer input
    m = model_of(
        [h.make_node("If", ["flag"], ["y"], then_branch=then_g, else_branch=else_g)],
        [
            h.make_tensor_value_info("flag", T.BOOL, []),
            h.make_tensor_value_info("x", T.FLOAT, ["a", "b", 4]),
            h.make_tensor_value_info("k", T.FLOAT, []),
        ],
        [vi("y", 3)],
    )
    out, rep = optimize_with_report(m)
    branches = {a.name: [n.op_type for n in a.g.node] for a in out.graph.node[0].attribute}
    assert branches == {"then_branch": ["Add"], "else_branch": ["Mul"]}
    changed = {p.name for p in rep.passes if p.changed}
    assert {"remove-neutral", "merge-transposes", "remove-expand"} <= changed
    x = _signed_zeros((2, 3, 4))
    for flag in (True, False):
        feeds = {"flag": np.array(flag), "x": x, "k": np.array(1.0, dtype=np.float32)}
        assert _bits(m, out, feeds)
