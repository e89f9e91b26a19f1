"""Exporters' shape-arithmetic idioms (issue 22): padding to a multiple with Mod, truncating
integer Div, Mod of a constant by a symbol, integer values through float and back. Each idiom
is a model checked tensor by tensor against onnxruntime at two bindings (where its guards hold),
and the algebra under it is checked against brute force, negative operands included."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import shapeinfer
from shapeinfer.analysis.verify import compare
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.guards import check
from testkit import ort_oracle


def c(name, v, dt=np.int64):
    return h.make_node("Constant", [], [name], value=nh.from_array(np.array(v, dt), name + "_v"))


def vi(n, dt, shape):
    return h.make_tensor_value_info(n, dt, shape)


def mk(nodes, inputs, outputs, opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs)
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)


def _len(axis: int = 1) -> list:
    """Nodes giving ``s``, dim ``axis`` of input ``x`` as a scalar."""
    return [h.make_node("Shape", ["x"], ["sh"]), c("ax_", axis), h.make_node("Gather", ["sh", "ax_"], ["s"])]


def pad_to_multiple(k: int = 8) -> onnx.ModelProto:
    """x[b, seq] padded up to a multiple of k: ``pad = Mod(k - Mod(seq, k), k)`` (Mamba2's chunking)."""
    nodes = [
        *_len(),
        c("k", k),
        h.make_node("Mod", ["s", "k"], ["r"]),
        h.make_node("Sub", ["k", "r"], ["t"]),
        h.make_node("Mod", ["t", "k"], ["pad"]),
        c("z", [0]),
        c("zz", [0, 0, 0]),
        h.make_node("Unsqueeze", ["pad", "z"], ["pad1"]),
        h.make_node("Concat", ["zz", "pad1"], ["pads"], axis=0),
        h.make_node("Pad", ["x", "pads"], ["y"]),
    ]
    return mk(nodes, [vi("x", T.FLOAT, ["b", "seq"])], [vi("y", T.FLOAT, None)])


def truncating_div(off: int) -> onnx.ModelProto:
    """wav2vec2's feature-extractor length with integer Div: ``((samples/80 + off)/2 - 1)/2 + 1``."""
    nodes = [
        *_len(),
        c("c80", 80),
        c("off", off),
        c("two", 2),
        c("one", 1),
        h.make_node("Div", ["s", "c80"], ["a"]),
        h.make_node("Add", ["a", "off"], ["b_"]),
        h.make_node("Div", ["b_", "two"], ["d"]),
        h.make_node("Sub", ["d", "one"], ["e"]),
        h.make_node("Div", ["e", "two"], ["f"]),
        h.make_node("Add", ["f", "one"], ["n"]),
        c("z", [0]),
        h.make_node("Unsqueeze", ["n", "z"], ["n1"]),
        h.make_node("ConstantOfShape", ["n1"], ["y"], value=nh.from_array(np.array([1.0], np.float32), "v")),
    ]
    return mk(nodes, [vi("x", T.FLOAT, ["b", "samples"])], [vi("y", T.FLOAT, None)])


def mod_of_constant_by_symbol() -> onnx.ModelProto:
    """torch.roll in Swin's shifted windows: a Slice starting at ``Mod(2, 8*hb)``."""
    nodes = [
        *_len(),
        c("eight", 8),
        h.make_node("Mul", ["s", "eight"], ["w"]),
        c("two", 2),
        h.make_node("Mod", ["two", "w"], ["st"]),
        c("z", [0]),
        h.make_node("Unsqueeze", ["st", "z"], ["st1"]),
        c("big", [2**62]),
        c("ax", [1]),
        c("rep", [1, 8]),
        h.make_node("Tile", ["x", "rep"], ["x8"]),
        h.make_node("Slice", ["x8", "st1", "big", "ax"], ["y"]),
    ]
    return mk(nodes, [vi("x", T.FLOAT, ["b", "hb"])], [vi("y", T.FLOAT, None)])


def float_round_trip() -> onnx.ModelProto:
    """tf2onnx's Slice end: ``Cast(float) -> Max(-1e9) -> Min(1e9) -> Cast(int64)``."""
    nodes = [
        h.make_node("Shape", ["x"], ["sh"]),
        c("i1", [1]),
        h.make_node("Gather", ["sh", "i1"], ["s"]),
        c("one", [1]),
        h.make_node("Sub", ["s", "one"], ["e"]),
        h.make_node("Cast", ["e"], ["ef"], to=T.FLOAT),
        c("lo", [-1e9], np.float32),
        c("hi", [1e9], np.float32),
        h.make_node("Max", ["ef", "lo"], ["e1"]),
        h.make_node("Min", ["e1", "hi"], ["e2"]),
        h.make_node("Cast", ["e2"], ["ei"], to=T.INT64),
        c("st", [0]),
        h.make_node("Slice", ["x", "st", "ei", "i1"], ["y"]),
    ]
    return mk(nodes, [vi("x", T.FLOAT, ["b", "seq"])], [vi("y", T.FLOAT, None)])


def _agrees(m: onnx.ModelProto, bindings: list[dict]) -> shapeinfer.Result:
    """Every tensor agrees with onnxruntime at each binding (all of whose guards hold)."""
    r = shapeinfer.infer(onnx.ModelProto.FromString(m.SerializeToString()))
    for binding in bindings:
        assert all(check(g, binding) is not False for g in r.guards()), (binding, [g.text for g in r.guards()])
        actual = ort_oracle.run_all(m, ort_oracle.feeds(m, binding))
        for name, a in actual.items():
            reason, _, expected = compare(r.facts.get(name), a, binding)
            assert reason is None, (binding, name, reason, expected, np.asarray(a).shape)
    return r


def test_padding_to_a_multiple_is_a_ceiling():
    r = _agrees(pad_to_multiple(8), [{"b": 2, "seq": 7}, {"b": 1, "seq": 16}])
    assert r.dims("y") == (D.sym("b"), D.parse("8*((seq + 7)//8)"))
    assert r.guards() == []


def test_truncating_div_with_a_nonnegative_numerator_is_the_floor():
    r = _agrees(truncating_div(+3), [{"b": 1, "samples": 50}, {"b": 2, "samples": 1000}])
    assert not D.symbols(r.dims("y")[0]) - {"samples"} and r.guards() == []


def test_truncating_div_of_unproven_sign_is_the_truncation_where_the_model_runs():
    """Not a fresh symbol, and not the floor under a guard the model does not need: at samples =
    300 the numerator is negative, onnxruntime truncates it and runs, and the length inferred
    (so written) is that truncation. (A floor under the soft guard is taken only where a hard
    guard implies it: see test_vision_idioms.)"""
    m = truncating_div(-3)
    r = _agrees(m, [{"b": 1, "samples": s} for s in (80, 160, 300, 400, 1000)])
    (n,) = r.dims("y")
    assert D.symbols(n) == {"samples"}
    assert r.guards() == []


def test_mod_of_a_constant_by_a_larger_symbol_is_the_constant():
    r = _agrees(mod_of_constant_by_symbol(), [{"b": 2, "hb": 1}, {"b": 1, "hb": 3}])
    assert r.dims("y") == (D.sym("b"), D.parse("8*hb - 2"))


def test_integer_through_float_and_back_keeps_its_value_and_its_clamp_is_decided():
    r = _agrees(float_round_trip(), [{"b": 2, "seq": 7}, {"b": 1, "seq": 30}])
    assert r.dims("y") == (D.sym("b"), D.parse("seq - 1"))
    assert [g.text for g in r.guards()] == ["seq <= 16777217"]  # the float's exact range (G009)


# ------------------------------------------------------------------ the algebra, by brute force

_sym = D.sym("s")
small = st.integers(-9, 9)
nonzero = st.integers(-9, 9).filter(lambda x: x != 0)


@st.composite
def affine(draw):
    """``p*s + q`` or ``p*(s // r) + q`` with small (possibly negative) coefficients."""
    p, q = draw(small), draw(small)
    inner = _sym if draw(st.booleans()) else D.floordiv(_sym, draw(st.integers(1, 5)))
    return D.add(D.mul(p, inner), q)


@settings(max_examples=200, deadline=None)
@given(a=affine(), b=nonzero)
def test_mod_is_the_divisors_sign_for_any_dividend(a, b):
    m = D.mod(a, b)
    for s in range(1, 40):
        assert D.evaluate(m, {"s": s}) == D.evaluate(a, {"s": s}) % b


@settings(max_examples=200, deadline=None)
@given(a=affine(), b=nonzero, k=st.integers(1, 6))
def test_floordiv_decided_by_bounds_is_exact(a, b, k):
    """Floor division by a constant and by a positive symbolic multiple, wherever the bounds
    decide it, equals brute force."""
    for d in (b, D.mul(k, _sym)):
        q = D.floordiv(a, d)
        for s in range(1, 40):
            want = D.evaluate(a, {"s": s}) // D.evaluate(d, {"s": s})
            assert D.evaluate(q, {"s": s}) == want, (D.format(a), D.format(d), s)


@settings(max_examples=150, deadline=None)
@given(p=small, q=small, b=st.integers(1, 7))
def test_div_rule_matches_onnx_truncation_where_its_guards_hold(p, q, b):
    """Integer Div through the rule (guarded floor when the numerator's sign is unknown) equals
    C truncation at every binding where the guards it recorded hold."""
    nodes = [*_len(), c("p", p), c("q", q), c("b", b)]
    nodes += [
        h.make_node("Mul", ["s", "p"], ["ps"]),
        h.make_node("Add", ["ps", "q"], ["num"]),
        h.make_node("Div", ["num", "b"], ["quot"]),
    ]
    m = mk(nodes, [vi("x", T.FLOAT, ["b0", "n"])], [vi("quot", T.INT64, None)])
    r = shapeinfer.infer(m)
    v = r.facts["quot"].value
    if v is None or v[0] is None:
        pytest.skip("left unknown")
    for n in range(1, 30):
        binding = {"n": n, "b0": 1}
        num = p * n + q
        want = abs(num) // b * (1 if num >= 0 else -1)
        if all(check(g, binding) is not False for g in r.guards()):
            assert D.evaluate(v[0], binding) == want, (p, q, b, n, [g.text for g in r.guards()])


# ------------------------------------------------------------------ loop counts (idiom 5)


def while_loop(counter: bool = True, trip="n", step: int = 1, op: str = "Less") -> onnx.ModelProto:
    """tf2onnx's ``tf.while_loop(i < n)``: ``Loop(M, Less(0, n), i=0)`` whose body adds ``step``
    to ``i`` (or uses the iteration number) and ends on ``op(i + step, n)``; a row of ``x`` is
    stacked per iteration. ``trip`` is ``"n"``, ``"max"`` (INT64_MAX, no count) or an int."""
    body_nodes = [c("st", step)]
    if counter:
        body_nodes += [h.make_node("Add", ["i_in", "st"], ["i_out"]), h.make_node(op, ["i_out", "n"], ["cond_out"])]
    else:
        body_nodes += [
            h.make_node("Add", ["it", "st"], ["i1"]),
            h.make_node(op, ["i1", "n"], ["cond_out"]),
            h.make_node("Identity", ["i_in"], ["i_out"]),
        ]
    body_nodes.append(h.make_node("Identity", ["x"], ["row"]))
    body = h.make_graph(
        body_nodes,
        "body",
        [vi("it", T.INT64, []), vi("cond_in", T.BOOL, []), vi("i_in", T.INT64, [])],
        [vi("cond_out", T.BOOL, []), vi("i_out", T.INT64, []), vi("row", T.FLOAT, None)],
    )
    nodes = [*_len(), h.make_node("Identity", ["s"], ["n"]), c("zero", 0), h.make_node(op, ["zero", "n"], ["cond0"])]
    if trip == "n":
        m = "n"
    else:
        nodes.append(c("mm", 2**63 - 1 if trip == "max" else trip))
        m = "mm"
    nodes.append(h.make_node("Loop", [m, "cond0", "zero"], ["i_final", "rows"], body=body))
    return mk(nodes, [vi("x", T.FLOAT, ["b", "seq"])], [vi("i_final", T.INT64, None), vi("rows", T.FLOAT, None)])


@pytest.mark.parametrize(
    ("kw", "count"),
    [
        ({}, "seq"),
        ({"counter": False}, "seq"),
        ({"trip": "max"}, "seq"),
        ({"trip": 5}, "min(seq, 5)"),
        ({"step": 2, "trip": "max"}, "(seq + 1)//2"),
        ({"op": "LessOrEqual", "trip": "max"}, "seq + 1"),
    ],
)
def test_a_loop_ended_by_its_counter_stacks_the_trip_count(kw, count):
    """The scan output's leading dim is the number of iterations the condition allows (and the
    trip count, when both end the loop), not a fresh symbol."""
    r = _agrees(while_loop(**kw), [{"b": 2, "seq": 7}, {"b": 1, "seq": 4}])
    assert r.dims("rows") == (D.parse(count), D.sym("b"), D.sym("seq"))
    assert r.guards() == []


def test_a_loop_ended_by_data_keeps_a_fresh_count():
    """A condition on the data (not a counter against an invariant bound) decides nothing."""
    m = while_loop()
    body = m.graph.node[-1].attribute[0].g
    for n in body.node:
        if n.op_type == "Less":
            n.input[1] = "data_bound"
    body.node.insert(0, h.make_node("ReduceMax", ["x"], ["mx"], keepdims=0))
    body.node.insert(1, h.make_node("Cast", ["mx"], ["data_bound"], to=T.INT64))
    r = _agrees(m, [{"b": 2, "seq": 7}])
    lead = r.dims("rows")[0]
    assert type(lead) is not int and D.symbols(lead) <= set(r.fresh_symbols)


# ------------------------------------------------------------------ float quotients


def float_div_then(op: str, scale: float = 2.0) -> onnx.ModelProto:
    """``Cast(seq, float) / 2.0``, then ``op`` (``Floor``: paddle2onnx's ``//``; ``Mul``: times
    ``scale``, exact), back to int64 and used as a Slice end on ``x``."""
    nodes = [
        h.make_node("Shape", ["x"], ["sh"]),
        c("i1", [1]),
        h.make_node("Gather", ["sh", "i1"], ["s"]),
        h.make_node("Cast", ["s"], ["sf"], to=T.FLOAT),
        c("two", [2.0], np.float32),
        h.make_node("Div", ["sf", "two"], ["q"]),
    ]
    if op == "Mul":
        nodes += [c("k", [scale], np.float32), h.make_node("Mul", ["q", "k"], ["r"])]
    else:
        nodes.append(h.make_node(op, ["q"], ["r"]))
    nodes += [
        h.make_node("Cast", ["r"], ["e"], to=T.INT64),
        c("st", [0]),
        h.make_node("Slice", ["x", "st", "e", "i1"], ["y"]),
    ]
    return mk(nodes, [vi("x", T.FLOAT, ["b", "seq"])], [vi("y", T.FLOAT, None)])


def test_float_division_is_not_integer_division():
    """``seq / 2.0 * 2.0`` is seq, not ``2*(seq//2)``: an inexact float quotient of a dim is
    unknown unless a Floor or Ceil makes it an integer again."""
    r = _agrees(float_div_then("Mul"), [{"b": 2, "seq": 7}, {"b": 1, "seq": 4}])
    assert r.dims("y")[1] != D.parse("2*(seq//2)")


@pytest.mark.parametrize(("op", "want"), [("Floor", "seq//2"), ("Ceil", "(seq + 1)//2")])
def test_floor_of_a_float_quotient_is_floor_division_under_a_guard(op, want):
    """Every integer up to 2**24 is exact in float32, 2**24 included: the guard was one too
    strict (``seq <= 16777215``; the vision sweep ran seq = 2**24 in onnxruntime, exact)."""
    r = _agrees(float_div_then(op), [{"b": 2, "seq": 7}, {"b": 1, "seq": 4}, {"b": 1, "seq": 2**24}])
    assert r.dims("y") == (D.sym("b"), D.parse(want))
    assert "seq <= 16777216" in [g.text for g in r.guards()]


@settings(max_examples=300, deadline=None)
@given(p=small, q=small, c=small, k=st.integers(1, 6))
def test_lower_bound_through_remainders_is_sound(p, q, c, k):
    """``dims.lower_bound`` of ``p*s + c*(s//k) + q`` (the remainder reasoning included) never
    exceeds the true minimum over positive sizes."""
    d = D.add(D.add(D.mul(p, _sym), D.mul(c, D.floordiv(_sym, k))), q)
    lb = D.lower_bound(d)
    if lb is not None:
        assert lb <= min(D.evaluate(d, {"s": s}) for s in range(1, 80)), D.format(d)


def test_a_loop_ended_by_a_conjunction_of_counters_runs_the_fewest():
    """tf2onnx's Keras RNN loop: ``And(Less(float(iter), float(n)), Less(float(i + 1), float(n)))``
    with M = n: the scan output has n rows (the second comparison ends it first)."""
    m = while_loop()
    body = m.graph.node[-1].attribute[0].g
    cond = next(n for n in body.node if n.op_type == "Less")
    cond.output[0] = "c_counter"
    body.node.extend(
        [
            h.make_node("Cast", ["it"], ["itf"], to=T.FLOAT),
            h.make_node("Cast", ["n"], ["nf"], to=T.FLOAT),
            h.make_node("Less", ["itf", "nf"], ["c_iter"]),
            h.make_node("And", ["c_iter", "c_counter"], ["cond_out"]),
        ]
    )
    r = _agrees(m, [{"b": 2, "seq": 7}, {"b": 1, "seq": 4}])
    assert r.dims("rows") == (D.sym("seq"), D.sym("b"), D.sym("seq"))


def float_scale(scale: float = 1.5) -> onnx.ModelProto:
    """torch's ``F.interpolate(size=(int(h * 1.5), int(w * 1.5)))`` as exported: the sizes are
    ``Cast(Cast(hw, float) * 1.5, int)`` (truncation), then a Resize to them."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"]),
        c("two", [2]),
        c("four", [4]),
        c("zero", [0]),
        h.make_node("Slice", ["s", "two", "four"], ["hw"]),
        h.make_node("Cast", ["hw"], ["hwf"], to=T.FLOAT),
        c("k", scale, np.float32),
        h.make_node("Mul", ["hwf", "k"], ["m"]),
        h.make_node("Cast", ["m"], ["m64"], to=T.INT64),
        h.make_node("Slice", ["s", "zero", "two"], ["bc"]),
        h.make_node("Concat", ["bc", "m64"], ["sizes"], axis=0),
        h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest"),
    ]
    return mk(nodes, [vi("x", T.FLOAT, ["b", 3, "h", "w"])], [vi("y", T.FLOAT, None)])


@pytest.mark.parametrize(("scale", "want"), [(1.5, "h + h//2"), (0.75, "(3*h)//4"), (2.0, "2*h")])
def test_truncating_a_dim_times_a_dyadic_float_is_floor_division(scale, want):
    r = _agrees(float_scale(scale), [{"b": 1, "h": 7, "w": 5}, {"b": 2, "h": 4, "w": 9}])
    assert r.dims("y")[2] == D.parse(want)


def pads_by_padding() -> onnx.ModelProto:
    """Keras 3's export builds a Pad's pads by Pad-ing a small int tensor (then Transpose and
    Reshape): the values must survive the inner Pads."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"], start=1, end=2),
        c("one1", [1]),
        c("two1", [2]),
        c("zero1", [0]),
        c("m1", [-1]),
        c("padA", [1, 0, 0, 0]),
        c("padB", [0, 0, 1, 0]),
        h.make_node("Add", ["s", "one1"], ["a"]),
        h.make_node("Div", ["a", "two1"], ["b2"]),
        h.make_node("Mul", ["b2", "two1"], ["c2"]),
        h.make_node("Sub", ["c2", "s"], ["r"]),
        h.make_node("Add", ["r", "two1"], ["e"]),
        h.make_node("Concat", ["two1", "e"], ["pe"], axis=0),
        h.make_node("Unsqueeze", ["pe", "zero1"], ["p12"]),
        h.make_node("Pad", ["p12", "padA"], ["p22"]),
        h.make_node("Pad", ["p22", "padB"], ["p32"]),
        h.make_node("Transpose", ["p32"], ["p23"], perm=[1, 0]),
        h.make_node("Reshape", ["p23", "m1"], ["pads"]),
        h.make_node("Pad", ["x", "pads"], ["y"]),
    ]
    return mk(nodes, [vi("x", T.FLOAT, ["b", "seq", 16])], [vi("y", T.FLOAT, None)])


def test_values_survive_a_pad_of_the_pads():
    r = _agrees(pads_by_padding(), [{"b": 2, "seq": 7}, {"b": 1, "seq": 10}])
    assert not set().union(*(D.symbols(d) for d in r.dims("y") if type(d) is not int)) - {"b", "seq"}


@settings(max_examples=300, deadline=None)
@given(p=small, q=small, c=small, k=st.integers(1, 6), use_min=st.booleans())
def test_lower_bound_through_min_max_arguments_is_sound(p, q, c, k, use_min):
    """``dims.lower_bound`` of ``p*s + c*max(s//k - 1, 0) + q`` (or min), where the argument
    reasoning applies, never exceeds the true minimum over positive sizes."""
    inner = D.sub(D.floordiv(_sym, k), 1)
    atom = D.dmin(inner, 3) if use_min else D.dmax(inner, 0)
    d = D.add(D.add(D.mul(p, _sym), D.mul(c, atom)), q)
    lb = D.lower_bound(d)
    if lb is not None:
        assert lb <= min(D.evaluate(d, {"s": s}) for s in range(1, 80)), D.format(d)


def test_a_flip_of_a_flip_keeps_its_length():
    """torch.flip twice (wav2vec2's feature mask): each flip is a Slice with step -1 whose
    length is ``min(d, max(d - 1, 0) + 1)``, which is ``d``."""
    nodes = [
        *_len(),
        c("five", 5),
        h.make_node("Div", ["s", "five"], ["n"]),
        c("z", [0]),
        h.make_node("Unsqueeze", ["n", "z"], ["n1"]),
        c("one", [1]),
        h.make_node("Slice", ["x", "z", "n1", "one"], ["xs"]),
        c("m1", [-1]),
        c("lo", [-(2**63)]),
        h.make_node("Slice", ["xs", "m1", "lo", "one", "m1"], ["f1"]),
        h.make_node("Slice", ["f1", "m1", "lo", "one", "m1"], ["y"]),
    ]
    m = mk(nodes, [vi("x", T.FLOAT, ["b", "s"])], [vi("y", T.FLOAT, None)])
    r = _agrees(m, [{"b": 2, "s": 47}, {"b": 1, "s": 3}])
    assert r.dims("y") == (D.sym("b"), D.parse("s//5"))


def test_a_symbol_broadcast_against_an_int_is_not_assumed_equal_to_it():
    """``[b, 4, 128] + [b, 1, 4, 1, 128]``: b meets 4 on one axis, and runs at b = 1 as at b = 4.
    The result there is 4 under the guard ``b == 1 or b == 4``; b itself stays b elsewhere."""
    nodes = [h.make_node("Add", ["x", "z"], ["y"])]
    m = mk(nodes, [vi("x", T.FLOAT, ["b", 4, 128]), vi("z", T.FLOAT, ["b", 1, 4, 1, 128])], [vi("y", T.FLOAT, None)])
    r = _agrees(m, [{"b": 1}, {"b": 4}])
    assert r.dims("y") == (D.sym("b"), 1, 4, 4, 128)
    assert [g.text for g in r.guards()] == ["b == 1 or b == 4"]
    assert not [d for d in r.diagnostics if d.code == "G003"]


def crop_select(form: str) -> onnx.ModelProto:
    """tf2onnx's BatchToSpaceND crop (dilated convolutions): x[b, h] padded to an even length,
    ``crop = 2*((h + 1)//2) - h``, then cropped with ``end = crop == 0 ? INT32_MAX : -crop``,
    written arithmetically (Equal, Not, Cast, Neg, Mul, Add) or as a Where."""
    nodes = [
        h.make_node("Shape", ["x"], ["s"], start=1, end=2),
        c("one1", [1]),
        c("two1", [2]),
        c("zero1", [0]),
        c("imax", [2**31 - 1]),
        h.make_node("Add", ["s", "one1"], ["a"]),
        h.make_node("Div", ["a", "two1"], ["b_"]),
        h.make_node("Mul", ["b_", "two1"], ["cc"]),
        h.make_node("Sub", ["cc", "s"], ["crop"]),
        h.make_node("Concat", ["zero1", "zero1", "zero1", "crop"], ["pads"], axis=0),
        h.make_node("Pad", ["x", "pads"], ["xp"]),
        h.make_node("Equal", ["crop", "zero1"], ["eq"]),
        h.make_node("Neg", ["crop"], ["ncrop"]),
    ]
    if form == "arithmetic":
        nodes += [
            h.make_node("Not", ["eq"], ["ne"]),
            h.make_node("Cast", ["ne"], ["nei"], to=T.INT64),
            h.make_node("Mul", ["ncrop", "nei"], ["p1"]),
            h.make_node("Cast", ["eq"], ["eqi"], to=T.INT64),
            h.make_node("Mul", ["imax", "eqi"], ["p2"]),
            h.make_node("Add", ["p1", "p2"], ["end"]),
        ]
    else:
        nodes += [h.make_node("Where", ["eq", "imax", "ncrop"], ["end"])]
    nodes += [h.make_node("Slice", ["xp", "zero1", "end", "one1"], ["y"])]
    return mk(nodes, [vi("x", T.FLOAT, ["b", "h"])], [vi("xp", T.FLOAT, None), vi("y", T.FLOAT, None)])


@pytest.mark.parametrize("form", ["arithmetic", "where"])
def test_a_crop_whose_sign_depends_on_parity_is_decided_by_cases(form):
    """The crop end is INT32_MAX for even h and -1 for odd h: each residue decides the clamp,
    and the two cases recombine into one length, exactly (no guard)."""
    r = _agrees(crop_select(form), [{"b": 2, "h": 9}, {"b": 1, "h": 16}, {"b": 1, "h": 1}, {"b": 3, "h": 2}])
    assert r.dims("y") == (D.sym("b"), D.sym("h"))
    assert r.guards() == []


def even_slice_of_nested_floor() -> onnx.ModelProto:
    """torch's conv_stack: ``n = (s//10 + 1)//2 - 1`` with int64 Div, then x[:, :2*(n//2)]."""
    nodes = [
        h.make_node("Shape", ["x"], ["sh"], start=1, end=2),
        c("z", [0]),
        h.make_node("Squeeze", ["sh", "z"], ["n0"]),
        c("ten", 10),
        c("one", 1),
        c("two", 2),
        h.make_node("Div", ["n0", "ten"], ["a"]),
        h.make_node("Add", ["a", "one"], ["b_"]),
        h.make_node("Div", ["b_", "two"], ["cc"]),
        h.make_node("Sub", ["cc", "one"], ["n"]),
        h.make_node("Div", ["n", "two"], ["q"]),
        h.make_node("Mul", ["q", "two"], ["e"]),
        h.make_node("Unsqueeze", ["e", "z"], ["e1"]),
        c("one1", [1]),
        h.make_node("Slice", ["x", "z", "e1", "one1"], ["y"]),
    ]
    return mk(nodes, [vi("x", T.FLOAT, ["b", "s"])], [vi("y", T.FLOAT, None)])


def test_a_slice_end_nested_in_floors_is_exact_at_every_size():
    """The truncating Div of ``n`` is the floor for ``s >= 10`` only; below, ``n`` is -1 and
    the Div truncates it to 0, and the model runs (an empty slice). Nothing needs ``s >= 10``,
    so the length is the truncation's, right at every size (remainders of nested divisions
    cancel in its clamps), not a fresh symbol nor a floor under a guard."""
    r = _agrees(even_slice_of_nested_floor(), [{"b": 1, "s": s} for s in (*range(1, 31), 400, 999)])
    (b, n) = r.dims("y")
    assert b == D.sym("b") and D.symbols(n) == {"s"}
    for s in range(10, 200):
        assert D.evaluate(n, {"s": s}) == 2 * ((((s // 10) + 1) // 2 - 1) // 2)
    assert r.guards() == []


@settings(max_examples=300, deadline=None)
@given(p=small, q=small, c=small, k1=st.integers(1, 6), k2=st.integers(1, 6), a=small)
def test_lower_bound_through_nested_remainders_is_sound(p, q, c, k1, k2, a):
    """``dims.lower_bound`` of ``p*s + c*((s//k1 + a)//k2) + q`` over a range of ``s`` never
    exceeds the true minimum there."""
    d = D.add(D.add(D.mul(p, _sym), D.mul(c, D.floordiv(D.add(D.floordiv(_sym, k1), a), k2))), q)
    lb = D.lower_bound(d, {"s": (5, 90)})
    if lb is not None:
        assert lb <= min(D.evaluate(d, {"s": s}) for s in range(5, 91)), D.format(d)


@settings(max_examples=300, deadline=None)
@given(
    p=st.integers(-2, 2),
    q=st.integers(-3, 3),
    c=small,
    m=st.integers(2, 4),
    a=st.integers(0, 3),
    step=st.sampled_from([1, 2, -1]),
)
@example(p=-2, q=2, c=1, m=2, a=0, step=-1)  # h = 1: an empty dim, where a quotient of 0 broke the algebra
def test_slice_length_by_residue_is_exact(p, q, c, m, a, step):
    """Whatever ``slice_len`` answers for an end ``p*h + q*((h + a)//m) + c`` of a dim
    ``m*((h + a)//m)`` (a residue split where the sign is open) equals the ONNX length at every
    ``h`` in range."""
    from shapeinfer.inference.ops.gather_slice import onnx_slice_range, slice_len

    fl = D.floordiv(D.add(_sym, a), m)
    d = D.mul(m, fl)
    end = D.add(D.add(D.mul(p, _sym), D.mul(q, fl)), c)
    n = slice_len(d, 0, end, step, {"s": (1, None)})
    if n is None:
        return
    for s in range(1, 60):
        b = {"s": s}
        want = len(onnx_slice_range(D.evaluate(d, b), 0, D.evaluate(end, b), step))
        assert D.evaluate(n, b) == want, (D.format(n), s)


@settings(max_examples=300, deadline=None)
@given(
    p=st.integers(-2, 2),
    q=st.integers(-3, 3),
    c=small,
    m=st.integers(2, 4),
    a=st.integers(0, 3),
    op=st.sampled_from(["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]),
)
@example(p=-1, q=2, c=0, m=2, a=1, op="Equal")  # tf2onnx's crop, 0 or 1
@example(p=1, q=-2, c=0, m=2, a=1, op="Less")  # its negation, -1 or 0
@example(p=1, q=-2, c=0, m=2, a=1, op="LessOrEqual")  # always true there: decided as 1
@example(p=1, q=-3, c=1, m=3, a=0, op="GreaterOrEqual")  # s % 3 + 1: three values, stays open
def test_a_two_valued_comparison_is_its_exact_indicator(p, q, c, m, a, op):
    """Whatever value a comparison of ``p*s + q*((s + a)//m) + c`` with 0 is given (an int, or a
    0/1 expression where the difference takes two values) equals the comparison at every ``s``."""
    from types import SimpleNamespace

    from shapeinfer.inference.ops.elementwise import _TESTS, _two_valued_cmp_in
    from shapeinfer.symbolic.scope import SymbolScope

    x = D.add(D.add(D.mul(p, _sym), D.mul(q, D.floordiv(D.add(_sym, a), m))), c)
    v = _two_valued_cmp_in(SimpleNamespace(symbols=SymbolScope()), _TESTS[op])(x, 0)
    if (p, q, c, m, a, op) in ((-1, 2, 0, 2, 1, "Equal"), (1, -2, 0, 2, 1, "Less")):
        assert isinstance(v, D.Expr)  # decided as an expression, not left unknown
    if v is None:
        return
    for s in range(1, 60):
        x_s = D.evaluate(x, {"s": s})
        assert D.evaluate(v, {"s": s}) == int(_TESTS[op]((x_s > 0) - (x_s < 0))), (D.format(x), D.format(v), s)


def test_a_non_strict_comparison_is_decided_by_a_non_strict_bound():
    """LessOrEqual(1, seq) is true (seq >= 1); GreaterOrEqual(1, seq) is true at seq = 1 only."""
    nodes = [*_len(), c("one_", 1), h.make_node("LessOrEqual", ["one_", "s"], ["le"])]
    nodes.append(h.make_node("GreaterOrEqual", ["one_", "s"], ["ge"]))
    m = mk(nodes, [vi("x", T.FLOAT, ["b", "seq"])], [vi("le", T.BOOL, None), vi("ge", T.BOOL, None)])
    r = _agrees(m, [{"b": 1, "seq": 1}, {"b": 2, "seq": 5}])
    assert r.facts["le"].value == (1,) and r.facts["ge"].value == (None,)
