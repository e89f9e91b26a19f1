"""The symbolic scope (:mod:`shapeinfer.symbolic.scope`): its history (checkpoint / rollback /
trial), unification, and the property that matters to users: a branch or body that does not run
leaves no guard and no equality behind (issue 21, case 2). Dead branches are checked against
onnxruntime, which runs the bindings the guards would have refused."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import shapeinfer
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.cli.main import main as cli_main
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.scope import SymbolScope

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
n, m = D.sym("n"), D.sym("m")


# ------------------------------------------------------------------ the scope itself


def test_rollback_restores_substitution_equalities_and_guards():
    s = SymbolScope()
    s.add_inputs({"n", "m"})
    u = s.fresh()
    s.unify(u, n, "a")
    mark = s.checkpoint()
    v = s.fresh()
    s.unify(v, D.mul(n, 2), "b")
    s.unify(m, n, "c")  # binds one input symbol to the other
    s.assume("divisibility", n, 3, "d")
    assert s.resolve(m) == s.resolve(n) and s.resolve(v) == D.mul(s.resolve(n), 2)
    s.rollback(mark)
    assert s.subst == {"unk_0": n}
    assert s.equalities == [("n", "unk_0")]
    assert [e[3] for e in s.guard_events] == ["a"]
    assert s.resolve(m) == m and s.resolve(n) == n and s.resolve(v) == v
    assert s.fresh_symbols == ["unk_0", "unk_1"]  # drawn symbols stay unless released
    s.rollback(mark, release_fresh=True)
    assert s.fresh_symbols == ["unk_0"]


def test_rollback_of_a_run_that_may_not_happen_keeps_its_guards_as_alternatives():
    """``runs_when``: the undone run happens exactly where that dim is at least 1, so each hard
    guard on input symbols it took stays as "the guard, or runs_when <= 0"; nothing it bound
    stays; a guard on a fresh symbol, a soft guard and a guard runs_when >= 1 implies are not
    made conditional (the soft one stays soft, as keep_soft says)."""
    s = SymbolScope()
    s.add_inputs({"n"})
    mark = s.checkpoint()
    s.unify(n, 64, "gemm")  # binds n
    s.assume("bound", 4, n, "pool")  # implied by n - 3 >= 1
    s.assume("bound", s.fresh(), n, "nonzero")  # names a fresh symbol
    s.assume("bound", 2, n, "div", soft=True)
    s.rollback(mark, keep_soft=True, runs_when=D.sub(n, 3))
    assert s.subst == {} and s.resolve(n) == n
    kept = [(kind, D.format(a), D.format(b), node) for kind, a, b, node in s.guard_events]
    assert kept == [("bound", "2", "n", "div"), ("bound", "min(n - 3, max(-n + 64, n - 64))", "0", "gemm")]
    assert s.soft == [0]
    s2 = SymbolScope()
    s2.add_inputs({"n"})
    mark = s2.checkpoint()
    s2.unify(n, 64, "gemm")
    s2.rollback(mark, runs_when=s2.fresh())  # no dim over the inputs says where it runs
    assert s2.guard_events == []


def test_rollback_restores_a_rebound_symbol():
    s = SymbolScope()
    a, b = s.fresh(), s.fresh()
    s.unify(a, b)  # one of them bound to the other
    before = dict(s.subst)
    mark = s.checkpoint()
    s.unify(b, 7)
    s.unify(a, 7)
    s.rollback(mark)
    assert s.subst == before


def test_trial_keeps_only_when_asked():
    s = SymbolScope()
    s.add_inputs({"n"})
    with s.trial():
        s.assume("bound", n, 512)
    assert s.guard_events == []
    with s.trial() as t:
        s.assume("bound", n, 512)
        t.keep = True
    assert len(s.guard_events) == 1


def test_changed_since():
    s = SymbolScope()
    mark = s.checkpoint()
    assert not s.changed_since(mark)
    s.fresh()
    assert s.changed_since(mark)


def test_unify_prefers_input_symbols_and_refuses_two_ints():
    s = SymbolScope()
    s.add_inputs({"n"})
    u = s.fresh()
    rep, other = s.unify(u, n)
    assert rep == n and other == u and s.subst == {"unk_0": n}
    assert s.unify(n, u) == (n, None)  # already equal through the substitution
    with pytest.raises(InferenceError) as e:
        s.unify(3, 4)
    assert e.value.code == "G002"


def test_bounds_and_proofs_use_the_ranges():
    s = SymbolScope({"seq": (1, 512)})
    seq = D.sym("seq")
    assert s.interval(D.add(seq, 1)) == (2, 513)
    assert s.prove_le(seq, 512) and not s.prove_le(seq, 511)
    assert s.simplify(D.dmin(seq, 1024)) == seq
    assert s.prove_eq(D.dmin(seq, 600), seq)


# ------------------------------------------------------------------ dead branches (case 2)


def _vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def _const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name + "_v"))


def _model(nodes, inputs, outputs, opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _reshape_body(name: str, src: str, k: int, dead: bool) -> onnx.GraphProto:
    """A branch giving ``src`` reshaped to ``[-1, k]`` (``dead``) or ``src`` flattened to 1-D
    through an Identity-like path that imposes nothing (the branch "removed")."""
    if dead:
        nodes = [
            _const(f"{name}_s", np.array([-1, k], np.int64)),
            helper.make_node("Reshape", [src, f"{name}_s"], [f"{name}_o"]),
        ]
    else:
        nodes = [helper.make_node("Identity", [src], [f"{name}_o"])]
    return helper.make_graph(nodes, name, [], [_vi(f"{name}_o", F, None)])


def _dead_if_model(cond: bool, dead: bool, k: int = 3) -> onnx.ModelProto:
    taken = helper.make_graph([helper.make_node("Identity", ["x"], ["t_o"])], "t", [], [_vi("t_o", F, None)])
    other = _reshape_body("e", "x", k, dead)
    then_g, else_g = (taken, other) if cond else (other, taken)
    nodes = [
        _const("c", np.array(cond)),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
    ]
    return _model(nodes, [_vi("x", F, ["n"])], [_vi("y", F, None)])


@pytest.mark.parametrize("cond", [True, False])
def test_dead_if_branch_imposes_no_guard(cond):
    r = shapeinfer.infer(_dead_if_model(cond, dead=True))
    assert r.guards() == [] and r.equalities == []
    assert r.dims("y") == (n,)
    assert not [d for d in r.diagnostics if d.code == "G012"]


def test_dead_if_branch_verify_runs_a_binding_the_dead_guard_would_refuse(tmp_path):
    pytest.importorskip("onnxruntime")
    p = tmp_path / "dead.onnx"
    onnx.save(_dead_if_model(True, dead=True), p)
    res = CliRunner().invoke(cli_main, ["verify", str(p), "--bind", "n=4"])
    assert res.exit_code == 0, res.output
    assert "violates" not in res.output and "n % 3" not in res.output


def test_live_if_branch_still_imposes_its_guard():
    """The taken branch's Reshape does run: its guard stays (only dead ones are dropped)."""
    reshape = _reshape_body("e", "x", 3, True)
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["t_o"])], "t", [], [_vi("t_o", F, None)])
    nodes = [_const("c", np.array(True)), helper.make_node("If", ["c"], ["y"], then_branch=reshape, else_branch=other)]
    r = shapeinfer.infer(_model(nodes, [_vi("x", F, ["n"])], [_vi("y", F, None)]))
    assert [g.text for g in r.guards()] == ["n % 3 == 0"]


# ------------------------------------------------------------------ the property


def _fingerprint(r) -> tuple:
    return (
        sorted(g.text for g in r.guards()),
        sorted(r.equalities),
        sorted((g.kind, D.format(g.lhs), D.format(g.rhs)) for g in r.ledger()),
    )


def _live_prefix(live: list[int]) -> tuple[list, str]:
    """Live Reshapes of ``x[n, m]`` to ``[-1, k]`` one after another (each a real guard); the
    last one's output name."""
    nodes, src = [], "x"
    for i, k in enumerate(live):
        nodes += [
            _const(f"ls{i}", np.array([-1, k], np.int64)),
            helper.make_node("Reshape", [src, f"ls{i}"], [f"l{i}"]),
        ]
        src = f"l{i}"
    return nodes, src


def _construct(kind: str, src: str, ks: list[int], dead: bool, cond: bool) -> tuple[list, onnx.ValueInfoProto]:
    """Nodes computing ``out`` from ``src`` through a control-flow construct whose untaken
    part reshapes to ``[-1, k]`` for each k in ``ks`` (or does nothing when not ``dead``)."""

    def chain(prefix: str, inp: str) -> tuple[list, str]:
        nodes, cur = [], inp
        for i, k in enumerate(ks):
            if dead:
                nodes += [
                    _const(f"{prefix}s{i}", np.array([-1, k], np.int64)),
                    helper.make_node("Reshape", [cur, f"{prefix}s{i}"], [f"{prefix}r{i}"]),
                ]
            else:
                nodes.append(helper.make_node("Identity", [cur], [f"{prefix}r{i}"]))
            cur = f"{prefix}r{i}"
        return nodes, cur

    def dead_if(prefix: str, inp: str) -> tuple[list, str]:
        """If(Constant(cond)) whose untaken branch holds the chain."""
        body, out = chain(prefix + "d", inp)
        dead_g = helper.make_graph(
            body + [helper.make_node("Identity", [out], [f"{prefix}do"])],
            prefix + "dead",
            [],
            [_vi(f"{prefix}do", F, None)],
        )
        live_g = helper.make_graph(
            [helper.make_node("Identity", [inp], [f"{prefix}lo"])], prefix + "live", [], [_vi(f"{prefix}lo", F, None)]
        )
        then_g, else_g = (live_g, dead_g) if cond else (dead_g, live_g)
        return [
            _const(f"{prefix}c", np.array(cond)),
            helper.make_node("If", [f"{prefix}c"], [f"{prefix}o"], then_branch=then_g, else_branch=else_g),
        ], f"{prefix}o"

    if kind == "if":
        nodes, out = dead_if("i", src)
        return nodes + [helper.make_node("Identity", [out], ["out"])], _vi("out", F, None)

    def loop(trips: int, body: list, out: str) -> tuple[list, onnx.ValueInfoProto]:
        """A Loop of ``trips`` iterations carrying ``bv`` through ``body`` (ending in ``out``)."""
        g = helper.make_graph(
            body + [helper.make_node("Identity", ["bc"], ["bco"]), helper.make_node("Identity", [out], ["bvo"])],
            "body",
            [_vi("bi", I64, []), _vi("bc", B, []), _vi("bv", F, None)],
            [_vi("bco", B, []), _vi("bvo", F, None)],
        )
        return [
            _const("M", np.array(trips, np.int64)),
            helper.make_node("Loop", ["M", "", src], ["out"], body=g),
        ], _vi("out", F, None)

    if kind == "loop0":  # a Loop whose body never runs (trip count 0) holds the chain
        return loop(0, *chain("b", "bv"))
    if kind == "loop":  # a Loop that runs, whose body holds a dead If with the chain
        return loop(3, *dead_if("lb", "bv"))
    # scan: a Scan over axis 0 whose body holds a dead If with the chain
    body, out = dead_if("sb", "sx")
    g = helper.make_graph(
        body + [helper.make_node("Identity", [out], ["sy"])],
        "body",
        [_vi("sx", F, None)],
        [_vi("sy", F, None)],
    )
    return [helper.make_node("Scan", [src], ["out"], body=g, num_scan_inputs=1)], _vi("out", F, None)


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["if", "loop0", "loop", "scan"]),
    cond=st.booleans(),
    live=st.lists(st.integers(2, 6), max_size=2),
    ks=st.lists(st.integers(2, 7), min_size=1, max_size=3),
    equate=st.booleans(),
)
def test_untaken_parts_leave_the_same_guards_as_no_part(kind, cond, live, ks, equate):
    """For graphs with If / Loop / Scan whose untaken branch (or never-run body) reshapes with
    ``-1``: the guards and equalities after inference are those of the same graph with that
    branch's Reshapes removed."""

    def build(dead: bool) -> onnx.ModelProto:
        nodes, src = _live_prefix(live)
        inputs = [_vi("x", F, ["n", "m"])]
        if equate:  # a live equality: x and z must broadcast-equal
            inputs.append(_vi("z", F, ["n", "p"]))
            nodes.append(helper.make_node("Add", ["x", "z"], ["xz"]))
        cf, out_vi = _construct(kind, src, ks, dead, cond)
        return _model(nodes + cf, inputs, [out_vi])

    with_dead, without = shapeinfer.infer(build(True)), shapeinfer.infer(build(False))
    assert _fingerprint(with_dead) == _fingerprint(without)


def test_bound_guards_narrow_the_ranges_proofs_use_and_roll_back_with_them():
    s = SymbolScope({"seq": (1, 4096)})
    s.add_inputs({"seq"})
    seq = D.sym("seq")
    assert not s.prove_le(D.sub(seq, 1), 1000)
    with s.trial():
        s.assume("bound", D.sub(seq, 1), 999)  # seq - 1 <= 999: seq <= 1000
        assert s.assumed == {"seq": (1, 1000)}
        assert s.prove_le(D.sub(seq, 1), 999) and s.simplify(D.dmin(seq, 2000)) == seq
    assert s.assumed == {} and not s.prove_le(D.sub(seq, 1), 999)
    assert s.ranges == {"seq": (1, 4096)}  # the caller's ranges are never changed


def test_a_bound_on_a_monotone_expression_narrows_its_one_symbol():
    """``1 <= (s//10 + 1)//2`` holds exactly when ``s >= 10``; ``(s + 1)//4 <= 3`` when
    ``s <= 14``; ``-s//3 >= -4`` when ``s <= 12``: the assumed range says so, and rolls back."""
    s = D.sym("s")
    scope = SymbolScope()
    scope.input_symbols.add("s")
    mark = scope.checkpoint()
    scope.assume("bound", 1, D.floordiv(D.add(D.floordiv(s, 10), 1), 2))
    assert scope.effective_ranges()["s"] == (10, None)
    scope.assume("bound", D.floordiv(D.add(s, 1), 4), 3)
    assert scope.effective_ranges()["s"] == (10, 14)
    scope.rollback(mark, release_fresh=True)
    assert "s" not in scope.effective_ranges()
    scope.assume("bound", -4, D.floordiv(D.neg(s), 3))
    assert scope.effective_ranges()["s"] == (1, 12)
    # not monotone (a remainder): no narrowing
    scope2 = SymbolScope()
    scope2.input_symbols.add("s")
    scope2.assume("bound", 1, D.sub(s, D.mul(2, D.floordiv(s, 2))))
    assert "s" not in scope2.effective_ranges()


@settings(max_examples=200, deadline=None)
@given(
    a=st.integers(-3, 3),
    k1=st.integers(1, 5),
    k2=st.integers(1, 5),
    b=st.integers(-4, 4),
    c=st.integers(-6, 6),
    upper=st.booleans(),
)
def test_monotone_bounds_narrow_to_exactly_the_satisfying_values(a, k1, k2, b, c, upper):
    """Brute force: the narrowed range of ``s`` holds every ``s`` in [1, 120] that satisfies the
    guard, and (where the guard is monotone) nothing else."""
    s = D.sym("s")
    e = D.floordiv(D.add(D.mul(a, D.floordiv(s, k1)), b), k2)
    scope = SymbolScope()
    scope.input_symbols.add("s")
    lhs, rhs = (e, c) if upper else (c, e)
    scope.assume("bound", lhs, rhs)
    lo, hi = scope.effective_ranges().get("s", (1, None))
    sat = {v for v in range(1, 121) if D.evaluate(lhs, {"s": v}) <= D.evaluate(rhs, {"s": v})}
    inside = {v for v in range(1, 121) if lo <= v and (hi is None or v <= hi)}
    assert sat <= inside
