"""Loop trip counts (issue 32, item 3): the leading dim of a Loop's scan outputs is the number of
iterations onnxruntime runs, on tf2onnx's while loops (Keras RNN layers and raw ``tf.while_loop``,
the fixtures in ``tests/models/exporters``) and on onnx.helper Loops for the edge cases. Every
claim is checked tensor by tensor against onnxruntime at several sizes, 1 and zero iterations
included: after no iteration onnxruntime gives a scan output the shape ``[0, *d]`` with ``d`` the
body output's declared dims, 0 for each one that is not a number (and ``[0]`` when no shape is
declared), so the dims after the count hold only where the count is proven at least 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from support.written import axis_keys, size_grid, written_problems

import shapeinfer
from shapeinfer.analysis.verify import compare
from shapeinfer.symbolic import dims as D
from testkit import ort_oracle

EXPORTERS = Path(__file__).resolve().parents[1] / "models" / "exporters"

#: (batch, seq) sizes every model is run at: 1, 2, 3, odd, and seq below, at and above each bound.
SIZES = [(1, 1), (2, 2), (3, 3), (1, 4), (2, 5), (1, 7), (3, 11)]


def _scan_outputs(m: onnx.ModelProto) -> list[str]:
    """The scan outputs of the main graph's Loops (each Loop's outputs after its carried values)."""
    out = []
    for n in m.graph.node:
        if n.op_type == "Loop":
            n_scan = len(next(a.g for a in n.attribute if a.name == "body").output) - 1 - (len(n.input) - 2)
            out += list(n.output)[len(n.output) - n_scan :]
    return out


def _agree(m: onnx.ModelProto, runs: list[tuple[dict, dict]]):
    """Infer ``m``; run it in onnxruntime on each ``(binding, feeds)``: no main-graph tensor may
    disagree with its inferred fact. Returns the result and the tensors some run left unresolved."""
    r = shapeinfer.infer(m)
    sess = ort_oracle.session(ort_oracle.observable(m))
    names = [o.name for o in sess.get_outputs()]
    unresolved = set()
    for binding, feeds in runs:
        for name, a in zip(names, sess.run(None, feeds)):
            reason, unres, expected = compare(r.facts.get(name), a, binding)
            assert reason is None, (name, binding, reason, expected, np.asarray(a).shape)
            if unres:
                unresolved.add(name)
    return r, unresolved


def _x(b: int, s: int, cols: int | None = 8) -> np.ndarray:
    shape = (b, s) if cols is None else (b, s, cols)
    return np.random.default_rng(b * 100 + s).standard_normal(shape).astype(np.float32)


def _is_fresh(r, d) -> bool:
    return type(d) is not int and bool(D.symbols(d)) and D.symbols(d) <= set(r.fresh_symbols)


# ------------------------------------------------------------------------------ tf2onnx fixtures

FIXTURES = {
    # Keras RNN layers tf2onnx keeps as Loops (masking, return_sequences=False): already resolved
    # before, kept as regression cases
    "tf_while_loop": "seq",
    "tf_bigru_masked": "seq",
    "tf_simple_rnn_last": "seq",
    # raw tf.while_loop / autograph loops that stayed a fresh symbol before
    "tf_while_from1": "seq",
    "tf_while_from1_opset11": "seq",
    "tf_while_half": "seq//2",
    "tf_while_countdown": "seq",
    "tf_while_max5": "min(seq, 5)",
    "tf_while_max_n": "seq",
    "tf_range_step3": "(seq + 1)//3",
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_tf2onnx_loop_counts_are_the_sequence_length(name):
    """The scan outputs of tf2onnx's while loops stack exactly the iterations run, checked with
    every tensor against onnxruntime at each size (seq 1 runs no iteration of ``tf_while_half``
    and ``tf_range_step3``: their other dims are written to be 0 there, as onnxruntime gives)."""
    m = onnx.load(str(EXPORTERS / f"{name}.onnx"))
    r, unresolved = _agree(m, [({"batch": b, "seq": s}, {"x": _x(b, s)}) for b, s in SIZES])
    scans = _scan_outputs(m)
    assert scans
    for o in scans:
        assert r.dims(o)[0] == D.parse(FIXTURES[name]), (o, D.format(r.dims(o)[0]))
    assert not unresolved, unresolved


def test_tf2onnx_float_condition_holds_under_a_bound():
    """At opset 11 tf2onnx writes ``i <= n`` as ``Not(Greater(float(i + 1), float(n)))``: the count
    is ``seq`` only while ``seq + 1`` is exact in float32 (at seq = 2**24, float(2**24 + 1) <= 2**24
    and one more iteration runs), so it holds under ``seq <= 16777215``, said by a guard."""
    r = shapeinfer.infer(str(EXPORTERS / "tf_while_from1_opset11.onnx"))
    assert "seq <= 16777215" in [g.text for g in r.guards()]
    r17 = shapeinfer.infer(str(EXPORTERS / "tf_while_from1.onnx"))  # an int comparison: no guard
    assert r17.guards() == []


def test_tf2onnx_loop_bound_by_a_data_input_keeps_a_fresh_count():
    """``tf.while_loop(i < n)`` with ``n`` a graph input: the count is data, so it stays fresh, and
    so does the batch dim after it (0 when no iteration runs, at ``n <= 0``)."""
    m = onnx.load(str(EXPORTERS / "tf_while_n_input.onnx"))
    runs = [
        ({"batch": b, "seq": s}, {"x": _x(b, s), "n": np.array(n, np.int32)})
        for b, s in SIZES
        for n in sorted({-2, 0, 1, s})
    ]
    r, unresolved = _agree(m, runs)
    (o,) = _scan_outputs(m)
    count, batch, cols = r.dims(o)
    assert _is_fresh(r, count) and _is_fresh(r, batch) and cols == 8
    assert o in unresolved


# ------------------------------------------------------------------------------ synthetic loops


def _c(name: str, v) -> onnx.NodeProto:
    return h.make_node("Constant", [], [name], value=nh.from_array(np.array(v, np.int64), name + "_v"))


def counter_loop(
    start="0",
    step: int | str = 1,
    op: str = "Less",
    after: bool = True,
    bound: str = "seq",
    m: str | None = None,
    entry: str = "same",
    row: str = "x",
    row_decl: list | None = ("b", "seq"),
    floats: bool = False,
) -> onnx.ModelProto:
    """tf2onnx's while loop, written by hand: ``x[b, seq]``; ``n`` = ``bound`` (``seq``,
    ``seq-4``, ``seq//2``, ``data``: a reduction of x); a carried counter ``i`` from ``start``
    (an int, or ``seq``) that the body steps by ``step`` (``"double"``: ``i*2 + 1``, not a
    constant step); the body's condition ``op(i, n)`` on the counter after the step (``after``)
    or before it. ``entry``: the Loop's condition input, ``"same"`` (``op(start, n)``, as tf2onnx
    computes it), ``"none"`` (absent) or ``"false"``. ``m``: the trip count ``M`` (None: absent,
    ``"seq"``, ``"seq-10"``, ``"seq//2"``, an int, ``"input"``: a graph input). Each iteration
    stacks ``row`` (``x`` or ``sum``: x summed over seq, [b, 1]), declared ``row_decl`` (None:
    no shape). ``floats``: the comparisons are made on float casts, as tf2onnx writes them."""
    nodes = [h.make_node("Shape", ["x"], ["sh"]), _c("one_i", 1), h.make_node("Gather", ["sh", "one_i"], ["s"])]
    nodes += [_c("four", 4), _c("two", 2), _c("ten", 10), _c("zero", 0)]
    n_of = {
        "seq": "s",
        "seq-4": "s_4",
        "seq//2": "s_2",
        "data": "dn",
    }
    nodes += [
        h.make_node("Sub", ["s", "four"], ["s_4"]),
        h.make_node("Div", ["s", "two"], ["s_2"]),
        h.make_node("Sub", ["s", "ten"], ["s_10"]),
        h.make_node("ReduceMax", ["x"], ["xmax"], keepdims=0),
        h.make_node("Cast", ["xmax"], ["dn"], to=T.INT64),
    ]
    n = n_of[bound]
    if start == "seq":
        v0 = "s"
    else:
        nodes.append(_c("v0", int(start)))
        v0 = "v0"

    def compare_(a: str, b: str, out: str, where: list) -> None:
        if floats:
            where += [
                h.make_node("Cast", [a], [out + "_a"], to=T.FLOAT),
                h.make_node("Cast", [b], [out + "_b"], to=T.FLOAT),
            ]
            a, b = out + "_a", out + "_b"
        where.append(h.make_node(op, [a, b], [out]))

    graph_inputs = [h.make_tensor_value_info("x", T.FLOAT, ["b", "seq"])]
    if entry == "same":
        compare_(v0, n, "cond0", nodes)
        cond = "cond0"
    elif entry == "false":
        nodes.append(h.make_node("Constant", [], ["cond0"], value=nh.from_array(np.array(False), "f")))
        cond = "cond0"
    else:
        cond = ""
    if m is None:
        trip = ""
    elif m == "input":
        graph_inputs.append(h.make_tensor_value_info("mm", T.INT64, []))
        trip = "mm"
    elif m in ("seq", "seq-10", "seq//2"):
        trip = {"seq": "s", "seq-10": "s_10", "seq//2": "s_2"}[m]
    else:
        nodes.append(_c("mm", int(m)))
        trip = "mm"

    body = []
    if step == "double":
        body += [_c("b_one", 1), _c("b_two", 2), h.make_node("Mul", ["i_in", "b_two"], ["i2"])]
        body.append(h.make_node("Add", ["i2", "b_one"], ["i_out"]))
    else:
        body += [_c("b_step", step), h.make_node("Add", ["i_in", "b_step"], ["i_out"])]
    if op is None:
        body.append(h.make_node("Identity", ["c_in"], ["c_out"]))
    else:
        compare_("i_out" if after else "i_in", n, "c_out", body)
    if row == "sum":
        body += [_c("ax1", [1]), h.make_node("ReduceSum", ["x", "ax1"], ["row"], keepdims=1)]
    else:
        body.append(h.make_node("Identity", ["x"], ["row"]))
    b = h.make_graph(
        body,
        "body",
        [
            h.make_tensor_value_info("it", T.INT64, []),
            h.make_tensor_value_info("c_in", T.BOOL, []),
            h.make_tensor_value_info("i_in", T.INT64, []),
        ],
        [
            h.make_tensor_value_info("c_out", T.BOOL, []),
            h.make_tensor_value_info("i_out", T.INT64, []),
            h.make_tensor_value_info("row", T.FLOAT, None if row_decl is None else list(row_decl)),
        ],
    )
    nodes.append(h.make_node("Loop", [trip, cond, v0], ["i_final", "rows"], body=b))
    outputs = [h.make_tensor_value_info("i_final", T.INT64, None), h.make_tensor_value_info("rows", T.FLOAT, None)]
    g = h.make_graph(nodes, "g", graph_inputs, outputs)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _runs(m: onnx.ModelProto, extra: dict | None = None) -> list[tuple[dict, dict]]:
    runs = []
    for b, s in SIZES:
        for more in extra or [{}]:
            runs.append(({"b": b, "seq": s}, {"x": _x(b, s, None), **more}))
    return runs


#: (builder keywords, the inferred count: an expression over b and seq, or None for a fresh symbol)
CASES = [
    # the common tf2onnx pattern and counters that start elsewhere (the entry condition decides
    # whether the loop runs at all: max(0, ...) where it may not)
    ({}, "seq"),
    ({"start": "3"}, "max(0, seq - 3)"),
    ({"start": "-2"}, "seq + 2"),
    ({"start": "seq", "step": -1, "op": "Greater", "bound": "seq-4"}, "4"),
    # steps other than 1: exact, or unknown when the step is not a constant
    ({"step": 2}, "(seq + 1)//2"),
    ({"start": "1", "step": 3}, "max(0, (seq + 1)//3)"),
    ({"step": "double"}, None),
    # the condition on the counter before its step: one more iteration; unproven when the entry
    # condition is not known (it is then not the body's at the start)
    ({"after": False}, "seq + 1"),
    ({"after": False, "start": "3"}, None),
    ({"op": "LessOrEqual"}, "seq + 1"),
    ({"op": "LessOrEqual", "start": "1"}, "seq"),
    # a condition on the data decides nothing
    ({"bound": "data"}, None),
    # M smaller than the bound, M unknown (a graph input), M possibly negative, no condition
    ({"m": "3"}, "min(seq, 3)"),
    ({"m": "seq//2"}, "seq//2"),
    ({"m": "input"}, None),
    ({"m": "seq-10", "op": None, "entry": "none"}, "max(0, seq - 10)"),
    # a bound that may be 0 or negative: no iteration below it
    ({"bound": "seq-4"}, "max(0, seq - 4)"),
    ({"bound": "seq//2"}, "seq//2"),
    # the comparisons in float, as tf2onnx writes them
    ({"floats": True}, "seq"),
    ({"floats": True, "op": "LessOrEqual", "start": "1"}, "seq"),
]


@pytest.mark.parametrize(("kw", "count"), CASES, ids=[str(kw) for kw, _ in CASES])
def test_loop_count_is_exact_or_unknown(kw, count):
    """The scan output's leading dim is the number of iterations onnxruntime runs (every tensor
    checked at each size), or a fresh symbol where the body's structure does not prove it."""
    m = counter_loop(**kw)
    extra = [{"mm": np.array(v, np.int64)} for v in (-1, 0, 2, 5, 100)] if kw.get("m") == "input" else None
    r, _ = _agree(m, _runs(m, extra))
    lead = r.dims("rows")[0]
    if count is None:
        assert _is_fresh(r, lead), D.format(lead)
    else:
        assert lead == D.parse(count), D.format(lead)


def test_an_unknown_trip_count_bounds_the_loop():
    """``M`` given as data: the count is at most ``M``, whatever the condition allows (it was taken
    to be the condition's ``seq``, wrong when ``M`` is smaller)."""
    m = counter_loop(m="input")
    r = shapeinfer.infer(m)
    out = ort_oracle.run(m, {"x": _x(2, 7, None), "mm": np.array(3, np.int64)})[1]
    assert out.shape == (3, 2, 7)
    assert _is_fresh(r, r.dims("rows")[0])


@pytest.mark.parametrize(("decl", "row"), [(("b", "seq"), "x"), (("b", 1), "sum"), (None, "x")])
def test_dims_after_a_count_that_may_be_zero_are_onnxruntimes(decl, row):
    """After no iteration (seq <= 4 here) onnxruntime gives the scan output ``[0, *declared dims]``
    with 0 for a dim that is not a number: the dims are written to be right either way
    (``b*min(1, count)``: b after an iteration, 0 after none; a declared number stays). Where
    the body output declares no shape, the zero-iteration shape is whatever onnx's inference of
    the body knows (here ``[b, seq]``, so ``[0, 0, 0]``; ``[0]`` where it knows no shape, see
    test_control_flow): the rank is left unknown."""
    m = counter_loop(bound="seq-4", row=row, row_decl=decl)
    r, unresolved = _agree(m, _runs(m))
    got = r.dims("rows")
    if decl is None:
        assert got is None
        assert ort_oracle.run(m, {"x": _x(2, 3, None)})[1].shape == (0, 0, 0)
        return
    assert got[0] == D.parse("max(0, seq - 4)")
    assert "rows" not in unresolved
    if row == "sum":
        assert got[2] == 1


@pytest.mark.parametrize("kw", [{"entry": "false"}, {"m": "0"}, {"m": "-3"}])
def test_a_loop_that_never_runs_stacks_nothing(kw):
    """A condition false on entry, or M <= 0: the scan output is ``[0, 0, 0]`` here (the body
    output is declared ``[b, seq]``), as onnxruntime gives it, not the body's ``[0, b, seq]``."""
    m = counter_loop(**kw)
    r, unresolved = _agree(m, _runs(m))
    assert r.dims("rows") == (0, 0, 0)
    assert "rows" not in unresolved


def test_two_counters_closing_in():
    """``i`` up by 1 and ``n`` (carried, from seq) down by 1 until ``i >= n``: both are counters,
    the condition's margin falls by 2 per iteration: ``ceil(seq / 2)`` iterations."""
    body = h.make_graph(
        [
            _c("one", 1),
            h.make_node("Add", ["i_in", "one"], ["i_out"]),
            h.make_node("Sub", ["n_in", "one"], ["n_out"]),
            h.make_node("Less", ["i_out", "n_out"], ["c_out"]),
            h.make_node("Identity", ["x"], ["row"]),
        ],
        "body",
        [
            h.make_tensor_value_info(n, t, [])
            for n, t in (("it", T.INT64), ("c_in", T.BOOL), ("i_in", T.INT64), ("n_in", T.INT64))
        ],
        [
            h.make_tensor_value_info("c_out", T.BOOL, []),
            h.make_tensor_value_info("i_out", T.INT64, []),
            h.make_tensor_value_info("n_out", T.INT64, []),
            h.make_tensor_value_info("row", T.FLOAT, ["b", "seq"]),
        ],
    )
    nodes = [
        h.make_node("Shape", ["x"], ["sh"]),
        _c("one_i", 1),
        h.make_node("Gather", ["sh", "one_i"], ["s"]),
        _c("zero", 0),
        h.make_node("Less", ["zero", "s"], ["cond0"]),
        h.make_node("Loop", ["", "cond0", "zero", "s"], ["i_f", "n_f", "rows"], body=body),
    ]
    g = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, ["b", "seq"])],
        [h.make_tensor_value_info("rows", T.FLOAT, None)],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)
    r, _ = _agree(m, _runs(m))
    assert r.dims("rows") == (D.parse("(seq + 1)//2"), D.sym("b"), D.sym("seq"))


# ------------------------------------------------------------------------------ written models


@pytest.mark.parametrize("name", [*sorted(FIXTURES), "tf_while_n_input"])
def test_written_loop_models_run_wherever_their_input_runs(name):
    """``-o`` and ``optimize -o`` of the tf2onnx loops run in onnxruntime (default session
    options) with the same outputs at every size of the grid, seq = 1 (no iteration at all for
    some) included."""
    m = onnx.load(str(EXPORTERS / f"{name}.onnx"))
    grid = size_grid(set(axis_keys(m).values()), [{"batch": 2, "seq": 4}, {"batch": 1, "seq": 5}])
    # tf_while_n_input's n is drawn from [0, 10): the original fails where it exceeds seq
    need = 2 if name == "tf_while_n_input" else len(grid)
    for written in (shapeinfer.infer_shapes(m), shapeinfer.optimize(m)):
        runs, problems = written_problems(m, written, grid)
        assert runs >= need and not problems, problems


@pytest.mark.parametrize("kw", [{"bound": "seq-4"}, {"bound": "seq-4", "row": "sum", "row_decl": ("b", 1)}, {"m": "0"}])
def test_written_models_with_loops_that_may_not_run(kw):
    """The dims written after a count that may be 0 hold at the sizes with no iteration too."""
    m = counter_loop(**kw)
    grid = size_grid(set(axis_keys(m).values()), [{"b": 2, "seq": 4}, {"b": 3, "seq": 5}, {"b": 1, "seq": 6}])
    for written in (shapeinfer.infer_shapes(m), shapeinfer.optimize(m)):
        runs, problems = written_problems(m, written, grid)
        assert runs == len(grid) and not problems, problems
