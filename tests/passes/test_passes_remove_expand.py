"""remove-expand: Expands that broadcasting readers make redundant go, with the same bits."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper
from support.common import model_path
from support.pass_helpers import i64, model_of, run_pass, vo

from shapeinfer.passes import DEFAULT_PASSES, optimize_with_report
from shapeinfer.passes.remove_expand import broadcast
from testkit import ort_oracle

pytest.importorskip("onnxruntime")


def f32(name: str, arr) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def _bits(a: onnx.ModelProto, b: onnx.ModelProto, feeds: dict) -> None:
    for u, v in zip(ort_oracle.run(a, feeds), ort_oracle.run(b, feeds)):
        assert u.shape == v.shape and u.tobytes() == v.tobytes()


def _expand_add(c_shape, target, x_dims, c_const: bool = True, reader: str = "Add") -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Expand", ["c", "s"], ["t"])]
    nodes.append(h.make_node(reader, ["x", "t"] if reader != "Relu" else ["t"], ["y"]))
    inputs = [h.make_tensor_value_info("x", T.FLOAT, x_dims)]
    inits = []
    if c_const:
        inits.append(f32("c", rng.standard_normal(c_shape)))
    else:
        inputs.append(h.make_tensor_value_info("c", T.FLOAT, c_shape))
    if target is not None:  # an explicit target instead of Shape(x)
        nodes[0] = h.make_node("Identity", ["target"], ["s"])
        inits.append(i64("target", target))
    return model_of(nodes, inputs, [vo("y", T.FLOAT, len(x_dims))], inits)


def _feeds(m: onnx.ModelProto, n: int = 3) -> dict:
    return ort_oracle.feeds(m, {"n": n}, seed=2)


def test_broadcast_of_symbolic_dims():
    assert broadcast([(1, 4), ("n", 1)]) == ("n", 4)
    assert broadcast([("n", 4), (4,)]) == ("n", 4)
    assert broadcast([("n",), (3,)]) is None  # n could be 1 or 3
    assert broadcast([("n",), ("m",)]) is None


def test_an_expand_over_leading_dims_goes():
    m = _expand_add([1, 4], None, ["n", 4])
    out, changes = run_pass("remove-expand", m)
    assert changes["expands removed"] == 1
    out, _ = run_pass("dce", out)
    assert [n.op_type for n in out.graph.node] == ["Add"] and list(out.graph.node[0].input) == ["x", "c"]
    _bits(m, out, _feeds(m))


def test_a_constant_expanded_over_inner_dims_is_stored_expanded_over_them():
    # Add reading a [4, 1] constant broadcasts it element by element in onnxruntime (slow):
    # it reads the constant expanded to [1, 4, 5] instead
    m = _expand_add([4, 1], None, ["n", 4, 5])
    out, changes = run_pass("remove-expand", m)
    assert changes["expands removed"] == 1
    out, _ = run_pass("dce", out)
    assert [n.op_type for n in out.graph.node] == ["Add"]
    stored = {t.name: numpy_helper.to_array(t) for t in out.graph.initializer}
    assert stored[out.graph.node[0].input[1]].shape == (1, 4, 5)
    _bits(m, out, _feeds(m))


def test_a_runtime_value_expanded_over_inner_dims_stays():
    m = _expand_add(["n", 4, 1], None, ["n", 4, 5], c_const=False)
    assert not run_pass("remove-expand", m)[1]


@pytest.mark.parametrize("reader", ["Relu", "MatMul"])
def test_an_expand_read_by_an_op_that_does_not_broadcast_stays(reader):
    m = _expand_add([1, 4], None, ["n", 4], reader=reader) if reader == "Relu" else None
    if m is None:
        nodes = [h.make_node("Expand", ["c", "s"], ["t"]), h.make_node("MatMul", ["x", "t"], ["y"])]
        m = model_of(
            nodes,
            [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
            [vo("y", T.FLOAT, 2)],
            [f32("c", np.ones((1, 4))), i64("s", [4, 4])],
        )
    assert not run_pass("remove-expand", m)[1]


def test_an_expand_that_sets_the_readers_dims_stays():
    m = _expand_add([1, 4], [6, 4], [1, 4])  # x is [1, 4]: the Expand makes y [6, 4]
    m.graph.output[0].CopyFrom(vo("y", T.FLOAT, 2))
    assert not run_pass("remove-expand", m)[1]


def test_a_constant_operation_of_an_expanded_constant_folds_and_the_expand_goes():
    # Where(Expand(mask [1, 1, 4, 1] -> [n, 1, 4, 4]), 0, -inf) + scores: the attention mask of vit_dynamo
    rng = np.random.default_rng(0)
    nodes = [
        h.make_node("Shape", ["x"], ["n1"], start=0, end=1),
        h.make_node("Concat", ["n1", "rest"], ["s"], axis=0),
        h.make_node("Expand", ["mask", "s"], ["t"]),
        h.make_node("Where", ["t", "zero", "ninf"], ["w"]),
        h.make_node("Add", ["x", "w"], ["y"]),
    ]
    m = model_of(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["n", 2, 4, 4])],
        [vo("y", T.FLOAT, 4)],
        [
            numpy_helper.from_array(rng.random((1, 1, 4, 1)) > 0.5, "mask"),
            i64("rest", [1, 4, 4]),
            f32("zero", 0.0),
            f32("ninf", -np.inf),
        ],
    )
    out, changes = run_pass("remove-expand", m)
    assert changes["expands moved after constant operations"] == 1
    _bits(m, out, _feeds(m))
    out, _ = optimize_with_report(m)
    assert [n.op_type for n in out.graph.node] == ["Add"]
    _bits(m, out, _feeds(m))


def test_vit_attention_mask_expand_goes_with_the_same_bits():
    original = onnx.load(str(model_path("vit_dynamo")))
    before, _ = optimize_with_report(original, passes=[p for p in DEFAULT_PASSES if p != "remove-expand"])
    out, rep = optimize_with_report(original)
    ch = next(p for p in rep.passes if p.name == "remove-expand").changes
    assert ch["expands removed"] == 1 and ch["expands moved after constant operations"] == 1
    ops = lambda m: [n.op_type for n in m.graph.node]  # noqa: E731
    assert ops(out).count("Expand") == ops(before).count("Expand") - 1
    assert ops(out).count("Where") == ops(before).count("Where") - 1
    assert len(out.graph.node) == len(before.graph.node) - 3  # Expand, its target's Concat, Where
    feeds = ort_oracle.feeds(original, {"batch": 3}, seed=1)
    _bits(original, out, feeds)


def test_an_expand_read_only_inside_a_branch_is_handled_in_place():
    """The Expand's only reader is a Where in an If branch (an outer-scope read): it is never
    moved into the main graph's order, and the branch computes the same values."""
    branch = h.make_graph(
        [h.make_node("Where", ["t", "zero", "ninf"], ["w"]), h.make_node("Add", ["x", "w"], ["y1"])],
        "then",
        [],
        [vo("y1", T.FLOAT, 2)],
    )
    other = h.make_graph([h.make_node("Identity", ["x"], ["y2"])], "else", [], [vo("y2", T.FLOAT, 2)])
    m = model_of(
        [
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Expand", ["mask", "s"], ["t"]),
            h.make_node("If", ["flag"], ["y"], then_branch=branch, else_branch=other),
        ],
        [h.make_tensor_value_info("flag", T.BOOL, []), h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
        [vo("y", T.FLOAT, 2)],
        [
            numpy_helper.from_array(np.array([[True, False, True, False]]), "mask"),
            f32("zero", 0.0),
            f32("ninf", -np.inf),
        ],
    )
    out, _ = run_pass("remove-expand", m)
    out, _ = optimize_with_report(m)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    for flag in (True, False):
        _bits(m, out, {"flag": np.array(flag), "x": x})
