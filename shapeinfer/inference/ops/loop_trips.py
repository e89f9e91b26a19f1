"""How many iterations a Loop runs (:func:`trip_count`), where that is proven: ``max(0, M)`` when
the body keeps its condition true, else the count a condition comparing counters with
loop-invariant values allows (tf2onnx's while loops, :func:`_condition_trip`), with the
guards it needs."""

from __future__ import annotations

import math

from onnx import TensorProto

from shapeinfer.base import codes
from shapeinfer.inference.ops.subgraph_facts import known_bool, run_body, sandbox
from shapeinfer.io.onnxio import graph_path
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

#: Stands for an absent ``M`` (no bound on the iterations), as opposed to one of unknown value (None).
NO_M = object()


def trip_count(ctx, body, initial, carried, outs, m, c0: bool | None, mark: int) -> D.Dim | None:
    """The number of iterations a Loop that may run at all runs, or None where it is not proven.

    onnxruntime runs iterations while ``iteration < M`` (when ``M`` is given) and the condition
    holds (on entry: the ``cond`` input; after each iteration: the body's first output). So:

    - ``M`` given, its value unknown: None (the count is at most ``M``, which nothing bounds);
    - the condition true on entry and kept true by the body: ``max(0, M)`` (None without ``M``);
    - otherwise the count the body's condition allows, at most ``M`` (:func:`_condition_trip`).

    ``m`` is ``M``'s value (``NO_M`` when absent, INT64_MAX counting as absent); ``mark`` is
    the number of fresh symbols drawn before the loop's fixpoint, so that a count never names a
    symbol the loop made up (one that stands for a different value at each iteration).
    """
    if m is None:
        return None
    bound = None if m is NO_M or m == D.INT64_MAX else m
    if c0 is True and known_bool(outs[0] if outs else None) is True:
        return None if bound is None else ctx.symbols.simplify(D.dmax(0, bound))
    return _condition_trip(ctx, body, initial, carried, bound, c0, mark)


_INT_DTYPES = frozenset((TensorProto.INT64, TensorProto.INT32))

#: Integers a float type holds exactly, as a power of two: a comparison made in such a type is
#: the integer comparison while both sides stay within it.
_FLOAT_EXACT = {TensorProto.FLOAT: 24, TensorProto.DOUBLE: 53, TensorProto.FLOAT16: 11, TensorProto.BFLOAT16: 8}

#: Comparisons a loop condition may end on: (the left input is the smaller side, shift), so
#: that the loop goes on while ``bigger - smaller + shift >= 1``.
_CONDITIONS = {"Less": (True, 0), "Greater": (False, 0), "LessOrEqual": (True, 1), "GreaterOrEqual": (False, 1)}


def scalar_value(f: Fact | None) -> D.Dim | None:
    """The one value of a scalar (or one-element) fact as a dim: an int, an expression, or an
    integral float read as its int; None otherwise."""
    if f is None or f.value is None or len(f.value) != 1 or (f.shape is not None and len(f.shape) > 1):
        return None
    v = f.value[0]
    if isinstance(v, float):
        return int(v) if math.isfinite(v) and v.is_integer() else None
    return v if type(v) is int or isinstance(v, D.Expr) else None


_ONNX = ("", "ai.onnx")

#: A comparison negated is the opposite comparison (on integers, and on floats without NaN).
_NEGATED = {"Less": "GreaterOrEqual", "GreaterOrEqual": "Less", "Greater": "LessOrEqual", "LessOrEqual": "Greater"}


def _conjuncts(name: str, producer, depth: int = 0) -> tuple[list[tuple[str, list[str]]], list[str]] | None:
    """The comparisons (``(op_type, [lhs, rhs])``) and other operands (tensor names) whose
    conjunction boolean ``name`` is, through Identity, Cast (which keeps a boolean's truth),
    And, and Not of a comparison (tf2onnx at opset < 12 writes ``a <= b`` as
    ``Not(Greater(a, b))``); None when it is produced otherwise. ``producer(name)`` gives the
    node of the graph producing ``name`` (None: an input, initializer or outer value)."""

    def through(name: str):
        node = producer(name)
        while node is not None and node.op_type in ("Identity", "Cast") and node.domain in _ONNX and node.input:
            name = node.input[0]
            node = producer(name)
        return name, node

    name, node = through(name)
    if depth > 8:
        return None
    if node is None:
        return [], [name]
    if node.domain not in _ONNX:
        return None
    if node.op_type == "And" and len(node.input) == 2:
        parts = [_conjuncts(x, producer, depth + 1) for x in node.input]
        if any(p is None for p in parts):
            return None
        return [c for p in parts for c in p[0]], [x for p in parts for x in p[1]]
    if node.op_type in _CONDITIONS and len(node.input) == 2:
        return [(node.op_type, list(node.input))], []
    if node.op_type == "Not" and len(node.input) == 1:
        _, inner = through(node.input[0])
        if inner is not None and inner.domain in _ONNX and inner.op_type in _NEGATED and len(inner.input) == 2:
            return [(_NEGATED[inner.op_type], list(inner.input))], []
        return None
    if node.op_type == "Constant":
        return [], [name]
    return None


def _margin(op: str, lhs: D.Dim, rhs: D.Dim) -> D.Dim:
    """``g`` such that comparison ``op`` of ``lhs`` and ``rhs`` holds exactly when ``g >= 1``."""
    left_smaller, shift = _CONDITIONS[op]
    a, b = (lhs, rhs) if left_smaller else (rhs, lhs)
    return D.add(D.sub(b, a), shift)


def _entry_margins(ctx) -> list[D.Dim] | None:
    """The Loop's ``cond`` input as comparisons made before the Loop in its graph: their margins
    (:func:`_margin`: the condition holds exactly when every margin is at least 1), or None
    when it is not such a conjunction (or a conjunct's value is unknown)."""
    name = ctx.node.input[1]
    eng = ctx.engine

    def producer(x: str):
        found = ctx.producer(x)
        return None if found is None else found[1]

    got = _conjuncts(name, producer)
    if got is None:
        return None
    nodes, others = got
    for x in others:  # operands that are not comparisons: known true, or nothing is known
        if known_bool(ctx.scope.get(x)) is not True:
            return None
    margins = []
    for op, operands in nodes:
        facts = [ctx.scope.get(x) for x in operands]
        lhs, rhs = (None if f is None else scalar_value(eng.resolve_fact(f)) for f in facts)
        if lhs is None or rhs is None:
            return None
        margins.append(_margin(op, lhs, rhs))
    return margins


def _condition_trip(ctx, body, initial, carried, bound: D.Dim | None, c0: bool | None, mark: int) -> D.Dim | None:
    """How many iterations a Loop runs when its body ends it by comparing counters with
    loop-invariant values (tf2onnx's while loops: ``cond = Less(i + 1, n)`` with ``i`` carried
    from 0, or the iteration number), at most ``bound`` (``M``; None: no bound); else None.

    Symbolic induction, in a sandbox that leaves no trace: ``j`` (a fresh symbol) stands for
    the number of the body run, from 1, whose iteration-number input is ``j - 1``. A carried int
    scalar whose value varies (unknown at the fixpoint) and starts at a known ``v0`` is a
    counter when one run adds a constant ``step`` to it whatever its value, so it enters run
    ``j`` as ``v0 + step*(j - 1)``. Run ``j`` at that point turns each comparison the condition
    is a conjunction of into ``g(j) >= 1`` (the loop goes on after run ``j`` exactly when every
    one holds), ``g`` affine in ``j``, falling by ``s >= 1`` per run: ``g(j) = g0 - s*j``. A
    comparison ends the loop after run ``ceil(g0/s)`` when that is at least 1, after run 1
    otherwise; the loop ends at the first that does. So, when the condition holds on entry
    (``c0``), the count is ``min(M, min over the comparisons of max(1, ceil(g0/s)))``.

    When the entry condition is unknown but is itself a conjunction of comparisons before the
    Loop, with margins ``h`` (it holds when every ``h >= 1``), and (i) every body comparison's
    ``g0`` is at least some ``h`` and (ii) every ``h`` is at least some ``g0``, the count is
    ``max(0, min(M, min ceil(g0/s)))``: if the entry condition holds, (i) makes each
    ``ceil(g0/s) >= 1`` (the formula above); if it fails, some ``h <= 0`` and by (ii) some
    ``ceil(g0/s) <= 0``, so the count is 0 as it must be. tf2onnx computes the entry condition
    by the same function on the initial values, which is ``g`` at ``j = 0`` (``g0 = h``).

    A comparison made in a float type is the integer one only while both sides are integers
    the type holds exactly: both sides at runs 1 and ``T`` (the ends of their affine course)
    must be within that; where the ranges do not prove it, float32 and double assume it (an
    info diagnostic and a bound guard, as a Cast to float does) and float16/bfloat16 leave
    the count unproven.
    """
    cond_out = body.output[0].name if body.output else ""
    producers = {o: n for n in body.node for o in n.output if o}
    got = _conjuncts(cond_out, producers.get)
    if got is None or not got[0]:
        return None
    conds, others = got
    hs = None if c0 is True else _entry_margins(ctx)
    if c0 is not True and not hs:
        return None  # an entry condition not known and not comparisons: no trial needed
    eng = ctx.engine
    sym = ctx.symbols
    path = graph_path(ctx.graph, ctx.index, "body")
    saved = {p: f for p, f in eng.graph_facts.items() if p == path or p.startswith(path + "/")}
    iteration = lambda j: tensor(TensorProto.INT64, (), (D.sub(j, 1),))  # noqa: E731
    try:
        with sandbox(ctx, keep_diagnostics=False):
            j = ctx.fresh()
            # which carried values are counters: their step over one run
            probe = list(carried)
            starts: dict[int, tuple[D.Dim, D.Expr]] = {}
            for i, (f0, f) in enumerate(zip(initial, carried)):
                v0 = scalar_value(f0)
                if (
                    v0 is not None
                    and f is not None
                    and f.kind == "tensor"
                    and f.dtype in _INT_DTYPES
                    and scalar_value(f) is None  # varies: a known value at the fixpoint is invariant
                ):
                    c = ctx.fresh()
                    starts[i] = (v0, c)
                    probe[i] = Fact(f.dtype, f.shape if f.shape is not None else (), (c,), "tensor")
            steps: dict[int, D.Dim] = {}
            if starts:
                outs = run_body(ctx, body, "body", [iteration(j), tensor(TensorProto.BOOL, (), (1,)), *probe])
                for i, (v0, c) in starts.items():
                    after = scalar_value(outs[1 + i] if 1 + i < len(outs) else None)
                    step = None if after is None else D.sub(after, c)
                    if type(step) is int:
                        steps[i] = D.add(v0, D.mul(step, D.sub(j, 1)))
            at_j = list(carried)
            for i, v in steps.items():
                f = carried[i]
                at_j[i] = Fact(f.dtype, f.shape if f.shape is not None else (), (v,), "tensor")
            run_body(ctx, body, "body", [iteration(j), tensor(TensorProto.BOOL, (), (1,)), *at_j])
            facts = eng.graph_facts.get(path, {})
            for x in others:  # And operands that are not comparisons must be known true
                if known_bool(facts[x] if x in facts else ctx.scope.get(x)) is not True:
                    return None
            sides = []
            for op, operands in conds:
                got = [facts[x] if x in facts else ctx.scope.get(x) for x in operands]  # the body's, else outer
                if any(f is None for f in got):
                    return None
                lhs, rhs = (scalar_value(eng.resolve_fact(f)) for f in got)
                if lhs is None or rhs is None:
                    return None
                exact = {_FLOAT_EXACT.get(f.dtype) for f in got} - {None}
                sides.append((op, lhs, rhs, min(exact) if exact else None))
    finally:
        for p in [p for p in eng.graph_facts if (p == path or p.startswith(path + "/")) and p not in saved]:
            del eng.graph_facts[p]
        eng.graph_facts.update(saved)

    name = j.terms[0][0][0].name
    made_up = set(sym.fresh_symbols[mark:])
    ends, g0s = [], []
    for op, lhs, rhs, _ in sides:
        g = _margin(op, lhs, rhs)
        g0, g1, g2 = (D.substitute(g, {name: x}) for x in (0, 1, 2))
        slope = D.sub(g1, g0)
        if type(slope) is not int or D.sub(g2, g1) != slope or D.symbols(g0) & made_up:
            return None
        if slope == 0:
            if sym.prove_le(1, g0):
                continue  # holds at every run: never what ends the loop
            return None
        if slope > 0:
            return None
        s = -slope
        ends.append(D.floordiv(D.add(g0, s - 1), s))
        g0s.append(g0)
    if not ends:
        return None
    if hs is None:  # the condition holds on entry
        ends = [D.dmax(1, e) for e in ends]
    elif not all(any(sym.prove_le(h, g0) for h in hs) for g0 in g0s) or not all(
        any(sym.prove_le(g0, h) for g0 in g0s) for h in hs
    ):
        return None
    trip = D.dmin(*ends) if len(ends) > 1 else ends[0]
    if bound is not None:
        trip = D.dmin(bound, trip)
    trip = sym.simplify(D.dmax(0, trip))
    assumed = []
    for _, lhs, rhs, bits in sides:  # a float comparison: exact while both sides are in range
        if bits is None:
            continue
        limit = 2**bits
        for at in (1, D.dmax(1, trip)):
            for v in (lhs, rhs):
                v = sym.simplify(D.substitute(v, {name: at}))
                lo, hi = sym.interval(v)
                if lo is not None and hi is not None and -limit <= lo and hi <= limit:
                    continue
                if bits < 24 or D.symbols(v) & made_up:
                    return None  # float16/bfloat16 hold too few integers to assume it
                assumed.append((v, limit))
    for v, limit in assumed:  # as a Cast to float32/double does (elementwise.exact_in_float)
        text = f"assuming |{D.format(v)}| <= {limit} (the loop condition exact in float)"
        ctx.diag("info", codes.ASSUMED_EXACT_FLOAT, text)
        ctx.assume("bound", v, limit)
        ctx.assume("bound", -limit, v)
    return trip
