"""Where a declared dim name means something (issue 32).

A name declared inside a subgraph (an If branch, a Loop body, a function body) is a claim about
that one instance: equal names in two branches, two bodies or a body and the main graph are not
the same dim. torchvision's detection exports name the NMS count ``Squeezekeep_dim_0`` inside the
branches of two different If nodes; read as one symbol, the two NMS results are written with
one length and onnxruntime's allocation planner, which trusts equal dims, fails ("Shape mismatch
attempting to re-use buffer"). onnxruntime is the oracle: what ``-o`` writes runs wherever the
original runs, with the same outputs.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from support.written import size_grid, written_problems

import shapeinfer
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

NAME = "Squeezekeep_dim_0"  # the name torchvision's TorchScript export gives both NMS counts


def _i64(name: str, v) -> onnx.TensorProto:
    return nh.from_array(np.array(v, np.int64), name)


def _f32(name: str, v) -> onnx.TensorProto:
    return nh.from_array(np.array(v, np.float32), name)


def _model(nodes, inputs, outputs, inits=(), functions=()) -> onnx.ModelProto:
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [h.make_opsetid("", 17)] + ([h.make_opsetid("local", 1)] if functions else [])
    return h.make_model(g, opset_imports=opsets, ir_version=8, functions=list(functions))


def _selected(i: int, thr: str, name: str | None, in_value_info: bool = False) -> onnx.GraphProto:
    """A branch that keeps the indices of ``x`` above ``thr`` (torchvision's NMS keep list: a
    NonZero, then a Squeeze), declaring the count ``name`` on its output or in value_info."""
    nodes = [
        h.make_node("Greater", ["x", thr], [f"g{i}"]),
        h.make_node("NonZero", [f"g{i}"], [f"nz{i}"]),
        h.make_node("Squeeze", [f"nz{i}", "ax0"], [f"keep{i}"]),
    ]
    value_info = [h.make_tensor_value_info(f"nz{i}", T.INT64, [1, name])] if in_value_info else []
    shape = None if in_value_info else [name]
    out = h.make_tensor_value_info(f"keep{i}", T.INT64, shape)
    return h.make_graph(nodes, f"keep{i}", [], [out], value_info=value_info)


def _empty(i: int) -> onnx.GraphProto:
    """torchvision's other NMS branch: no boxes, an empty keep list."""
    c = h.make_node("Constant", [], [f"e{i}"], value=_i64(f"ev{i}", np.zeros(0)))
    return h.make_graph([c], f"empty{i}", [], [h.make_tensor_value_info(f"e{i}", T.INT64, [0])])


def _consume(nodes: list, keeps: list[str]) -> None:
    """Gather ``x`` at each keep list and compute with the results, so that onnxruntime's
    allocation planner plans buffers by their written dims."""
    for i, k in enumerate(keeps, 1):
        nodes += [
            h.make_node("Gather", ["x", k], [f"y{i}"]),
            h.make_node("Neg", [f"y{i}"], [f"z{i}"]),
            h.make_node("Sigmoid", [f"z{i}"], [f"o{i}"]),
        ]
    nodes += [h.make_node("ReduceSum", ["o1"], ["s1"], keepdims=1), h.make_node("Add", ["o2", "s1"], ["out"])]


_OUTPUTS = [h.make_tensor_value_info("out", T.FLOAT, None), h.make_tensor_value_info("o1", T.FLOAT, None)]
_INITS = [_i64("ax0", [0]), _i64("zero", 0), _f32("hi", 0.5), _f32("lo", -0.5)]


def two_nms_ifs() -> onnx.ModelProto:
    """torchvision's layout: two If nodes on ``numel(x) == 0`` (never true for a symbol, so
    inference takes the else branch), each else branch declaring its keep list [NAME]."""
    nodes = [h.make_node("Size", ["x"], ["n"]), h.make_node("Equal", ["n", "zero"], ["c"])]
    for i, thr in ((1, "hi"), (2, "lo")):
        nodes.append(h.make_node("If", ["c"], [f"k{i}"], then_branch=_empty(i), else_branch=_selected(i, thr, NAME)))
    _consume(nodes, ["k1", "k2"])
    return _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n"])], _OUTPUTS, _INITS)


def sibling_branches() -> onnx.ModelProto:
    """Two If nodes on an input flag, both branches of each keeping a different selection and
    declaring its count K in value_info."""
    nodes = []
    for i, (a, b) in enumerate((("hi", "lo"), ("lo", "hi")), 1):
        then_g, else_g = _selected(10 * i, a, "K", True), _selected(10 * i + 1, b, "K", True)
        nodes.append(h.make_node("If", ["flag"], [f"k{i}"], then_branch=then_g, else_branch=else_g))
    _consume(nodes, ["k1", "k2"])
    inputs = [h.make_tensor_value_info("x", T.FLOAT, ["n"]), h.make_tensor_value_info("flag", T.BOOL, [])]
    return _model(nodes, inputs, _OUTPUTS, _INITS)


GRID = size_grid(["n"], [{"n": 50}, {"n": 200}])


def _flag_feeds(m: onnx.ModelProto, n: int, flag: bool) -> dict:
    feeds = ort_oracle.feeds(m, {"n": n}, seed=n)
    feeds["flag"] = np.array(flag)
    return feeds


def test_a_name_two_if_branches_declare_is_two_dims_and_the_written_model_runs():
    m = two_nms_ifs()
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    (k1,), (k2,) = r.dims("k1"), r.dims("k2")
    assert k1 != k2, "two NMS counts are not one dim"
    assert NAME not in D.symbols(k1) | D.symbols(k2)
    runs, problems = written_problems(m, shapeinfer.infer_shapes(m), GRID)
    assert runs >= 5 and not problems, problems


def test_sibling_branches_declaring_one_name_give_a_join_not_the_name():
    # onnxruntime itself merges the branches' equal names onto both If outputs and fails on this
    # model (a buffer of one selection reused for the other): no oracle run, inference only
    m = sibling_branches()
    r = shapeinfer.infer(m)
    (k1,), (k2,) = r.dims("k1"), r.dims("k2")
    assert k1 != k2 and "K" not in D.symbols(k1) | D.symbols(k2)
    assert D.symbols(k1) <= r.join_symbols and D.symbols(k2) <= r.join_symbols
    for i in (1, 2):  # inside each branch the name is that branch's count
        then_nz = r.graph_facts[f"main/{i - 1}.then_branch"][f"nz{10 * i}"].shape[1]
        else_nz = r.graph_facts[f"main/{i - 1}.else_branch"][f"nz{10 * i + 1}"].shape[1]
        assert then_nz != else_nz and "K" not in D.symbols(then_nz) | D.symbols(else_nz)


def test_a_branch_does_not_share_a_name_with_the_main_graph():
    # the main graph declares its own selection [1, K]; the taken branch declares [K] too
    nodes = [
        h.make_node("Greater", ["x", "zero_f"], ["g0"]),
        h.make_node("NonZero", ["g0"], ["nz0"]),
        h.make_node("Squeeze", ["nz0", "ax0"], ["k0"]),
        h.make_node("Size", ["x"], ["n"]),
        h.make_node("Equal", ["n", "zero"], ["c"]),
        h.make_node("If", ["c"], ["k1"], then_branch=_empty(1), else_branch=_selected(1, "hi", "K")),
        h.make_node("Gather", ["x", "k0"], ["y0"]),
        h.make_node("Gather", ["x", "k1"], ["y1"]),
    ]
    outputs = [h.make_tensor_value_info("y0", T.FLOAT, None), h.make_tensor_value_info("y1", T.FLOAT, None)]
    inits = [*_INITS, _f32("zero_f", 0.0)]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n"])], outputs, inits)
    m.graph.value_info.append(h.make_tensor_value_info("nz0", T.INT64, [1, "K"]))
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    assert r.dims("k0") == (D.sym("K"),)  # the main graph's own claim, assumed (G013)
    (k1,) = r.dims("k1")
    assert "K" not in D.symbols(k1) and k1 != D.sym("K")
    runs, problems = written_problems(m, shapeinfer.infer_shapes(m), GRID)
    assert runs >= 5 and not problems, problems


def test_two_calls_of_a_function_do_not_share_its_declared_names():
    body = [
        h.make_node("Greater", ["a", "t"], ["g"]),
        h.make_node("NonZero", ["g"], ["nz"]),
        h.make_node("Squeeze", ["nz", "ax"], ["k"]),
        h.make_node("Constant", [], ["ax"], value=_i64("axv", [0])),
    ]
    body = [body[3], *body[:3]]
    fn = h.make_function("local", "Keep", ["a", "t"], ["k"], body, [h.make_opsetid("", 17)])
    fn.value_info.append(h.make_tensor_value_info("k", T.INT64, ["K"]))
    nodes = [
        h.make_node("Keep", ["x", "hi"], ["k1"], domain="local"),
        h.make_node("Keep", ["x", "lo"], ["k2"], domain="local"),
    ]
    _consume(nodes, ["k1", "k2"])
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n"])], _OUTPUTS, _INITS, [fn])
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    (k1,), (k2,) = r.dims("k1"), r.dims("k2")
    assert k1 != k2 and "K" not in D.symbols(k1) | D.symbols(k2)
    runs, problems = written_problems(m, shapeinfer.infer_shapes(m), GRID)
    assert runs >= 5 and not problems, problems


def test_within_one_branch_a_name_is_still_one_dim():
    # one branch, two selections both declared [K]: a claim about that branch, assumed there
    then_g = h.make_graph(
        [
            h.make_node("Greater", ["x", "hi"], ["ga"]),
            h.make_node("NonZero", ["ga"], ["na"]),
            h.make_node("Less", ["x", "lo"], ["gb"]),
            h.make_node("NonZero", ["gb"], ["nb"]),
            h.make_node("Concat", ["na", "nb"], ["both"], axis=0),
        ],
        "then",
        [],
        [h.make_tensor_value_info("both", T.INT64, None)],
        value_info=[
            h.make_tensor_value_info("na", T.INT64, [1, "K"]),
            h.make_tensor_value_info("nb", T.INT64, [1, "K"]),
        ],
    )
    nodes = [h.make_node("Size", ["x"], ["n"]), h.make_node("Equal", ["n", "zero"], ["c"])]
    nodes.append(h.make_node("If", ["c"], ["k"], then_branch=_empty_2d(), else_branch=then_g))
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n"])], [h.make_tensor_value_info("k", T.INT64, None)])
    m.graph.initializer.extend(_INITS)
    r = shapeinfer.infer(m)
    inner = r.graph_facts["main/2.else_branch"]
    assert inner["na"].shape == inner["nb"].shape and "K" not in D.symbols(inner["na"].shape[1])
    assert r.dims("k") == (2, inner["na"].shape[1])
    assert any(d.code == "G013" and "this subgraph alone" in d.message for d in r.diagnostics)


def _empty_2d() -> onnx.GraphProto:
    c = h.make_node("Constant", [], ["e"], value=_i64("ev", np.zeros((2, 0))))
    return h.make_graph([c], "empty", [], [h.make_tensor_value_info("e", T.INT64, [2, 0])])


def test_a_declared_int_in_a_branch_binds_no_symbol_of_the_main_graph():
    # the main graph's selection nz0 [1, unk] is read in the taken branch, declared [1, 5] there
    then_g = h.make_graph(
        [h.make_node("Identity", ["nz0"], ["copy"])],
        "then",
        [],
        [h.make_tensor_value_info("copy", T.INT64, [1, 5])],
    )
    nodes = [
        h.make_node("Greater", ["x", "hi"], ["g0"]),
        h.make_node("NonZero", ["g0"], ["nz0"]),
        h.make_node("Size", ["x"], ["n"]),
        h.make_node("Equal", ["n", "zero"], ["c"]),
        h.make_node("If", ["c"], ["k"], then_branch=_empty_2d(), else_branch=then_g),
    ]
    outputs = [h.make_tensor_value_info("k", T.INT64, None), h.make_tensor_value_info("nz0", T.INT64, None)]
    m = _model(nodes, [h.make_tensor_value_info("x", T.FLOAT, ["n"])], outputs, _INITS)
    r = shapeinfer.infer(m)
    assert r.dims("k") == (1, 5)  # the branch's claim about its own output (G013)
    (_, count) = r.dims("nz0")
    assert type(count) is not int and count in {D.sym(s) for s in r.fresh_symbols}
