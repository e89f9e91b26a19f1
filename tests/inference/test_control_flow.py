"""If / Loop / Scan, sequences and optionals: inferred facts checked against onnxruntime's actual
outputs on models built with onnx.helper, and against the onnx node conformance cases' expected
outputs. The comparison is :func:`shapeinfer.analysis.verify.compare`: a dim over the input symbols must
evaluate to the actual one; a fresh symbol is "unresolved" (allowed where the shape truly depends
on data, asserted resolved where it does not)."""

from __future__ import annotations

import copy

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.analysis.verify import compare
from shapeinfer.io.annotate import annotate
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
n, m, k = D.sym("n"), D.sym("m"), D.sym("k")


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name + "_v"))


def model(nodes, inputs, outputs, opset=17, initializer=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializer))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def run_ort(mdl: onnx.ModelProto, feeds: dict) -> dict:
    """Every main-graph node output's actual value."""
    return ort_oracle.run_all(mdl, feeds)


def check_against_ort(mdl, feeds, binding, must_resolve=()):
    """No tensor disagrees with ORT; the tensors in ``must_resolve`` are fully resolved."""
    r = shapeinfer.infer(mdl)
    actual = run_ort(mdl, feeds)
    unresolved = set()
    for name, a in actual.items():
        reason, unres, expected = compare(r.facts.get(name), a, binding)
        assert reason is None, (name, reason, expected, a if isinstance(a, list) else np.asarray(a).shape)
        if unres:
            unresolved.add(name)
    assert not (unresolved & set(must_resolve)), unresolved & set(must_resolve)
    return r, actual


def dims(r, name):
    return r.facts[name].shape


def is_fresh(r, d) -> bool:
    return isinstance(d, D.Expr) and bool(D.symbols(d)) and not D.symbols(d) <= r.input_symbols


# ------------------------------------------------------------------------------ If


def _branches_model(cond_node=None):
    """then: Concat(x, x) on axis 0 -> [2n, m]; else: Relu(x) -> [n, m]."""
    then_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["t"], axis=0)], "then", [], [vi("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Relu", ["x"], ["e"])], "else", [], [vi("e", F, None)])
    nodes = [cond_node] if cond_node is not None else []
    nodes.append(helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g))
    nodes.append(helper.make_node("Shape", ["y"], ["ys"]))
    inputs = [vi("x", F, ["n", "m"])]
    if cond_node is None:
        inputs.append(vi("c", B, []))
    return model(nodes, inputs, [vi("y", F, None)])


def test_if_merges_branches_equal_dims_stay_differing_dims_fresh():
    mdl = _branches_model()
    x = np.zeros((3, 4), np.float32)
    for c in (True, False):
        r, actual = check_against_ort(mdl, {"x": x, "c": np.array(c)}, {"n": 3, "m": 4})
        assert actual["y"].shape == ((6, 4) if c else (3, 4))
    y = dims(r, "y")
    assert len(y) == 2 and y[1] == m and is_fresh(r, y[0])


def test_if_with_known_condition_takes_that_branch_exactly():
    for value, expected in ((True, (2 * n, m)), (False, (n, m))):
        mdl = _branches_model(const("c", np.array(value)))
        binding = {"n": 5, "m": 2}
        r, actual = check_against_ort(mdl, {"x": np.zeros((5, 2), np.float32)}, binding, must_resolve=["y", "ys"])
        assert actual["y"].shape == ((10, 2) if value else (5, 2))
        assert dims(r, "y") == expected
        assert r.facts["ys"].value == expected
        assert not r.fresh_symbols


def test_if_branch_equalities_do_not_leak_into_the_model():
    """then-branch Add(x[n], y[k]) needs n == k only when taken; the rest of the model keeps k."""
    then_g = helper.make_graph([helper.make_node("Add", ["x", "z"], ["t"])], "then", [], [vi("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e", F, None)])
    mdl = model(
        [
            helper.make_node("If", ["c"], ["o"], then_branch=then_g, else_branch=else_g),
            helper.make_node("Relu", ["z"], ["w"]),
            helper.make_node("Relu", ["x"], ["v"]),
        ],
        [vi("x", F, ["n"]), vi("z", F, ["k"]), vi("c", B, [])],
        [vi("o", F, None), vi("w", F, None), vi("v", F, None)],
    )
    feeds = {"x": np.zeros(3, np.float32), "z": np.zeros(5, np.float32), "c": np.array(False)}
    r, _ = check_against_ort(mdl, feeds, {"n": 3, "k": 5}, must_resolve=["w", "v"])
    assert dims(r, "w") == (k,) and dims(r, "v") == (n,)
    assert not r.substitution
    # inside the then-branch n and k broadcast: either may be 1, so the sum has the larger size
    then_facts = r.graph_facts["main/0.then_branch"]
    assert then_facts["t"].shape == (D.dmax(n, k),)


def test_if_annotations_written_into_branches():
    then_g = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["t1"], axis=1), helper.make_node("Relu", ["t1"], ["t2"])],
        "then",
        [],
        [vi("t2", F, None)],
    )
    else_g = helper.make_graph(
        [helper.make_node("Concat", ["x", "x"], ["e1"], axis=1), helper.make_node("Sigmoid", ["e1"], ["e2"])],
        "else",
        [],
        [vi("e2", F, None)],
    )
    mdl = model(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        [vi("x", F, ["n", "m"]), vi("c", B, [])],
        [vi("y", F, None)],
    )
    out = shapeinfer.infer_shapes(mdl)
    g = out.graph.node[0].attribute
    branches = {a.name: a.g for a in g}
    for attr, inner, res in (("then_branch", "t1", "t2"), ("else_branch", "e1", "e2")):
        sub = branches[attr]
        names = {v.name: v for v in sub.value_info}
        assert set(names) == {inner}  # the outer x is not redeclared inside
        d = names[inner].type.tensor_type.shape.dim
        assert [x.dim_param or x.dim_value for x in d] == ["n", "2*m"]
        od = sub.output[0].type.tensor_type.shape.dim
        assert sub.output[0].name == res and [x.dim_param or x.dim_value for x in od] == ["n", "2*m"]
    yd = out.graph.output[0].type.tensor_type.shape.dim
    assert [x.dim_param or x.dim_value for x in yd] == ["n", "2*m"]
    onnx.checker.check_model(out, full_check=True)
    actual = run_ort(out, {"x": np.zeros((2, 3), np.float32), "c": np.array(True)})
    assert actual["y"].shape == (2, 6)


# ------------------------------------------------------------------------------ Loop


def _loop_body(nodes, inputs, outputs, initializer=()):
    return helper.make_graph(nodes, "body", inputs, outputs, initializer=list(initializer))


def test_loop_for_trip_count_from_a_shape():
    """M = x.shape[0] (symbolic n), no condition: scan outputs stack n items; carried [m] stays [m]."""
    body = _loop_body(
        [
            helper.make_node("Gather", ["x", "i"], ["row"], axis=0),
            helper.make_node("Add", ["acc_in", "row"], ["acc_out"]),
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            helper.make_node("Unsqueeze", ["acc_out", "zero"], ["snap"]),
            helper.make_node("MatMul", ["acc_out", "w"], ["proj"]),
        ],
        [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, None)],
        [vi("c_out", B, []), vi("acc_out", F, None), vi("snap", F, None), vi("proj", F, None)],
        initializer=[numpy_helper.from_array(np.array([0], np.int64), "zero")],
    )
    mdl = model(
        [
            helper.make_node("Shape", ["x"], ["xs"]),
            helper.make_node("Gather", ["xs", "idx0"], ["trip"], axis=0),
            helper.make_node("Loop", ["trip", "", "acc0"], ["acc", "snaps", "projs"], body=body),
        ],
        [vi("x", F, ["n", "m"]), vi("acc0", F, ["m"]), vi("w", F, ["m", "k"])],
        [vi("acc", F, None), vi("snaps", F, None), vi("projs", F, None)],
        initializer=[numpy_helper.from_array(np.array(0, np.int64), "idx0")],
    )
    for nv, mv, kv in ((3, 4, 2), (5, 2, 6)):
        feeds = {
            "x": np.ones((nv, mv), np.float32),
            "acc0": np.zeros(mv, np.float32),
            "w": np.ones((mv, kv), np.float32),
        }
        r, actual = check_against_ort(mdl, feeds, {"n": nv, "m": mv, "k": kv}, ["acc", "snaps", "projs"])
        assert actual["snaps"].shape == (nv, 1, mv)
    assert dims(r, "acc") == (m,)
    assert dims(r, "snaps") == (n, 1, m)
    assert dims(r, "projs") == (n, k)
    # the body was annotated with its own tensors, not with the outer x or w
    body = annotate(r).graph.node[2].attribute[0].g
    body_vi = {v.name: v for v in body.value_info}
    assert set(body_vi) == {"row"} and [d.dim_param for d in body_vi["row"].type.tensor_type.shape.dim] == ["m"]
    outs = {v.name: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim] for v in body.output[1:]}
    assert outs == {"acc_out": ["m"], "snap": [1, "m"], "proj": ["k"]}


def test_loop_carried_value_that_grows_becomes_fresh_and_scan_uses_known_trip_count():
    body = _loop_body(
        [
            helper.make_node("Concat", ["y_in", "one"], ["y_out"], axis=0),
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            helper.make_node("Concat", ["one", "one"], ["pair"], axis=0),
        ],
        [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, None)],
        [vi("c_out", B, []), vi("y_out", F, None), vi("pair", F, None)],
        initializer=[numpy_helper.from_array(np.array([1.0], np.float32), "one")],
    )
    mdl = model(
        [
            const("M", np.array(4, np.int64)),
            const("cond", np.array(True)),
            helper.make_node("Loop", ["M", "cond", "y0"], ["y", "pairs"], body=body),
        ],
        [vi("y0", F, ["n"])],
        [vi("y", F, None), vi("pairs", F, None)],
    )
    r, actual = check_against_ort(mdl, {"y0": np.zeros(3, np.float32)}, {"n": 3}, must_resolve=["pairs"])
    assert actual["y"].shape == (7,)
    assert dims(r, "pairs") == (4, 2)
    (yd,) = dims(r, "y")
    assert is_fresh(r, yd)


def test_while_loop_trip_count_is_fresh():
    body = _loop_body(
        [
            helper.make_node("Less", ["i", "three"], ["c_out"]),
            helper.make_node("Relu", ["v_in"], ["v_out"]),
            helper.make_node("Identity", ["v_out"], ["s"]),
        ],
        [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, None)],
        [vi("c_out", B, []), vi("v_out", F, None), vi("s", F, None)],
        initializer=[numpy_helper.from_array(np.array(3, np.int64), "three")],
    )
    mdl = model(
        [helper.make_node("Loop", ["", "c0", "v0"], ["v", "ss"], body=body)],
        [vi("c0", B, []), vi("v0", F, ["n", 2])],
        [vi("v", F, None), vi("ss", F, None)],
    )
    r, actual = check_against_ort(mdl, {"c0": np.array(True), "v0": np.zeros((5, 2), np.float32)}, {"n": 5}, ["v"])
    assert actual["ss"].shape == (4, 5, 2)
    assert dims(r, "v") == (n, 2)
    # c0 false: no iteration, and onnxruntime's empty scan output has the rank of the body
    # output's declared shape, here none: [0]. So the rank is not known (it was [unk, n, 2])
    _, actual = check_against_ort(mdl, {"c0": np.array(False), "v0": np.zeros((5, 2), np.float32)}, {"n": 5}, ["v"])
    assert actual["ss"].shape == (0,)
    assert dims(r, "ss") is None


def test_loop_body_runs_only_with_its_condition_true():
    """An If on the body's condition input: only the then-branch can run inside the loop."""
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", F, None)])
    else_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["e"], axis=0)], "else", [], [vi("e", F, None)])
    body = _loop_body(
        [
            helper.make_node("If", ["c_in"], ["picked"], then_branch=then_g, else_branch=else_g),
            helper.make_node("Less", ["i", "two"], ["c_out"]),
        ],
        [vi("i", I64, []), vi("c_in", B, [])],
        [vi("c_out", B, []), vi("picked", F, None)],
        initializer=[numpy_helper.from_array(np.array(2, np.int64), "two")],
    )
    mdl = model(
        [helper.make_node("Loop", ["", "c0"], ["picks"], body=body)],
        [vi("c0", B, []), vi("x", F, ["n"])],
        [vi("picks", F, None)],
    )
    feeds = {"c0": np.array(True), "x": np.zeros(4, np.float32)}
    r, actual = check_against_ort(mdl, feeds, {"n": 4})
    assert actual["picks"].shape == (3, 4)
    # the then-branch's [n] is what an iteration stacks (not the else-branch's [2n]); with c0
    # false there is no iteration and the rank is onnxruntime's own (the body declares none)
    body_out = r.graph_facts["main/0.body"]["picked"]
    assert body_out.shape == (n,)
    _, actual = check_against_ort(mdl, {"c0": np.array(False), "x": np.zeros(4, np.float32)}, {"n": 4})
    assert actual["picks"].shape[0] == 0
    assert dims(r, "picks") is None


def test_loop_fixpoint_is_bounded_when_rank_keeps_changing():
    body = _loop_body(
        [
            helper.make_node("Unsqueeze", ["y_in", "zero"], ["y_out"]),
            helper.make_node("Identity", ["c_in"], ["c_out"]),
        ],
        [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, None)],
        [vi("c_out", B, []), vi("y_out", F, None)],
        initializer=[numpy_helper.from_array(np.array([0], np.int64), "zero")],
    )
    mdl = model(
        [helper.make_node("Loop", ["M", "", "y0"], ["y"], body=body)],
        [vi("M", I64, []), vi("y0", F, ["n"])],
        [vi("y", F, None)],
    )
    r, actual = check_against_ort(mdl, {"M": np.array(3, np.int64), "y0": np.zeros(2, np.float32)}, {"n": 2})
    assert actual["y"].shape == (1, 1, 1, 2)
    assert r.facts["y"].shape is None and r.facts["y"].dtype == F


# ------------------------------------------------------------------------------ Scan


def test_scan11_axes_and_directions():
    """x[b, t, d] scanned on axis 1 (reversed); scan output stacked on the last axis."""
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "xt"], ["s_out"]),
            helper.make_node("Identity", ["s_out"], ["o"]),
        ],
        "body",
        [vi("s_in", F, None), vi("xt", F, None)],
        [vi("s_out", F, None), vi("o", F, None)],
    )
    mdl = model(
        [
            helper.make_node(
                "Scan",
                ["s0", "x"],
                ["s", "os"],
                body=body,
                num_scan_inputs=1,
                scan_input_axes=[1],
                scan_input_directions=[1],
                scan_output_axes=[-1],
            )
        ],
        [vi("s0", F, ["b", "d"]), vi("x", F, ["b", "t", "d"])],
        [vi("s", F, None), vi("os", F, None)],
    )
    for bv, tv, dv in ((2, 5, 3), (4, 1, 6)):
        feeds = {"s0": np.zeros((bv, dv), np.float32), "x": np.ones((bv, tv, dv), np.float32)}
        r, actual = check_against_ort(mdl, feeds, {"b": bv, "t": tv, "d": dv}, ["s", "os"])
        assert actual["os"].shape == (bv, dv, tv)
    b, t, d = D.sym("b"), D.sym("t"), D.sym("d")
    assert dims(r, "s") == (b, d) and dims(r, "os") == (b, d, t)


def test_scan8_batch_axis():
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xt"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["o"])],
        "body",
        [vi("s_in", F, [3]), vi("xt", F, [3])],
        [vi("s_out", F, [3]), vi("o", F, [3])],
    )
    mdl = model(
        [helper.make_node("Scan", ["", "s0", "x"], ["s", "os"], body=body, num_scan_inputs=1)],
        [vi("s0", F, ["b", 3]), vi("x", F, ["b", "t", 3])],
        [vi("s", F, None), vi("os", F, None)],
        opset=8,
    )
    mdl.ir_version = 4
    feeds = {"s0": np.zeros((2, 3), np.float32), "x": np.ones((2, 5, 3), np.float32)}
    r, _ = check_against_ort(mdl, feeds, {"b": 2, "t": 5}, ["s", "os"])
    b, t = D.sym("b"), D.sym("t")
    assert dims(r, "s") == (b, 3) and dims(r, "os") == (b, t, 3)


# ------------------------------------------------------------------------------ sequences and optionals


def test_sequence_ops_against_onnxruntime():
    nodes = [
        const("two", np.array(2, np.int64)),
        const("zero", np.array(0, np.int64)),
        helper.make_node("SplitToSequence", ["x", "two"], ["chunks"], axis=1),  # [n, 2] each
        helper.make_node("SequenceAt", ["chunks", "zero"], ["first"]),
        helper.make_node("SequenceLength", ["chunks"], ["count"]),
        helper.make_node("ConcatFromSequence", ["chunks"], ["joined"], axis=0),  # [3n, 2]
        helper.make_node("ConcatFromSequence", ["chunks"], ["stacked"], axis=1, new_axis=1),  # [n, 3, 2]
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
        helper.make_node("SequenceInsert", ["empty", "x"], ["just_x"]),
        helper.make_node("SequenceAt", ["just_x", "zero"], ["x_again"]),
        helper.make_node("SequenceInsert", ["chunks", "x"], ["mixed"]),  # [n, 2] and [n, 6]
        helper.make_node("SequenceAt", ["mixed", "zero"], ["some"]),
        helper.make_node("SequenceConstruct", ["x", "x"], ["pair"]),
        helper.make_node("SequenceErase", ["pair"], ["one_left"]),
        helper.make_node("SequenceAt", ["one_left", "zero"], ["x_third"]),
        helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),  # [6] each
        helper.make_node("SequenceAt", ["rows", "zero"], ["row"]),
    ]
    mdl = model(nodes, [vi("x", F, ["n", 6])], [vi("first", F, None)])
    for nv in (2, 5):
        r, actual = check_against_ort(
            mdl,
            {"x": np.ones((nv, 6), np.float32)},
            {"n": nv},
            must_resolve=["first", "x_again", "x_third", "row", "count", "chunks"],
        )
        assert actual["joined"].shape == (3 * nv, 2) and actual["stacked"].shape == (nv, 3, 2)
    assert dims(r, "first") == (n, 2)
    assert dims(r, "x_again") == (n, 6) and dims(r, "x_third") == (n, 6)
    assert dims(r, "row") == (6,)
    assert dims(r, "count") == ()
    j0, j1 = dims(r, "joined")
    assert is_fresh(r, j0) and j1 == 2
    s0, s1, s2 = dims(r, "stacked")
    assert s0 == n and is_fresh(r, s1) and s2 == 2
    some = dims(r, "some")
    assert some[0] == n and is_fresh(r, some[1])
    assert r.facts["empty"].kind == "sequence" and r.facts["mixed"].elem.shape == some


def test_optionals_against_onnxruntime():
    nodes = [
        helper.make_node("Optional", ["x"], ["opt"]),
        helper.make_node("OptionalHasElement", ["opt"], ["has"]),
        helper.make_node("OptionalGetElement", ["opt"], ["back"]),
        helper.make_node("Shape", ["back"], ["back_shape"]),
    ]
    mdl = model(nodes, [vi("x", F, ["n", 3])], [vi("back", F, None)], opset=18)
    r, _ = check_against_ort(mdl, {"x": np.zeros((4, 3), np.float32)}, {"n": 4}, ["back", "has", "back_shape"])
    assert dims(r, "back") == (n, 3) and r.facts["back_shape"].value == (n, 3)
    assert r.facts["opt"].kind == "optional"


def test_sequence_in_loop_reaches_a_fixpoint_from_empty():
    """Loop inserting [1, d] rows into an empty sequence: the element fact is exactly [1, d]."""
    body = _loop_body(
        [
            helper.make_node("Identity", ["c_in"], ["c_out"]),
            helper.make_node("SequenceInsert", ["s_in", "row"], ["s_out"]),
        ],
        [vi("i", I64, []), vi("c_in", B, []), helper.make_tensor_sequence_value_info("s_in", F, None)],
        [vi("c_out", B, []), helper.make_tensor_sequence_value_info("s_out", F, None)],
    )
    mdl = model(
        [
            helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
            helper.make_node("Loop", ["M", "", "e"], ["s"], body=body),
            helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0),
        ],
        [vi("M", I64, []), vi("row", F, [1, "d"])],
        [vi("cat", F, None)],
    )
    r, actual = check_against_ort(mdl, {"M": np.array(3, np.int64), "row": np.zeros((1, 4), np.float32)}, {"d": 4})
    assert actual["cat"].shape == (3, 4)
    assert r.facts["s"].elem.shape == (1, D.sym("d"))
    c0, c1 = dims(r, "cat")
    assert is_fresh(r, c0) and c1 == D.sym("d")


# ------------------------------------------------------------------------------ onnx conformance cases

CONFORMANCE_PREFIXES = (
    "test_if",
    "test_loop",
    "test_scan",
    "test_sequence_",
    "test_split_to_sequence",
    "test_optional_",
    "test_identity_sequence",
    "test_identity_opt",
)

# Cases where every output shape follows from the declared inputs: no unresolved dim allowed.
FULLY_DETERMINED = {
    "test_if",
    "test_if_seq",
    "test_if_opt",
    "test_scan_sum",
    "test_scan9_sum",
    "test_scan9_multi_state",
    "test_scan9_scalar",
    "test_optional_get_element_tensor",
    "test_optional_get_element_sequence",
    "test_optional_get_element_optional_tensor",
    "test_optional_get_element_optional_sequence",
    "test_optional_has_element_tensor_input",
    "test_optional_has_element_optional_input",
    "test_optional_has_element_empty_optional_input",
    "test_sequence_map_extract_shapes",
}


def _conformance_cases():
    from onnx.backend.test.case.node import collect_testcases

    return [
        c
        for c in collect_testcases()
        if c.name.startswith(CONFORMANCE_PREFIXES) and c.model is not None and c.data_sets
    ]


def _stripped(mdl):
    mm = copy.deepcopy(mdl)
    del mm.graph.value_info[:]
    for o in mm.graph.output:
        o.type.ClearField("tensor_type") if o.type.HasField("tensor_type") else None
    return mm


def _symbolized(mdl):
    """Input tensor dims > 1 become symbols named after their value, as in the eval harness."""
    mm = copy.deepcopy(mdl)
    binding = {}

    def visit(tp):
        which = tp.WhichOneof("value")
        if which == "tensor_type":
            for dd in tp.tensor_type.shape.dim:
                if dd.HasField("dim_value") and dd.dim_value > 1:
                    v = dd.dim_value
                    dd.dim_param = f"d{v}"
                    binding[f"d{v}"] = v
        elif which == "sequence_type":
            visit(tp.sequence_type.elem_type)
        elif which == "optional_type":
            visit(tp.optional_type.elem_type)

    for v in mm.graph.input:
        visit(v.type)
    return mm, binding


@pytest.mark.parametrize("case", _conformance_cases(), ids=lambda c: c.name)
def test_conformance_case(case):
    _, expected = case.data_sets[0]
    variants = [(_stripped(case.model), {})]
    sym, binding = _symbolized(case.model)
    if binding:
        variants.append((_stripped(sym), binding))
    for mdl, b in variants:
        r = shapeinfer.infer(mdl)
        assert not [d for d in r.diagnostics if d.severity == "error"], r.diagnostics
        for out, arr in zip(mdl.graph.output, expected):
            reason, unresolved, exp = compare(r.facts.get(out.name), arr, b)
            assert reason is None, (out.name, reason, exp)
            if case.name in FULLY_DETERMINED:
                assert not unresolved, (out.name, exp)
        annotated = annotate(r)
        onnx.checker.check_model(annotated)


def test_conformance_cases_were_found():
    names = {c.name for c in _conformance_cases()}
    assert {"test_if", "test_loop11", "test_scan9_sum", "test_sequence_insert_at_back"} <= names
    assert names >= FULLY_DETERMINED


def test_scan9_negative_axes_are_accepted_like_onnxruntime():
    """Scan-9's spec allows negative axes only from Scan-11; onnx and onnxruntime accept them in
    Scan-9 too (counted from the end), and so does shapeinfer: no error, onnxruntime's shapes."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "xi"], ["s2"]), helper.make_node("Identity", ["s2"], ["yo"])],
        "body",
        [
            helper.make_tensor_value_info("s", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("xi", TensorProto.FLOAT, [2]),
        ],
        [
            helper.make_tensor_value_info("s2", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("yo", TensorProto.FLOAT, [2]),
        ],
    )
    node = helper.make_node(
        "Scan", ["s0", "x"], ["sf", "ys"], body=body, num_scan_inputs=1, scan_input_axes=[-1], scan_output_axes=[-1]
    )
    g = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("s0", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5]),
        ],
        [helper.make_empty_tensor_value_info("sf"), helper.make_empty_tensor_value_info("ys")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)], ir_version=7)
    r = shapeinfer.infer(copy.deepcopy(m))
    assert not [d for d in r.diagnostics if d.severity == "error"]
    got = ort_oracle.run(m, {"s0": np.zeros(2, np.float32), "x": np.ones((2, 5), np.float32)})
    assert [r.dims("sf"), r.dims("ys")] == [a.shape for a in got] == [(2,), (2, 5)]


def test_if_branches_of_different_element_types_are_an_error_as_in_onnxruntime():
    """then_branch FLOAT, else_branch DOUBLE: onnx and onnxruntime refuse the model whichever
    branch would run; so does inference (E031), instead of taking the declared output type."""
    tb = helper.make_graph([const("a", np.array([1.0], np.float32))], "t", [], [vi("a", F, [1])])
    eb = helper.make_graph([const("b", np.array([1.0], np.float64))], "e", [], [vi("b", TensorProto.DOUBLE, [1])])
    m = model(
        [helper.make_node("If", ["c"], ["y"], then_branch=tb, else_branch=eb)], [vi("c", B, [])], [vi("y", F, None)]
    )
    with pytest.raises(Exception, match=r"(?i)mismatch"):
        ort_oracle.session(m)
    r = shapeinfer.infer(m)
    (err,) = [d for d in r.diagnostics if d.severity == "error"]
    assert err.code == "E031" and "float" in err.message and "double" in err.message
    assert not [d for d in r.diagnostics if d.code == "G013"]
