"""Shape values through float tensors (anchor grids: Range over Cast<float>(Shape)), Slice with a
symbolic step, and an If whose condition the engine's own assumptions decide; checked against
onnxruntime at several bindings."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import shapeinfer
from shapeinfer.analysis.verify import compare
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

pytest.importorskip("onnxruntime")


def _model(nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _check(m: onnx.ModelProto, bindings: list[dict], resolved: list[str]):
    """Every tensor's inferred dims and values agree with onnxruntime; ``resolved`` are exact."""
    r = shapeinfer.infer(m)
    for binding in bindings:
        actual = ort_oracle.run_all(m, ort_oracle.feeds(m, binding))
        for name, a in actual.items():
            reason, unresolved, expected = compare(r.facts.get(name), a, binding)
            assert reason is None, (name, reason, expected, np.asarray(a).shape)
            assert not (unresolved and name in resolved), (name, r.facts.get(name))
    return r


def anchor_grid_model() -> onnx.ModelProto:
    """YOLO-style: Range(0.0, Cast<float>(h), 1.0), Range(0.0, Cast<float>(w), 2.0), a meshgrid
    by Unsqueeze/Expand, and the float dims cast back to int64 for a Reshape."""
    f = lambda name, v: h.make_tensor(name, T.FLOAT, [], [v])  # noqa: E731
    i = lambda name, v: h.make_tensor(name, T.INT64, [len(v)], v)  # noqa: E731
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "two"], ["hd"], axis=0),
        h.make_node("Gather", ["s", "three"], ["wd"], axis=0),
        h.make_node("Cast", ["hd"], ["hf"], to=T.FLOAT),
        h.make_node("Cast", ["wd"], ["wf"], to=T.FLOAT),
        h.make_node("Range", ["zero_f", "hf", "one_f"], ["gy"]),
        h.make_node("Range", ["zero_f", "wf", "two_f"], ["gx"]),
        h.make_node("Unsqueeze", ["gy", "ax1"], ["gy2"]),
        h.make_node("Unsqueeze", ["gx", "ax0"], ["gx2"]),
        h.make_node("Add", ["gy2", "gx2"], ["grid"]),
        h.make_node("Mul", ["hf", "wf"], ["hw_f"]),
        h.make_node("Cast", ["hw_f"], ["hw"], to=T.INT64),
        h.make_node("Unsqueeze", ["hw", "ax0"], ["hw1"]),
        h.make_node("Concat", ["minus1", "hw1"], ["tgt"], axis=0),
        h.make_node("Reshape", ["x", "tgt"], ["flat"]),
    ]
    inits = [
        h.make_tensor("two", T.INT64, [], [2]),
        h.make_tensor("three", T.INT64, [], [3]),
        f("zero_f", 0.0),
        f("one_f", 1.0),
        f("two_f", 2.0),
        i("ax0", [0]),
        i("ax1", [1]),
        i("minus1", [-1]),
    ]
    return _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["b", 3, "h", "w"])],
        [h.make_tensor_value_info("grid", T.FLOAT, None), h.make_tensor_value_info("flat", T.FLOAT, None)],
        inits,
    )


def test_range_over_float_cast_of_a_dim_has_its_length():
    m = anchor_grid_model()
    r = _check(
        m,
        [{"b": 1, "h": 5, "w": 7}, {"b": 2, "h": 8, "w": 4}],
        ["gy", "gx", "grid", "hw", "tgt", "flat"],
    )
    hh, ww = D.sym("h"), D.sym("w")
    assert r.dims("gy") == (hh,)
    assert r.dims("gx") == (D.ceildiv(ww, 2),)
    assert r.dims("grid") == (hh, D.ceildiv(ww, 2))
    assert r.dims("flat") == (D.mul(D.sym("b"), 3), D.mul(hh, ww))
    # the float round trip is an assumption, and it is said
    g009 = [d.message for d in r.diagnostics if d.code == "G009"]
    assert any("|h| <= 16777216" in msg for msg in g009) and any("h*w" in msg for msg in g009)


def test_float16_cast_of_a_dim_keeps_no_value():
    m = _model(
        [h.make_node("Shape", ["x"], ["s"]), h.make_node("Cast", ["s"], ["sf"], to=T.FLOAT16)],
        [h.make_tensor_value_info("x", T.FLOAT, [3, "n"])],
        [h.make_tensor_value_info("sf", T.FLOAT16, [2])],
    )
    r = shapeinfer.infer(m)
    assert r.facts["sf"].value == (3.0, None)
    assert not [d for d in r.diagnostics if d.code == "G009"]


def test_float_value_times_a_fraction_is_unknown_not_an_error():
    m = _model(
        [
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Cast", ["s"], ["sf"], to=T.FLOAT),
            h.make_node("Mul", ["sf", "half"], ["y"]),
        ],
        [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [h.make_tensor_value_info("y", T.FLOAT, [1])],
        [h.make_tensor("half", T.FLOAT, [], [0.5])],
    )
    r = shapeinfer.infer(m)
    assert r.facts["y"].dtype == T.FLOAT and r.facts["y"].shape == (1,) and r.facts["y"].value == (None,)
    assert not [d for d in r.diagnostics if d.code == "E001"]


def test_slice_with_symbolic_step_keeps_untouched_axes_and_rank():
    # steps = [1, k] read from another input's shape: axis 1 steps by k, axis 2 is not sliced
    nodes = [
        h.make_node("Shape", ["k_src"], ["k"]),
        h.make_node("Concat", ["one", "k"], ["steps"], axis=0),
        h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"]),
        h.make_node("Shape", ["x"], ["xs"]),
        h.make_node("Slice", ["x", "starts1", "ends1", "axes1", "xs_steps"], ["z"]),
        h.make_node("Gather", ["xs", "one"], ["xs_sub"], axis=0),
        h.make_node("Concat", ["one", "xs_sub"], ["xs_steps"], axis=0),
    ]
    inits = [
        h.make_tensor("one", T.INT64, [1], [1]),
        h.make_tensor("starts", T.INT64, [2], [0, 1]),
        h.make_tensor("ends", T.INT64, [2], [2**62, 2**62]),
        h.make_tensor("axes", T.INT64, [2], [0, 1]),
        h.make_tensor("starts1", T.INT64, [2], [0, 0]),
        h.make_tensor("ends1", T.INT64, [2], [2**62, 2**62]),
        h.make_tensor("axes1", T.INT64, [2], [2, 1]),
    ]
    m = _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["a", "b", "c"]), h.make_tensor_value_info("k_src", T.FLOAT, ["k"])],
        [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("z", T.FLOAT, None)],
        inits,
    )
    # ORT: the symbolic step must be positive; z's step is x's dim b
    r = _check(m, [{"a": 3, "b": 7, "c": 4, "k": 2}, {"a": 2, "b": 5, "c": 6, "k": 3}], ["y", "z"])
    a, b, c, k = (D.sym(s) for s in "abck")
    assert r.dims("y") == (a, D.dmax(0, D.ceildiv(D.sub(b, 1), k)), c)
    assert r.dims("z") == (a, 1, c)


def test_slice_with_unknown_step_values_keeps_untouched_axes_and_rank():
    nodes = [
        h.make_node("ReduceMax", ["st_src"], ["st_f"], keepdims=0),
        h.make_node("Cast", ["st_f"], ["st_i"], to=T.INT64),
        h.make_node("Unsqueeze", ["st_i", "zero_ax"], ["st"]),
        h.make_node("Abs", ["st"], ["st_abs"]),
        h.make_node("Add", ["st_abs", "one"], ["step"]),
        h.make_node("Concat", ["one", "step"], ["steps"], axis=0),
        h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"]),
    ]
    inits = [
        h.make_tensor("one", T.INT64, [1], [1]),
        h.make_tensor("zero_ax", T.INT64, [1], [0]),
        h.make_tensor("starts", T.INT64, [2], [0, 0]),
        h.make_tensor("ends", T.INT64, [2], [2**62, 2**62]),
        h.make_tensor("axes", T.INT64, [2], [0, 2]),
    ]
    m = _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["a", "b", "c"]), h.make_tensor_value_info("st_src", T.FLOAT, [3])],
        [h.make_tensor_value_info("y", T.FLOAT, None)],
        inits,
    )
    r = _check(m, [{"a": 3, "b": 7, "c": 4}], [])
    a, b = D.sym("a"), D.sym("b")
    y = r.dims("y")
    assert y is not None and len(y) == 3 and y[0] == a and y[1] == b


def test_if_with_differing_ranks_decided_by_an_assumed_equality():
    then = h.make_graph(
        [h.make_node("Squeeze", ["x", "ax0"], ["sq"])],
        "then",
        [],
        [h.make_tensor_value_info("sq", T.FLOAT, None)],
        [h.make_tensor("ax0", T.INT64, [1], [0])],
    )
    other = h.make_graph(
        [h.make_node("Identity", ["x"], ["id"])], "else", [], [h.make_tensor_value_info("id", T.FLOAT, None)]
    )
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        h.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
        h.make_node("Equal", ["d0", "one"], ["cond"]),
        # a fixed-size state concatenated with x: the engine assumes batch == 1 (G003)
        h.make_node("Concat", ["x", "state"], ["both"], axis=1),
        h.make_node("If", ["cond"], ["r"], then_branch=then, else_branch=other),
    ]
    m = _model(
        nodes,
        [h.make_tensor_value_info("x", T.FLOAT, ["batch", 4]), h.make_tensor_value_info("state", T.FLOAT, [1, 3])],
        [h.make_tensor_value_info("r", T.FLOAT, None), h.make_tensor_value_info("both", T.FLOAT, None)],
        [h.make_tensor("zero", T.INT64, [], [0]), h.make_tensor("one", T.INT64, [], [1])],
    )
    r = _check(m, [{"batch": 1}], ["r", "both"])
    assert r.dims("r") == (4,)
    codes = [(d.code, d.severity) for d in r.diagnostics]
    assert ("G003", "warning") in codes and ("G003", "info") in codes
    # without the assumption the condition stays open and the rank unknown, as before
    del m.graph.node[3]
    del m.graph.output[1]
    assert shapeinfer.infer(m).dims("r") is None
