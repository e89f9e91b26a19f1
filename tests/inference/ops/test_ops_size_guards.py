"""Guards on a symbolic size that an op's constant arguments need (Split sizes and parts,
Gather and GatherElements indices, TopK's k, DepthToSpace and SpaceToDepth blocks, a pool's
window, Pad's pads), and the broadcasts of Einsum and PRelu, checked
against onnxruntime: over sizes 1 to 12 the model runs exactly where its guards hold.

A make-dynamic review found none of these recorded: ``shapeinfer`` printed the shapes with no
"holds when", ``profile`` said "holds when: always", and ``make-dynamic`` wrote a Split of a
height into [4, 4], a Gather of row 7 and a TopK of 8 as dynamic models that fail at most sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.symbolic.guards import check

F = TensorProto.FLOAT


def _model(node, x_shape, n_out, inits=(), opset=17):
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", F, x_shape)],
        [helper.make_tensor_value_info(o, TensorProto.INT64 if o == "yi" else F, None) for o in node.output[:n_out]],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _i64(v):
    return np.array(v, np.int64)


CASES = {
    "split sizes": (
        helper.make_node("Split", ["x", "sp"], ["a", "b"], axis=0),
        ["n", 3],
        2,
        [("sp", _i64([4, 4]))],
        13,
        {"n == 8"},
    ),
    "split sizes (attribute)": (
        helper.make_node("Split", ["x"], ["a", "b"], axis=0, split=[2, 3]),
        ["n", 3],
        2,
        [],
        11,
        {"n == 5"},
    ),
    "split by an empty split": (
        helper.make_node("Split", ["x", "sp"], ["a", "b"], axis=0),
        ["n", 3],
        2,
        [("sp", np.array([], np.int64))],
        13,
        {"n % 2 == 0"},
    ),
    "split into equal parts": (
        helper.make_node("Split", ["x"], ["a", "b", "c"], axis=0),
        ["n", 3],
        3,
        [],
        13,
        {"n % 3 == 0"},
    ),
    "split num_outputs": (
        helper.make_node("Split", ["x"], ["a", "b", "c", "d"], axis=0, num_outputs=4),
        ["n", 3],
        4,
        [],
        18,
        None,
    ),
    "gather index": (
        helper.make_node("Gather", ["x", "i"], ["y"], axis=0),
        ["n", 3],
        1,
        [("i", _i64(7))],
        17,
        {"8 <= n"},
    ),
    "gather negative indices": (
        helper.make_node("Gather", ["x", "i"], ["y"], axis=1),
        [2, "n"],
        1,
        [("i", _i64([0, -5, 2]))],
        17,
        {"5 <= n"},
    ),
    "gather elements values": (
        helper.make_node("GatherElements", ["x", "i"], ["y"], axis=0),
        ["n", 3],
        1,
        [("i", np.full((2, 3), 6, np.int64))],
        17,
        {"7 <= n"},
    ),
    "gathernd index": (
        helper.make_node("GatherND", ["x", "i"], ["y"]),
        ["n", 2],
        1,
        [("i", _i64([[5], [1]]))],
        17,
        {"6 <= n"},
    ),
    "scatternd index": (
        helper.make_node("ScatterND", ["x", "i", "u"], ["y"]),
        ["n", 2],
        1,
        [("i", _i64([[4]])), ("u", np.ones((1, 2), np.float32))],
        17,
        {"5 <= n"},
    ),
    "scatterelements index": (
        helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=0),
        ["n", 2],
        1,
        [("i", _i64([[6, -2]])), ("u", np.ones((1, 2), np.float32))],
        17,
        {"7 <= n"},
    ),
    "convtranspose padded": (
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], pads=[3, 2], strides=[2], output_padding=[1]),
        [1, 1, "n"],
        1,
        [("w", np.ones((1, 1, 4), np.float32))],
        17,
        {"2 <= n"},
    ),
    "convtranspose output_shape": (
        helper.make_node("ConvTranspose", ["x", "w"], ["y"], output_shape=[12], strides=[2]),
        [1, 1, "n"],
        1,
        [("w", np.ones((1, 1, 3), np.float32))],
        17,
        {"5 <= n"},
    ),
    "batchnorm channels": (
        helper.make_node("BatchNormalization", ["x", "s", "b", "mu", "var"], ["y"]),
        [2, "n", 4],
        1,
        [(k, np.ones(3, np.float32)) for k in ("s", "b", "mu", "var")],
        17,
        {"n == 3"},
    ),
    "instancenorm channels": (
        helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"]),
        [1, "n", 4],
        1,
        [(k, np.ones(3, np.float32)) for k in ("s", "b")],
        17,
        {"n == 3"},
    ),
    "groupnorm groups": (
        helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2),
        [1, "n", 4],
        1,
        [(k, np.ones(2, np.float32)) for k in ("s", "b")],
        18,
        {"n % 2 == 0"},
    ),
    "layernorm scale": (
        helper.make_node("LayerNormalization", ["x", "s"], ["y"], axis=-2),
        ["n", 4],
        1,
        [("s", np.ones((3, 4), np.float32))],
        17,
        {"n == 3"},
    ),
    "layernorm scale before opset 17 (onnxruntime's schema)": (
        helper.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1),
        [2, "n"],
        1,
        [("s", np.ones(4, np.float32)), ("b", np.ones(4, np.float32))],
        13,
        {"n == 4"},
    ),
    "topk": (
        helper.make_node("TopK", ["x", "k"], ["y", "yi"], axis=1),
        [2, "n"],
        2,
        [("k", _i64([6]))],
        17,
        {"6 <= n"},
    ),
    "maxpool dilated": (
        helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3], pads=[1, 1], dilations=[2]),
        [1, 1, "n"],
        1,
        [],
        17,
        {"2 <= n"},
    ),
    "averagepool strided": (
        helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[4], strides=[2]),
        [1, 1, "n"],
        1,
        [],
        17,
        None,
    ),
    "lppool valid": (
        helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3], auto_pad="VALID"),
        [1, 1, "n"],
        1,
        [],
        18,
        None,
    ),
    "space to depth": (
        helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=3),
        [1, 2, "n", 6],
        1,
        [],
        17,
        {"n % 3 == 0"},
    ),
    "depth to space": (
        helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2),
        [1, "n", 2, 2],
        1,
        [],
        17,
        {"n % 4 == 0"},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_size_guards_hold_exactly_where_onnxruntime_runs(case: str) -> None:
    ort = pytest.importorskip("onnxruntime")
    node, shape, n_out, inits, opset, want = CASES[case]
    m = _model(node, shape, n_out, inits, opset)
    result = shapeinfer.infer(m)
    guards = result.guards()
    if want is not None:
        assert {g.text for g in guards} == want
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in range(1, 13):
        dims = [n if d == "n" else d for d in shape]
        try:
            sess.run(None, {"x": np.zeros(dims, np.float32)})
            runs = True
        except Exception:
            runs = False
        assert runs == all(check(g, {"n": n}) for g in guards), (n, [g.text for g in guards])


def test_a_static_gather_index_out_of_range_is_an_error() -> None:
    """A constant index past a static axis fails at every size: an error (it was left to the
    data's values, which inference does not read for a weight)."""
    m = _model(helper.make_node("Gather", ["x", "i"], ["y"], axis=0), [5, 3], 1, [("i", _i64(7))])
    errors = [d for d in shapeinfer.infer(m).diagnostics if d.severity == "error"]
    assert [d.message for d in errors] == ["Gather index out of range for dim 5: it needs 8"]


def _two_inputs(node, a_shape, b_shape, opset=17, inits=()):
    g = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("a", F, a_shape), helper.make_tensor_value_info("b", F, b_shape)],
        [helper.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


BROADCASTS = {
    "einsum contracted letter": (helper.make_node("Einsum", ["a", "b"], ["y"], equation="i,i->"), ["n"], [4]),
    "einsum matmul": (helper.make_node("Einsum", ["a", "b"], ["y"], equation="ab,bc->ac"), ["n", "m"], [4, 2]),
    "einsum output letter": (helper.make_node("Einsum", ["a", "b"], ["y"], equation="i,i->i"), ["n"], ["m"]),
    "einsum diagonal": (helper.make_node("Einsum", ["a", "b"], ["y"], equation="ii,j->ij"), ["n", 1], [2]),
    "layernorm scale of 1 or the axis": (
        helper.make_node("LayerNormalization", ["a", "b"], ["y"], axis=-1),
        [2, 3, 4],
        ["n"],
    ),
    "layernorm scale of full rank": (helper.make_node("LayerNormalization", ["a", "b"], ["y"]), [2, "n"], [1, "n"]),
    "prelu slope larger": (helper.make_node("PRelu", ["a", "b"], ["y"]), ["n"], [3]),
    "prelu slope of more rows": (helper.make_node("PRelu", ["a", "b"], ["y"]), ["n", 2], [3, 1]),
    "prelu symbolic slope": (helper.make_node("PRelu", ["a", "b"], ["y"]), ["n", 3], ["m", 1]),
}


@pytest.mark.parametrize("case", sorted(BROADCASTS))
def test_broadcasts_onnxruntime_makes_are_neither_refused_nor_misread(case: str) -> None:
    """Einsum and PRelu broadcast a size of 1 both ways in onnxruntime: the op sweep found
    Einsum guarding ``n == 4`` where n = 1 runs (a false guard), and PRelu giving X's shape where
    a larger slope makes the output larger (a wrong dim). Over n and m in 1..8 the guards hold
    exactly where onnxruntime runs, and the dims are onnxruntime's there."""
    ort = pytest.importorskip("onnxruntime")
    from shapeinfer.symbolic import dims as D

    node, a_shape, b_shape = BROADCASTS[case]
    m = _two_inputs(node, a_shape, b_shape)
    result = shapeinfer.infer(m)
    guards, dims = result.guards(), result.dims("y")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in range(1, 9):
        for mm in range(1, 9):
            b = {"n": n, "m": mm}
            feeds = {
                "a": np.ones([b.get(d, d) for d in a_shape], np.float32),
                "b": np.ones([b.get(d, d) for d in b_shape], np.float32),
            }
            try:
                (y,) = sess.run(None, feeds)
            except Exception:
                y = None
            assert (y is not None) == all(check(g, b) for g in guards), (b, [g.text for g in guards])
            if y is not None:
                assert tuple(d if type(d) is int else D.evaluate(d, b) for d in dims) == y.shape, (b, dims)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_guards_hold_exactly_where_onnxruntime_pads(mode: str) -> None:
    """Pad had no guard (the op sweep: 53 models onnxruntime refuses at some sizes, pads of
    -3 on [n] or reflect pads on n = 1). For every pair of pads in -3..3 over [n], n in 1..7:
    onnxruntime runs exactly where the guards hold, and the dim is its size there."""
    import itertools

    for b, e in itertools.product(range(-3, 4), repeat=2):
        node = helper.make_node("Pad", ["x", "p"], ["y"], mode=mode)
        _runs_where_guards_hold(_model(node, ["n"], 1, [("p", _i64([b, e]))], 19), lambda n: (n,), (b, e))


def _runs_where_guards_hold(m, x_shape, label, sizes=range(1, 8)) -> None:
    """Over n in ``sizes`` onnxruntime runs ``m`` (x of shape ``x_shape(n)``) exactly where its
    guards hold, and y's dims in n alone are its sizes there."""
    ort = pytest.importorskip("onnxruntime")
    from shapeinfer.symbolic import dims as D

    result = shapeinfer.infer(m)
    guards, dims = result.guards(), result.dims("y")
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in sizes:
        try:
            (y,) = sess.run(None, {"x": np.ones(x_shape(n), np.float32)})
        except Exception:
            y = None
        assert (y is not None) == all(check(g, {"n": n}) for g in guards), (label, n, [g.text for g in guards])
        if y is not None:
            for d, a in zip(dims, y.shape, strict=True):
                if D.symbols(d) <= {"n"}:
                    assert D.evaluate(d, {"n": n}) == a, (label, n, d)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_of_an_axis_that_may_be_empty(mode: str) -> None:
    """The same grid on x[1:] of [n], an axis of n - 1 that is 0 at n = 1: onnxruntime pads an
    empty axis where the pads sum to 0 (it stays empty) in constant, reflect and edge modes,
    and the guard that a mode reads an element said "3 <= n" for pads (-1, 1), false at n = 1
    (the soft-reading sweep of session 20); it wraps no empty input at all, whatever the pads
    (no guard said so). Over n in 1..7 the guards hold exactly where onnxruntime runs; and where
    the other axis is the empty one."""
    import itertools

    crop = helper.make_node("Slice", ["x", "s1", "big", "s0"], ["s"])
    inits = {"s0": _i64([0]), "s1": _i64([1]), "big": _i64([1 << 40])}
    for b, e in itertools.product(range(-3, 4), repeat=2):
        nodes = [crop, helper.make_node("Pad", ["s", "p"], ["y"], mode=mode)]
        _runs_where_guards_hold(_graph_on(nodes, ["n"], {**inits, "p": _i64([b, e])}, 19), lambda n: (n,), (b, e))
    # the other axis empty: x[1:] of [n, 3] padded on axis 1 (wrap pads no empty input at all)
    for b, e in itertools.product(range(-1, 2), repeat=2):
        nodes = [crop, helper.make_node("Pad", ["s", "p"], ["y"], mode=mode)]
        m = _graph_on(nodes, ["n", 3], {**inits, "p": _i64([0, b, 0, e])}, 19)
        _runs_where_guards_hold(m, lambda n: (n, 3), (b, e), range(1, 5))


def test_a_loop_body_that_may_not_run_imposes_nothing() -> None:
    """A Loop of n - 1 iterations whose body splits x into [2, 3]: the body needs n == 5, but at
    n = 1 it never runs and onnxruntime runs the model. The body's equality was kept as a guard
    (a false guard) and narrowed x to [5] outside the loop (a wrong dim; the second op sweep).
    Where a Loop may run no iteration, its body's guards are not the model's: at n = 1 to 8 no
    guard fails where onnxruntime runs, and every dim is its size there."""

    i64 = TensorProto.INT64
    body = helper.make_graph(
        [
            helper.make_node("Split", ["xin", "sizes"], ["a", "b"], axis=0),
            helper.make_node("Concat", ["a", "b"], ["xout"], axis=0),
            helper.make_node("Identity", ["cond"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", i64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("xin", F, None),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("xout", F, None),
        ],
        [numpy_helper.from_array(np.array([2, 3], np.int64), "sizes")],
    )
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Sub", ["s", "one"], ["trip"]),
        helper.make_node("Squeeze", ["trip"], ["m"]),
        helper.make_node("Loop", ["m", "", "x"], ["y"], body=body),
        helper.make_node("Identity", ["x"], ["xo"]),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["n"])],
        [helper.make_tensor_value_info("y", F, None), helper.make_tensor_value_info("xo", F, None)],
        [numpy_helper.from_array(np.array([1], np.int64), "one")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    assert _never_contradicted(m, ["y", "xo"]) == [1, 5]


def test_concat_does_not_equate_an_input_that_may_be_empty() -> None:
    """onnxruntime checks the other dims of a Concat's non-empty inputs only: x[:, None] ([n, 1])
    beside a [1, L] of L = max(n - 5, 0) runs at every n <= 5 (L = 0). The other axes were
    equated, guarding n == 1 and narrowing n (the second op sweep). An input that may be empty
    is not equated: no guard fails where onnxruntime runs, and the dims are its sizes."""

    nodes = [
        helper.make_node("Slice", ["x", "five", "big"], ["tail"]),
        helper.make_node("Shape", ["tail"], ["len"]),
        helper.make_node("Concat", ["one", "len"], ["shape"], axis=0),
        helper.make_node("ConstantOfShape", ["shape"], ["row"], value=helper.make_tensor("v", F, [1], [0.0])),
        helper.make_node("Unsqueeze", ["x", "ax1"], ["col"]),
        helper.make_node("Concat", ["col", "row"], ["y"], axis=1),
    ]
    inits = [
        numpy_helper.from_array(np.array([5], np.int64), "five"),
        numpy_helper.from_array(np.array([1 << 30], np.int64), "big"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([1], np.int64), "ax1"),
    ]
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", F, ["n"])], [helper.make_tensor_value_info("y", F, None)], inits
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    assert _never_contradicted(m, ["y"]) == [1, 2, 3, 4, 5]


def test_a_size_that_may_be_1_broadcast_against_an_unknown_one_is_not_kept() -> None:
    """x[n] + Compress(y, y > 0): the compressed length is unknown (a fresh symbol), and the sum
    was [n] under the guard "unk == 1 or unk == n", wrong at n = 1 where the result is the
    compressed length (the second op sweep). Where the known side may be 1 the result is no
    longer it; with n of at least 2 it still is."""
    ort = pytest.importorskip("onnxruntime")
    from shapeinfer.symbolic import dims as D

    nodes = [
        helper.make_node("Greater", ["y", "zero"], ["pos"]),
        helper.make_node("Compress", ["y", "pos"], ["c"], axis=0),
        helper.make_node("Add", ["x", "c"], ["s"]),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["n"]), helper.make_tensor_value_info("y", F, [3])],
        [helper.make_tensor_value_info("s", F, None)],
        [numpy_helper.from_array(np.array(0.0, np.float32), "zero")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    (d,) = shapeinfer.infer(m).dims("s")
    assert not D.symbols(d) <= {"n"}  # not n: at n = 1 the sum has the compressed length
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    (s,) = sess.run(None, {"x": np.zeros(1, np.float32), "y": np.array([1.0, 2.0, -1.0], np.float32)})
    assert s.shape == (2,)
    (d2,) = shapeinfer.infer(m, dim_ranges={"n": (2, None)}).dims("s")
    assert d2 == D.sym("n")  # n >= 2: the unknown side is 1 or n, and the sum is n


def _never_contradicted(m, outputs: list[str], rest: tuple = (), lead: tuple = ()) -> list[int]:
    """The sizes n in 1..8 of x[*lead, n, *rest] at which onnxruntime runs ``m``; at each, no
    guard fails and every dim of ``outputs`` in n alone is onnxruntime's size (a fresh symbol:
    unknown)."""
    ort = pytest.importorskip("onnxruntime")
    from shapeinfer.symbolic import dims as D

    result = shapeinfer.infer(m)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    ran = []
    for n in range(1, 9):
        try:
            got = sess.run(outputs, {"x": np.zeros((*lead, n, *rest), np.float32)})
        except Exception:
            continue
        ran.append(n)
        assert all(check(g, {"n": n}) is not False for g in result.guards()), (n, [g.text for g in result.guards()])
        for name, actual in zip(outputs, got, strict=True):
            for d, a in zip(result.dims(name), actual.shape, strict=True):
                if D.symbols(d) <= {"n"}:
                    assert D.evaluate(d, {"n": n}) == a, (name, n, d)
    return ran


def test_pad_of_an_empty_input_reads_nothing() -> None:
    """x[1:] of [n, 3] padded by edge on axis 1: at n = 1 the input is empty and onnxruntime
    pads it to [0, 5]; the guard that axis 1 keeps an element (its pad crops 1) held only where
    the input has one (the diff review: 2 <= p where n = 1, p = 1 runs)."""
    nodes = [
        helper.make_node("Slice", ["x", "one", "big", "zero"], ["s"]),
        helper.make_node("Pad", ["s", "pads"], ["y"], mode="edge"),
    ]
    inits = [
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([1 << 40], np.int64), "big"),
        numpy_helper.from_array(np.array([0], np.int64), "zero"),
        numpy_helper.from_array(np.array([0, -1, 0, 2], np.int64), "pads"),
    ]
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, ["n", 3])],
        [helper.make_tensor_value_info("y", F, None)],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    assert _never_contradicted(m, ["y"], (3,)) == list(range(1, 9))


def _from_n_minus(k: int, tail: list, inits: list, outputs: list[str], opset: int = 17, rest: tuple = (3,)):
    """x[n, *rest] with ``v = [n - k]`` (int64, 1-D) computed from its shape, then ``tail``."""
    head = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "zero"], ["n0"], axis=0),
        helper.make_node("Sub", ["n0", "k"], ["v"]),
    ]
    consts = [numpy_helper.from_array(np.array([0], np.int64), "zero"), numpy_helper.from_array(_i64([k]), "k")]
    consts += [numpy_helper.from_array(np.asarray(a), name) for name, a in inits]
    g = helper.make_graph(
        head + tail,
        "g",
        [helper.make_tensor_value_info("x", F, ["n", *rest])],
        [helper.make_tensor_value_info(o, F, None) for o in outputs],
        consts,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


COMPUTED = {
    "constantofshape": (3, [helper.make_node("ConstantOfShape", ["v"], ["y"])], [], 17, {"3 <= n"}),
    "expand": (
        3,
        [helper.make_node("Concat", ["v", "c4"], ["s"], axis=0), helper.make_node("Expand", ["one", "s"], ["y"])],
        [("c4", _i64([4])), ("one", np.ones((1, 1), np.float32))],
        17,
        {"3 <= n"},
    ),
    "tile": (
        3,
        [helper.make_node("Concat", ["v", "c1"], ["r"], axis=0), helper.make_node("Tile", ["x", "r"], ["y"])],
        [("c1", _i64([1]))],
        17,
        {"3 <= n"},
    ),
    "resize sizes": (
        3,
        [
            helper.make_node("Concat", ["c1", "c1", "v", "c4"], ["s"], axis=0),
            helper.make_node("Unsqueeze", ["x", "ax01"], ["x4"]),
            helper.make_node("Resize", ["x4", "", "", "s"], ["y"], mode="nearest"),
        ],
        [("c1", _i64([1])), ("c4", _i64([4])), ("ax01", _i64([0, 1]))],
        13,
        {"4 <= n"},
    ),
    "onehot depth": (
        3,
        [helper.make_node("OneHot", ["idx", "v", "vals"], ["y"])],
        [("idx", _i64([0, 1])), ("vals", np.array([0, 1], np.float32))],
        17,
        {"4 <= n"},
    ),
    "gemm bias": (
        0,
        [helper.make_node("Gemm", ["x", "w", "bias"], ["y"])],
        [("w", np.ones((3, 2), np.float32)), ("bias", np.ones((4, 2), np.float32))],
        17,
        {"n == 4"},
    ),
    "gemm bias of 1 row": (
        0,
        [helper.make_node("Gemm", ["x", "w", "bias"], ["y"])],
        [("w", np.ones((3, 2), np.float32)), ("bias", np.ones((1, 2), np.float32))],
        17,
        None,
    ),
    "reversesequence lengths": (
        0,
        [helper.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=1, time_axis=0)],
        [("lens", _i64([1, 2, 5]))],
        17,
        {"5 <= n"},
    ),
}


@pytest.mark.parametrize("case", sorted(COMPUTED))
def test_sizes_computed_in_the_graph_say_where_they_run(case: str) -> None:
    """A size an op reads from a tensor computed from the input's shape (``n - 3``) that
    onnxruntime refuses below 0 (ConstantOfShape, Expand, Tile) or below 1 (Resize sizes, OneHot
    depth), a Gemm bias against the rows, ReverseSequence lengths against the time axis: none was
    said ("holds when: always"; the first op sweep's missing guards). Over n in 1..12 the guards
    hold exactly where onnxruntime runs, and the dims are onnxruntime's there."""
    ort = pytest.importorskip("onnxruntime")
    from shapeinfer.symbolic import dims as D

    k, tail, inits, opset, expected = COMPUTED[case]
    m = _from_n_minus(k, tail, inits, ["y"], opset)
    result = shapeinfer.infer(m)
    guards, dims = result.guards(), result.dims("y")
    if expected is not None:
        assert {g.text for g in guards} == expected
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in range(1, 13):
        try:
            (y,) = sess.run(None, {"x": np.ones((n, 3), np.float32)})
        except Exception:
            y = None
        assert (y is not None) == all(check(g, {"n": n}) for g in guards), (n, [g.text for g in guards])
        if y is not None:
            assert [D.evaluate(d, {"n": n}) for d in dims] == list(y.shape), (n, dims)


def _in_a_branch_that_may_run(x_shape: list, branch: list, inits: dict):
    """x of ``x_shape`` (n its symbolic dim) and ``y = If(n > 1000)`` whose two branches are
    ``branch`` (nodes reading x, making ``y_b``): a condition inference does not decide."""
    out = [helper.make_tensor_value_info("y_b", F, None)]
    nodes = [
        helper.make_node("Shape", ["x"], ["s0"]),
        helper.make_node("ReduceSum", ["s0", "zero"], ["ss"], keepdims=0),
        helper.make_node("Greater", ["ss", "big"], ["cond"]),
        helper.make_node(
            "If",
            ["cond"],
            ["y"],
            then_branch=helper.make_graph(branch, "t", [], out),
            else_branch=helper.make_graph(branch, "e", [], out),
        ),
    ]
    return _graph_on(nodes, x_shape, {"zero": _i64([0]), "big": np.array(1000, np.int64), **inits}, 17)


_IN_A_BRANCH = {
    "int div": (
        ["n"],
        [
            helper.make_node("Shape", ["x"], ["sh"]),
            helper.make_node("Sub", ["sh", "three"], ["a"]),
            helper.make_node("Div", ["a", "two"], ["q"]),
            helper.make_node("Add", ["q", "one"], ["l"]),
            helper.make_node("ConstantOfShape", ["l"], ["y_b"], value=numpy_helper.from_array(np.ones(1, np.float32))),
        ],
        {"three": _i64([3]), "two": _i64([2]), "one": _i64([1])},
        (),
    ),
    "reshape entry n//2": (
        [1, 64, "n"],
        [
            helper.make_node("Shape", ["x"], ["sh"]),
            helper.make_node("Gather", ["sh", "i"], ["nn"], axis=0),
            helper.make_node("Div", ["nn", "two"], ["half"]),
            helper.make_node("Concat", ["one", "half", "m1"], ["t"], axis=0),
            helper.make_node("Reshape", ["x", "t"], ["y_b"]),
        ],
        {"i": _i64([2]), "two": _i64([2]), "one": _i64([1]), "m1": _i64([-1])},
        (1, 64),
    ),
}


@pytest.mark.parametrize("case", sorted(_IN_A_BRANCH))
def test_a_soft_reading_in_a_branch_that_may_run_is_not_dropped(case: str) -> None:
    """The soft readings inside an If branch whose condition inference does not decide (it may
    run): (n - 3)/2 in int64 taken as the floor under 3 <= n, a Reshape entry n//2 read
    literally under 2 <= n. The branch's guards are undone (it may not run), and its soft
    guards went with them, so the first run stood and its floor forms flowed out of the If:
    y of (n - 1)//2 where onnxruntime gives 1 at n = 2, [1, n//2, ...] where it gives
    [1, 64, 1] at n = 1 (wrong dims, the soft-reading sweep of session 20). The soft guards now
    stay, and the run without them gives the exact forms."""
    x_shape, branch, inits, lead = _IN_A_BRANCH[case]
    m = _in_a_branch_that_may_run(x_shape, branch, inits)
    ran = _never_contradicted(m, ["y"], lead=lead)
    assert 1 in ran and 2 in ran


def _reshaped_with_n_minus_1(x_shape: list, target_head: list, allowzero: int, tail: list):
    """x reshaped to ``target_head + [n - 1]`` (n the last symbolic dim of x, the entry computed
    from its shape), then ``tail`` making ``y``."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "i"], ["nn"], axis=0),
        helper.make_node("Sub", ["nn", "one"], ["e"]),
        helper.make_node("Concat", ["head", "e"], ["t"], axis=0),
        helper.make_node("Reshape", ["x", "t"], ["r"], allowzero=allowzero),
        *tail,
    ]
    inits = {"i": _i64([x_shape.index("n")]), "one": _i64([1]), "head": _i64(target_head)}
    return _graph_on(nodes, x_shape, inits, 17)


def test_a_binding_that_leaves_a_soft_form_undefined_is_not_a_crash() -> None:
    """x[1, 8, n, 4] reshaped to [-1, 1, 0, n - 1] and squeezed on axis 2 (the n the 0 copies):
    onnxruntime runs it at n = 1 only, where the entry n - 1 is 0 and copies 4 (y [8, 1, 4]).
    The Squeeze's n == 1 bound n in the literal reading and its -1 entry 32//(n - 1) divided
    by zero ("internal error", the soft-reading sweep of session 20). With allowzero the 0 is a
    0, and the model runs nowhere: a contradiction (G015), not a crash."""
    squeeze = [helper.make_node("Squeeze", ["r", "ax2"], ["y"])]
    m = _reshaped_with_n_minus_1([1, 8, "n", 4], [-1, 1, 0], 0, squeeze)
    m.graph.initializer.append(numpy_helper.from_array(_i64([2]), "ax2"))
    assert _never_contradicted(m, ["y"], rest=(4,), lead=(1, 8)) == [1]
    assert shapeinfer.infer(m).dims("y") == (8, 1, 4)
    m = _reshaped_with_n_minus_1(["n", 4], [-1], 1, [helper.make_node("Squeeze", ["x", "ax0"], ["y"])])
    m.graph.initializer.append(numpy_helper.from_array(_i64([0]), "ax0"))
    assert "G015" in {d.code for d in shapeinfer.infer(m).diagnostics if d.severity == "error"}


def test_a_second_call_of_a_function_that_takes_a_soft_guard_marks_its_outputs() -> None:
    """Two calls of one local function whose body takes (n - 3)/2 in int64 as the floor: the
    second call's body has the names the first one's marked. Its output then feeds
    ConstantOfShape(. + 1) and a Gather of row 0, whose guard (3 <= n of the floor) implies the
    soft guard: it must be soft. onnxruntime runs at n = 2 (a length 1)."""
    body = [
        helper.make_node("Shape", ["a"], ["sh"]),
        helper.make_node("Sub", ["sh", "three"], ["d"]),
        helper.make_node("Div", ["d", "two"], ["q"]),
    ]
    nodes = [
        helper.make_node("Half", ["x", "three", "two"], ["q1"], domain="local"),
        helper.make_node("Half", ["x", "three", "two"], ["q2"], domain="local"),
        helper.make_node("Add", ["q2", "one"], ["l1"]),
        helper.make_node("ConstantOfShape", ["l1"], ["c"]),
        helper.make_node("Gather", ["c", "z"], ["y"], axis=0),
    ]
    inits = {"three": _i64([3]), "two": _i64([2]), "one": _i64([1]), "z": np.array(0, np.int64)}
    m = _graph_on(nodes, ["n"], inits, 17)
    m.graph.output.append(helper.make_tensor_value_info("q1", TensorProto.INT64, None))
    m.functions.append(
        helper.make_function("local", "Half", ["a", "three", "two"], ["q"], body, [helper.make_opsetid("", 17)])
    )
    m.opset_import.append(helper.make_opsetid("local", 1))
    assert 2 in _never_contradicted(m, ["y"])


@pytest.mark.parametrize(
    ("k", "div", "minus_one_first"), [(2, None, False), (2, None, True), (4, 2, False), (1, 3, False)]
)
def test_a_computed_reshape_entry_below_zero_beside_a_minus_one_is_guarded(k, div, minus_one_first) -> None:
    """x[n] reshaped to [(n - k)/div, -1] (or [-1, ...]): onnxruntime refuses an entry below -1
    and a second -1, so the entry must be at least 0 beside the -1; nothing was said and the
    dims were unknown (x[n] to [n - 2, -1] runs at n = 2, 3, 4 only; the missing-guard
    classification of session 20). Now ``0 <= n - k``, the exact form of the entry, and the -1's
    divisibility: over n in 1..16 the guards hold exactly where onnxruntime runs."""
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Sub", ["sh", "k"], ["e0"]),
    ]
    inits = {"k": _i64([k]), "m1": _i64([-1])}
    if div is not None:
        nodes.append(helper.make_node("Div", ["e0", "d"], ["e"]))
        inits["d"] = _i64([div])
    else:
        nodes.append(helper.make_node("Identity", ["e0"], ["e"]))
    parts = ["m1", "e"] if minus_one_first else ["e", "m1"]
    nodes += [helper.make_node("Concat", parts, ["t"], axis=0), helper.make_node("Reshape", ["x", "t"], ["y"])]
    m = _graph_on(nodes, ["n"], inits, 17)
    assert shapeinfer.infer(m).guards()
    _runs_where_guards_hold(m, lambda n: (n,), (k, div, minus_one_first), range(1, 17))


_STEP_OR_DELTA = {
    "slice": (
        [helper.make_node("Slice", ["x", "s0", "big", "s0", "v"], ["y"])],
        [("s0", _i64([0])), ("big", _i64([1 << 40]))],
    ),
    "range": (
        [
            helper.make_node("Squeeze", ["v"], ["d"]),
            helper.make_node("Range", ["z", "ten", "d"], ["r"]),
            helper.make_node("Cast", ["r"], ["y"], to=F),
        ],
        [("z", np.array(0, np.int64)), ("ten", np.array(10, np.int64))],
    ),
}


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("op", sorted(_STEP_OR_DELTA))
def test_a_step_or_delta_computed_from_the_sizes_is_not_zero(op: str, k: int) -> None:
    """A Slice step or a Range delta of n - k: onnxruntime refuses it at 0 ("step cannot be
    0"), and runs a negative one. Nothing was said; now ``1 <= max(n - k, k - n)`` (said
    ``2 <= n`` for k = 1). Over n in 1..12 the guards hold exactly where onnxruntime runs, and
    the dims in n alone are its sizes there."""
    tail, inits = _STEP_OR_DELTA[op]
    m = _from_n_minus(k, tail, inits, ["y"], 17)
    assert shapeinfer.infer(m).guards()
    _runs_where_guards_hold(m, lambda n: (n, 3), (op, k), range(1, 13))


def _graph_on(nodes: list, x_shape: list, inits: dict, opset: int = 20, y_type: int = F):
    g = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", F, x_shape)],
        [helper.make_tensor_value_info("y", y_type, None)],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _strided(axis: int, start: int, step: int, out: str) -> object:
    return helper.make_node("Slice", ["x", f"s{start}", "big", f"ax{axis}", f"st{step}"], [out])


_SLICE_INITS = {
    "s0": _i64([0]),
    "s1": _i64([1]),
    "big": _i64([1 << 40]),
    "ax0": _i64([0]),
    "ax2": _i64([2]),
    "st1": _i64([1]),
    "st2": _i64([2]),
}

#: name -> (model, x's shape): the vision sweep's missing guards (an input of a size that may be
#: 0, onnxruntime's SAME padding of a pool)
EMPTY_OR_PADDED = {
    "concat of even and odd rows (Focus)": (
        _graph_on(
            [_strided(0, 0, 2, "a"), _strided(0, 1, 2, "b"), helper.make_node("Concat", ["a", "b"], ["y"], axis=1)],
            ["n", 2],
            _SLICE_INITS,
        ),
        ["n", 2],
    ),
    "sum of even and odd rows": (
        _graph_on(
            [_strided(0, 0, 2, "a"), _strided(0, 1, 2, "b"), helper.make_node("Add", ["a", "b"], ["y"])],
            ["n"],
            _SLICE_INITS,
        ),
        ["n"],
    ),
    "expand of a crop to the input's shape": (
        _graph_on(
            [
                _strided(0, 1, 1, "a"),
                helper.make_node("Shape", ["x"], ["s"]),
                helper.make_node("Expand", ["a", "s"], ["y"]),
            ],
            ["n"],
            _SLICE_INITS,
        ),
        ["n"],
    ),
    "global pool of a crop": (
        _graph_on(
            [_strided(2, 1, 1, "a"), helper.make_node("GlobalAveragePool", ["a"], ["y"])], [1, 1, "n", 3], _SLICE_INITS
        ),
        [1, 1, "n", 3],
    ),
    "max pool of a crop": (
        _graph_on(
            [_strided(2, 1, 1, "a"), helper.make_node("MaxPool", ["a"], ["y"], kernel_shape=[1, 1])],
            [1, 1, "n", 3],
            _SLICE_INITS,
        ),
        [1, 1, "n", 3],
    ),
    "reshape of a crop with -1": (
        _graph_on(
            [_strided(2, 1, 1, "a"), helper.make_node("Reshape", ["a", "t"], ["y"])],
            [1, 1, "n", 3],
            {**_SLICE_INITS, "t": _i64([0, 0, 0, 0, -1])},
        ),
        [1, 1, "n", 3],
    ),
    "argmax over a crop": (
        _graph_on(
            [_strided(2, 1, 1, "a"), helper.make_node("ArgMax", ["a"], ["y"], axis=2)],
            [1, 1, "n", 3],
            _SLICE_INITS,
            y_type=TensorProto.INT64,
        ),
        [1, 1, "n", 3],
    ),
    "gather of the last row of a crop": (
        _graph_on(
            [
                _strided(0, 1, 1, "a"),
                helper.make_node("Shape", ["x"], ["sh"]),
                helper.make_node("Gather", ["sh", "z"], ["n"], axis=0),
                helper.make_node("Sub", ["n", "two"], ["last"]),
                helper.make_node("Gather", ["a", "last"], ["y"], axis=0),
            ],
            ["n", 3],
            {**_SLICE_INITS, "z": np.array(0, np.int64), "two": np.array(2, np.int64)},
        ),
        ["n", 3],
    ),
    "affine grid of half the height": (
        _graph_on(
            [
                helper.make_node("Shape", ["x"], ["s"]),
                helper.make_node("Div", ["s", "halve"], ["size"]),
                helper.make_node("AffineGrid", ["theta", "size"], ["y"]),
            ],
            [1, 1, "n", 4],
            {"halve": _i64([1, 1, 2, 1]), "theta": np.zeros((1, 2, 3), np.float32)},
        ),
        [1, 1, "n", 4],
    ),
    "max pool k1 s2 SAME (TF shortcut)": (
        _graph_on(
            [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[1], strides=[2], auto_pad="SAME_UPPER")],
            [1, 1, "n"],
            {},
        ),
        [1, 1, "n"],
    ),
    "average pool k2 s3 SAME_LOWER, opset 18": (
        _graph_on(
            [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2], strides=[3], auto_pad="SAME_LOWER")],
            [1, 1, "n"],
            {},
            18,
        ),
        [1, 1, "n"],
    ),
}


@pytest.mark.parametrize("case", sorted(EMPTY_OR_PADDED))
def test_inputs_that_may_be_empty_and_same_pool_padding_say_where_they_run(case: str) -> None:
    """The vision and transformer sweeps' missing guards: a Concat, a broadcast or an Expand of
    x[1::2] or x[1:] (0 rows at n = 1, and unequal to x[0::2] at odd n), a pool, an ArgMax or a
    Reshape with -1 of an empty crop, a Gather of its last row (index n - 2), AffineGrid of a
    height of 0, and a MaxPool / AveragePool whose SAME padding is negative (kernel shorter
    than the stride: onnxruntime refuses). Each ran with no guard ("holds when: always"). Over
    n in 1..12 the guards hold exactly where onnxruntime runs, and every dim in n is
    onnxruntime's size there."""
    ort = pytest.importorskip("onnxruntime")
    from shapeinfer.symbolic import dims as D

    m, x_shape = EMPTY_OR_PADDED[case]
    result = shapeinfer.infer(m)
    guards, dims = result.guards(), result.dims("y")
    assert guards
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in range(1, 13):
        try:
            (y,) = sess.run(None, {"x": np.ones([n if d == "n" else d for d in x_shape], np.float32)})
        except Exception:
            y = None
        assert (y is not None) == all(check(g, {"n": n}) for g in guards), (n, [g.text for g in guards])
        if y is not None:
            for d, a in zip(dims, y.shape, strict=True):
                if D.symbols(d) <= {"n"}:
                    assert D.evaluate(d, {"n": n}) == a, (n, dims, y.shape)


def _reshaped_to_half(x_shape: list, lead: int, tail: list, inits: dict):
    """x of ``x_shape`` (n its last symbolic dim) reshaped to ``[1] * lead + [n//2, -1]`` as ``r``
    (the target computed from its shape), then ``tail`` making ``y``: at n = 1 the entry n//2 is
    0 and copies x's dim at that index."""
    axis = x_shape.index("n")
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "i"], ["n"], axis=0),
        helper.make_node("Div", ["n", "two"], ["half"]),
        helper.make_node("Concat", ["ones", "half", "m1"], ["t"], axis=0),
        helper.make_node("Reshape", ["x", "t"], ["r"]),
        *tail,
    ]
    consts = {"i": _i64([axis]), "two": _i64([2]), "ones": _i64([1] * lead), "m1": _i64([-1]), **inits}
    return _graph_on(nodes, x_shape, consts, 17)


def test_a_guard_on_a_dim_read_under_a_soft_guard_is_soft() -> None:
    """x[1, 1, n, 4] reshaped to [1, 1, n//2, -1], then pooled: the entry n//2 is read as the dim
    it says under the soft guard 1 <= n//2, and the pool's guard that its input has elements
    (1 <= n//2) was hard, so it implied the soft one and stood: "2 <= n", false at n = 1, where
    the entry is 0, copies the input's 1, and onnxruntime pools [1, 1, 1, 4]. A guard on a dim
    read under soft guards is soft: the run without them gives the exact forms, and no guard
    fails where onnxruntime runs."""
    m = _reshaped_to_half([1, 1, "n", 4], 2, [helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[1, 1])], {})
    assert 1 in _never_contradicted(m, ["y"], rest=(4,), lead=(1, 1))


def _gather_row_5(x: str, y: str) -> list:
    five = helper.make_node("Constant", [], [f"{y}_five"], value=numpy_helper.from_array(np.array(5, np.int64)))
    return [five, helper.make_node("Gather", [x, f"{y}_five"], [y], axis=1)]


_ON_THE_HALF = {
    "gather row 5": ([helper.make_node("Gather", ["r", "five"], ["y"], axis=1)], {"five": np.array(5, np.int64)}),
    "topk 5": ([helper.make_node("TopK", ["r", "k5"], ["y", "yi"], axis=1)], {"k5": _i64([5])}),
    "conv window 3": (
        [
            helper.make_node("Unsqueeze", ["r", "a0"], ["r4"]),
            helper.make_node("Conv", ["r4", "w"], ["y"], kernel_shape=[3, 1]),
        ],
        {"a0": _i64([0]), "w": np.ones((1, 1, 3, 1), np.float32)},
    ),
    "broadcast against 64": ([helper.make_node("Add", ["r", "c64"], ["y"])], {"c64": np.ones((1, 64, 1), np.float32)}),
    "a later node": (
        [helper.make_node("Relu", ["r"], ["r2"]), helper.make_node("Gather", ["r2", "five"], ["y"], axis=1)],
        {"five": np.array(5, np.int64)},
    ),
    "in an If branch": (
        [
            helper.make_node(
                "If",
                ["yes"],
                ["y"],
                then_branch=helper.make_graph(
                    _gather_row_5("r", "yt"), "t", [], [helper.make_tensor_value_info("yt", F, None)]
                ),
                else_branch=helper.make_graph(
                    _gather_row_5("r", "ye"), "e", [], [helper.make_tensor_value_info("ye", F, None)]
                ),
            )
        ],
        {"yes": np.array(True)},
    ),
    "in a function": ([helper.make_node("Row5", ["r"], ["y"], domain="local")], {}),
}


@pytest.mark.parametrize("name", list(_ON_THE_HALF))
def test_guards_on_a_dim_read_under_a_soft_guard_are_soft(name: str) -> None:
    """x[1, 64, n] reshaped to [1, n//2, -1]: at n = 1 the entry n//2 is 0 and copies 64. A
    Gather of row 5, a TopK of 5, a convolution window of 3 and a broadcast against 64 along
    that axis guarded ``12 <= n``, ``10 <= n``, ``6 <= n`` and ``n//2 == 1 or n//2 == 64`` of
    the literal reading, hard, so they implied the soft guard ``1 <= n//2`` and stood: false at
    n = 1, where onnxruntime runs. Every guard of a node that reads a tensor computed from a soft
    reading is soft, also a node further on, one in a subgraph reading it from the outer graph,
    and one in the body of a function it is given to."""
    tail, inits = _ON_THE_HALF[name]
    m = _reshaped_to_half([1, 64, "n"], 1, tail, inits)
    if name == "in a function":
        m.functions.append(
            helper.make_function("local", "Row5", ["a"], ["b"], _gather_row_5("a", "b"), [helper.make_opsetid("", 17)])
        )
        m.opset_import.append(helper.make_opsetid("local", 1))
    assert 1 in _never_contradicted(m, ["y"], lead=(1, 64))


@pytest.mark.parametrize("where", ["if branch", "function"])
def test_a_soft_reading_in_a_subgraph_or_function_makes_later_guards_soft(where: str) -> None:
    """x[n]: (n - 3)/2 in int64 (truncated: 0 at n = 2, where the floor is -1) computed inside an
    If branch or a function body, then in the main graph a ConstantOfShape of that plus 1 and a
    Gather of its row 0. The Div inside takes the floor under the soft guard 3 <= n; the If's or
    the call's output rests on it, so the Gather's guard (3 <= n of the floor) is soft too:
    onnxruntime runs at n = 2 (a length 1), and the run without soft guards says so."""
    div = [helper.make_node("Sub", ["sh", "three"], ["a"]), helper.make_node("Div", ["a", "two"], ["len"])]
    if where == "if branch":
        out = [helper.make_tensor_value_info("len", TensorProto.INT64, None)]
        call = helper.make_node(
            "If",
            ["yes"],
            ["half"],
            then_branch=helper.make_graph(div, "t", [], out),
            else_branch=helper.make_graph(div, "e", [], out),
        )
        functions = []
    else:
        call = helper.make_node("Half", ["sh", "three", "two"], ["half"], domain="local")
        functions = [
            helper.make_function("local", "Half", ["sh", "three", "two"], ["len"], div, [helper.make_opsetid("", 17)])
        ]
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        call,
        helper.make_node("Add", ["half", "one"], ["l1"]),
        helper.make_node("ConstantOfShape", ["l1"], ["c"]),
        helper.make_node("Gather", ["c", "zero"], ["y"], axis=0),
    ]
    inits = {"yes": np.array(True), "three": _i64([3]), "two": _i64([2]), "one": _i64([1]), "zero": np.array(0)}
    m = _graph_on(nodes, ["n"], inits, 17)
    if functions:
        m.functions.extend(functions)
        m.opset_import.append(helper.make_opsetid("local", 1))
    assert 2 in _never_contradicted(m, ["y"])
