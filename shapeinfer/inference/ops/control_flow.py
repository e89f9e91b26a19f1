"""Control flow: If, Loop and Scan, whose bodies are inferred as subgraphs with the outer scope.

- **If**: both branches are inferred. When the condition's value is known, the taken branch's
  outputs are the node's outputs exactly; otherwise the branches' facts are merged
  (:func:`~.subgraph_facts.merge_facts`: equal dims stay, differing dims become one fresh symbol, differing ranks
  give an unknown rank). Each branch runs in a *sandbox*: equalities a branch needs (its
  ``unify`` calls) hold only when that branch is taken, so they are not kept for the rest of
  the model. A branch that provably never runs keeps its facts (for annotation) but not its
  diagnostics.
- **Loop** and **Scan**: loop-carried values are iterated to a fixpoint (:func:`~.subgraph_facts.widen`): a dim
  that differs between what enters an iteration and what leaves it becomes a fresh symbol, and
  stays that symbol; values that differ are dropped. Intermediate iterations are sandboxed;
  only the last (at the fixpoint) leaves its equalities and diagnostics. Scan outputs get the
  number of iterations as their stacked dim: Scan's is the scanned axis of its inputs; Loop's
  is ``max(0, M)`` when the body provably keeps its condition true, the count the condition
  allows (at most ``M``) when the body ends the loop by comparing counters with loop-invariant
  values (tf2onnx's while loops; :mod:`.loop_trips`), else a fresh symbol. Where a Loop
  may run no iteration, the other dims of its scan outputs are also what onnxruntime gives then
  (:func:`_scan_output`).
"""

from __future__ import annotations

from onnx import TensorProto, TypeProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference import op_registry as registry
from shapeinfer.inference.declarations import dtype_name
from shapeinfer.inference.node_context import NodeContext
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import dim_values, norm_axis
from shapeinfer.inference.ops.elementwise import INT_TYPES
from shapeinfer.inference.ops.loop_trips import NO_M, trip_count
from shapeinfer.inference.ops.subgraph_facts import known_bool, merge_facts, run_body, sandbox, top_fact, widen
from shapeinfer.io.onnxio import graph_path
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

#: Loop/Scan fixpoint iterations before every carried value is given up to unknown rank.
MAX_FIXPOINT_ITERATIONS = 8


# ------------------------------------------------------------------------------ If


def _branch(ctx, graph, attr: str, taken: bool | None, runs_when: D.Dim | None = None) -> list[Fact]:
    """Infer one If branch: in a sandbox unless it is known to run (``taken`` True); a branch
    that may run keeps its guards as alternatives of ``runs_when <= 0`` where it runs exactly
    where ``runs_when >= 1``."""
    if taken:
        return run_body(ctx, graph, attr, [])
    with sandbox(ctx, keep_diagnostics=taken is None, never_runs=taken is False, runs_when=runs_when):
        return run_body(ctx, graph, attr, [])


@register("If", since=1)
def if_(ctx, ins: list) -> list:
    """If: the taken branch's outputs when the condition is known, else both branches merged."""
    cond = known_bool(ins[0] if ins else None)
    then_g, else_g = ctx.attr("then_branch"), ctx.attr("else_branch")
    if then_g is None or else_g is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "If needs both then_branch and else_branch")
    when = _condition_dim(ctx, ctx.node.input[0]) if cond is None and ctx.node.input else None
    then_out = _branch(ctx, then_g, "then_branch", None if cond is None else cond, when)
    else_out = _branch(ctx, else_g, "else_branch", None if cond is None else not cond, _negated(when))
    n = ctx.num_outputs
    if len(then_out) != len(else_out) or len(then_out) < n:
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH,
            f"If branches give {len(then_out)} and {len(else_out)} outputs for {n} node output(s)",
        )
    for i, (t, e) in enumerate(zip(then_out[:n], else_out[:n])):
        if t is not None and e is not None and t.kind == e.kind and t.dtype and e.dtype and t.dtype != e.dtype:
            # onnx and onnxruntime refuse the model whichever branch runs
            raise InferenceError(
                codes.OPERAND_STRUCTURE_MISMATCH,
                f"If output {i}: then_branch gives {dtype_name(t.dtype)}, else_branch {dtype_name(e.dtype)}",
            )
    if cond is None and any(_rank(t) != _rank(e) for t, e in zip(then_out[:n], else_out[:n])):
        cond = _decided_by_assumptions(ctx, ctx.node.input[0] if ctx.node.input else "")
        if cond is not None:
            ctx.diag(
                "info",
                codes.ASSUMED_DIM_EQUALITY,
                f"the If condition is {str(bool(cond)).lower()} under the dim equalities assumed so far",
            )
    if cond is not None:
        return list((then_out if cond else else_out)[:n])
    return [merge_facts(ctx, [t, e]) for t, e in zip(then_out[:n], else_out[:n])]


#: comparison -> c(a, b): the comparison holds exactly where c >= 1 (a, b integers)
_COMPARISONS = {
    "Greater": lambda a, b: D.sub(a, b),
    "Less": lambda a, b: D.sub(b, a),
    "GreaterOrEqual": lambda a, b: D.add(D.sub(a, b), 1),
    "LessOrEqual": lambda a, b: D.add(D.sub(b, a), 1),
    "Equal": lambda a, b: D.sub(1, D.absolute(D.sub(a, b))),
}


def _negated(c: D.Dim | None) -> D.Dim | None:
    """``c'`` with ``c' >= 1`` exactly where ``c <= 0`` (integers)."""
    return None if c is None else D.sub(1, c)


def _condition_dim(ctx, name: str, depth: int = 0) -> D.Dim | None:
    """A dim ``c`` over the input symbols such that the boolean scalar ``name`` is true
    exactly where ``c >= 1``: an integer comparison of sizes (``Greater(n, 3)``: ``n - 3``),
    through Not, And, Or and the ops that pass one value on; None otherwise (a value that is
    read at run time, a float comparison, a fresh size)."""
    if not name or depth > 8:
        return None
    found = ctx.producer(name, anywhere=depth > 0)
    if found is None:
        return None
    _, p = found
    if p.domain not in ("", "ai.onnx"):
        return None
    op = p.op_type
    if op in ("Identity", "Squeeze", "Unsqueeze", "Reshape", "Cast"):
        src = ctx.scope.get(p.input[0]) if p.input else None
        if src is None or src.dtype != TensorProto.BOOL:
            return None
        return _condition_dim(ctx, p.input[0], depth + 1)
    if op == "Not":
        return _negated(_condition_dim(ctx, p.input[0], depth + 1))
    if op in ("And", "Or") and len(p.input) == 2:
        a, b = (_condition_dim(ctx, i, depth + 1) for i in p.input)
        if a is None or b is None:
            return None
        return D.dmin(a, b) if op == "And" else D.dmax(a, b)
    if op in _COMPARISONS and len(p.input) == 2:
        sides = []
        for i in p.input:
            f = ctx.scope.get(i)
            v = None if f is None else ctx.engine.resolve_fact(f).value
            if f is None or f.dtype not in INT_TYPES or v is None or len(v) != 1 or v[0] is None:
                return None
            if not isinstance(v[0], (int, D.Expr)) or ctx.symbols.has_fresh(v[0]):
                return None
            sides.append(v[0])
        return _COMPARISONS[op](*sides)
    return None


def _rank(f: Fact | None) -> int | None:
    return None if f is None or f.kind != "tensor" else f.rank


#: Ops a condition is re-evaluated through (their rules read values only, create no symbols).
_COND_OPS = {
    "Equal",
    "Less",
    "LessOrEqual",
    "Greater",
    "GreaterOrEqual",
    "Not",
    "And",
    "Or",
    "Xor",
    "Cast",
    "Identity",
    "Squeeze",
    "Unsqueeze",
    "Reshape",
}


def _decided_by_assumptions(ctx, name: str, depth: int = 0) -> bool | None:
    """The value of boolean ``name`` recomputed with the dim equalities the engine has assumed
    since it was computed (its producers re-run on their inputs' facts resolved through the
    engine's substitution, a few levels up), or None."""
    f = _value_now(ctx, name, depth)
    return known_bool(f)


def _value_now(ctx, name: str, depth: int) -> Fact | None:
    eng = ctx.engine
    f = ctx.scope.get(name) if name else None
    if f is None:
        return None
    f = eng.resolve_fact(f)
    if (f.value is not None and all(v is not None for v in f.value)) or depth > 6:
        return f
    found = ctx.producer(name, anywhere=depth > 0)
    if found is None:
        return f
    k, p = found
    if p.domain not in ("", "ai.onnx") or p.op_type not in _COND_OPS:
        return f
    ins = [_value_now(ctx, i, depth + 1) if i else None for i in p.input]
    if any(i and x is None for i, x in zip(p.input, ins)):
        return f

    version = eng.opsets.get("", 0)
    rule = registry.lookup("", p.op_type, version)
    if rule is None:
        return f
    with sandbox(ctx, keep_diagnostics=False):
        try:
            outs = rule(NodeContext(eng, p, version, k, ctx.graph, ctx.scope), ins)
        except Exception:
            return f
    out = outs[list(p.output).index(name)] if outs else None
    return f if out is None else out


# ------------------------------------------------------------------------------ loops


def _iterate(
    ctx,
    body,
    attr: str,
    make_inputs,
    carried: list[Fact | None],
    n_carried_out_offset: int,
    may_skip: bool = False,
    runs_when: D.Dim | None = None,
):
    """Run ``body`` to the loop-carried fixpoint.

    ``make_inputs(carried)`` builds the body's input facts; the body's outputs from
    ``n_carried_out_offset`` on are the new carried values. Returns (carried at the fixpoint,
    the body's outputs from the last run, which is the one whose equalities are kept).
    ``may_skip``: the body may run no iteration (a trip count or a condition not proven to
    let it run once), so what it needs of the sizes holds only where it runs: that last run's
    equalities are not kept (its diagnostics are), and its guards are kept only as
    alternatives of ``runs_when <= 0`` where the body runs exactly where ``runs_when >= 1``
    (given; else they are dropped, as for an If branch that may not be taken).
    """
    widened: set[str] = set()
    for _ in range(MAX_FIXPOINT_ITERATIONS):
        with sandbox(ctx, keep_diagnostics=False) as box:
            outs = run_body(ctx, body, attr, make_inputs(carried))
            new = outs[n_carried_out_offset : n_carried_out_offset + len(carried)]
            new += [None] * (len(carried) - len(new))
            nxt = [widen(ctx, p, q, widened) for p, q in zip(carried, new)]
            settled = nxt == carried  # at the fixpoint: this run is the one that counts
            box.keep = settled and not may_skip
        if settled:
            if may_skip:
                with sandbox(ctx, keep_diagnostics=True, runs_when=runs_when):
                    outs = run_body(ctx, body, attr, make_inputs(carried))
                    _resolve_body(ctx, attr)
            return carried, outs
        carried = nxt
    carried = [top_fact(f) for f in carried]
    ctx.diag("info", codes.LOOP_NOT_SETTLED, "loop-carried values did not settle: their shapes are left unknown")
    if may_skip:
        with sandbox(ctx, keep_diagnostics=True, runs_when=runs_when):
            outs = run_body(ctx, body, attr, make_inputs(carried))
            _resolve_body(ctx, attr)
            return carried, outs
    outs = run_body(ctx, body, attr, make_inputs(carried))
    return carried, outs


def _resolve_body(ctx, attr: str) -> None:
    """The facts of the body at ``attr`` (and of the graphs nested in it) resolved under the
    equalities its run assumed, before they are rolled back: they hold wherever it runs."""
    path = graph_path(ctx.graph, ctx.index, attr)
    for name, facts in ctx.engine.graph_facts.items():
        if name == path or name.startswith(path + "/"):
            for k, f in facts.items():
                facts[k] = ctx.engine.resolve_fact(f)


def _stack(f: Fact | None, n: D.Dim, axis: int = 0) -> Fact:
    """The fact of ``n`` values like ``f`` stacked along a new ``axis``."""
    if f is None or f.shape is None:
        return Fact(0 if f is None else f.dtype)
    axis = norm_axis(axis, len(f.shape) + 1)
    return Fact(f.dtype, f.shape[:axis] + (n,) + f.shape[axis:], None, f.kind)


@register("Loop", since=1)
def loop(ctx, ins: list) -> list:
    """Loop: carried values at their fixpoint; scan outputs stacked along a leading dim that is
    the number of iterations run (:func:`_trip_count`), with their other dims as onnxruntime
    gives them whatever that number is (:func:`_scan_output`)."""
    body = ctx.attr("body")
    if body is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "Loop needs a body")
    ins = list(ins) + [None] * max(0, 2 - len(ins))
    m_fact, c_fact, initial = ins[0], ins[1], list(ins[2:])
    n_carried = len(initial)
    n_body_out = len(body.output)
    n_scan = n_body_out - 1 - n_carried
    if n_scan < 0 or len(body.input) != 2 + n_carried:
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH,
            f"Loop body takes {len(body.input)} inputs and gives {n_body_out} outputs for {n_carried} carried value(s)",
        )
    node_ins = ctx.node.input
    has_m = len(node_ins) > 0 and bool(node_ins[0])
    m = None
    mv = dim_values(m_fact) if has_m else None
    if mv is not None and len(mv) == 1 and mv[0] is not None:
        m = mv[0]
    c0 = True if len(node_ins) < 2 or not node_ins[1] else known_bool(c_fact)
    declared = [vi.type for vi in body.output[1 + n_carried :]]
    if c0 is False or (type(m) is int and m <= 0):  # the body never runs
        with sandbox(ctx, keep_diagnostics=False, never_runs=True):
            outs = run_body(ctx, body, "body", _loop_inputs(initial))
        scans = [_scan_output(ctx, f, 0, t, False) for f, t in zip(outs[1 + n_carried :], declared)]
        return [*initial, *scans]

    mark = len(ctx.symbols.fresh_symbols)
    # the first iteration runs when the condition holds on entry and M (if given) is at least 1
    first = c0 is True and (not has_m or (m is not None and _at_least_one(ctx.symbols, m)))
    runs_when = None if first else _loop_runs_when(ctx, c0, has_m, m)
    carried, outs = _iterate(ctx, body, "body", _loop_inputs, initial, 1, may_skip=not first, runs_when=runs_when)
    for k, f in enumerate(carried):  # an optional carried in, its element carried out
        out = outs[1 + k] if 1 + k < len(outs) else None
        if (
            f is not None
            and f.kind == "optional"
            and out is not None
            and out.kind != "optional"
            and (out.kind != "tensor" or out.dtype or out.shape is not None)
        ):
            carried[k] = f.elem
    trip = trip_count(ctx, body, initial, carried, outs, m if has_m else NO_M, c0, mark)
    runs = first
    if trip is None:
        trip = ctx.fresh()
    runs = runs or _at_least_one(ctx.symbols, trip)
    scans = [_scan_output(ctx, f, trip, t, runs) for f, t in zip(outs[1 + n_carried :], declared)]
    return [*carried, *scans]


def _loop_runs_when(ctx, c0: bool | None, has_m: bool, m: D.Dim | None) -> D.Dim | None:
    """A dim ``c`` with the Loop's first iteration running exactly where ``c >= 1``: its trip
    count M (where given) and its condition on entry (true, or a comparison of sizes:
    :func:`_condition_dim`) both at least 1; None where either is not such a dim."""
    cond = 1 if c0 is True else (_condition_dim(ctx, ctx.node.input[1]) if c0 is None else None)
    count = (m if m is not None else None) if has_m else 1
    if cond is None or count is None:
        return None
    return count if cond == 1 else cond if count == 1 else D.dmin(count, cond)


def _zero_trip_dims(f: Fact, declared: TypeProto, symbols) -> list[D.Dim | None] | None:
    """The dims after the leading 0 of a scan output when the Loop runs no iteration, as
    onnxruntime makes them: the body output's shape as its graph knows it (declared, merged
    with onnx's inference), each dim_value kept and any other dim 0, rank 1 when no shape is
    known. Per dim: the declared dim_value; 0 where the dim is not declared as a number and is
    inferred over the input symbols (onnx's inference cannot have a number there); None where
    it is not known which. None when the rank is not known (no declared shape)."""
    tt = declared.tensor_type if declared.HasField("tensor_type") else None
    if tt is None or not tt.HasField("shape"):
        return None
    decl = list(tt.shape.dim)
    inferred = f.shape if f.shape is not None and len(f.shape) == len(decl) else None
    out: list[D.Dim | None] = []
    for k, d in enumerate(decl):
        if d.HasField("dim_value"):
            out.append(d.dim_value)
            continue
        x = None if inferred is None else inferred[k]
        if x is not None and type(x) is not int and not symbols.has_fresh(x):
            out.append(0)
        else:
            out.append(None)
    return out


def _at_least_one(symbols, trip: D.Dim) -> bool:
    """Whether iteration count ``trip`` is proven at least 1. Input symbols are sizes of at
    least 1; a fresh symbol is not taken to be (an unknown count, a data-dependent size may be 0)."""
    if type(trip) is int:
        return trip >= 1
    return not symbols.has_fresh(trip) and symbols.prove_le(1, trip)


def _scan_output(ctx, f: Fact | None, trip: D.Dim, declared: TypeProto, runs: bool) -> Fact:
    """A Loop's scan output: ``trip`` values like ``f`` (one iteration's, from the body output
    declared as ``declared``) stacked on a new leading axis, as onnxruntime returns it.

    Where ``trip`` is proven at least 1 (``runs``) that is ``[trip, *f's dims]``. Where it may be 0, a dim
    holds only when it is also what onnxruntime gives after no iteration
    (:func:`_zero_trip_dims`: ``z``): a dim ``x`` of ``f`` is ``z + (x - z)*min(1, trip)``
    (``x`` for ``trip >= 1``, ``z`` for 0; a join of ``x`` and ``z`` where ``trip`` is a fresh
    symbol), a fresh symbol where ``z`` is not known, and the rank is unknown where the
    zero-trip rank is not known or differs.
    """
    if f is None or f.shape is None or f.kind != "tensor":
        return Fact(0 if f is None else f.dtype)
    sym = ctx.symbols
    if runs:
        return _stack(f, trip)
    z = _zero_trip_dims(f, declared, sym)
    if z is None or len(z) != len(f.shape):
        return Fact(f.dtype, None, None, f.kind)
    # min(1, trip) is 1 when the loop ran, else 0; not for a count that is a made-up symbol
    # (symbols count as sizes of at least 1): there the dim is one of the two, a join
    some = None if sym.has_fresh(trip) else D.dmin(1, trip)
    dims = []
    for x, zd in zip(f.shape, z):
        if zd is None:
            dims.append(ctx.fresh())
        elif x == zd:
            dims.append(x)
        elif some is None:
            dims.append(sym.join((x, zd)))
        else:
            dims.append(sym.simplify(D.add(zd, D.mul(D.sub(x, zd), some))))
    return Fact(f.dtype, (trip, *dims), None, f.kind)


def _loop_inputs(carried: list[Fact | None]) -> list[Fact | None]:
    """The body's inputs: the iteration number, the condition, the carried values.

    The body only ever runs with its condition input true (an iteration starts only while the
    condition holds; an absent condition counts as true), so that value is known.
    """
    iteration = tensor(TensorProto.INT64, ())
    cond = tensor(TensorProto.BOOL, (), (1,))
    return [iteration, cond, *carried]


def _scan_run(ctx, body, states: list, elems: list, seq_len: D.Dim, out_axes: list[int], batch: D.Dim | None):
    """Shared by every Scan version: run the body, stack its scan outputs."""
    n_states = len(states)
    carried, outs = _iterate(ctx, body, "body", lambda c: [*c, *elems], states, 0)
    scans = []
    for k, f in enumerate(outs[n_states:]):
        axis = out_axes[k] if k < len(out_axes) else 0
        s = _stack(f, seq_len, axis)
        if batch is not None:
            s = _stack(s, batch, 0)
        scans.append(s)
    if batch is not None:
        carried = [_stack(f, batch, 0) for f in carried]
    return [*carried, *scans]


def _check_scan_body(body, n_states: int, n_scan: int) -> None:
    """A Scan body takes one input per loop state variable and per scan input, and gives one
    output per loop state variable before its scan outputs (onnx and onnxruntime refuse
    anything else)."""
    if len(body.output) < n_states:
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH,
            f"Scan has {n_states} loop state variables but its body gives {len(body.output)} output(s): "
            "one per loop state variable, then the scan outputs",
        )
    if len(body.input) != n_states + n_scan:
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH,
            f"Scan body takes {len(body.input)} input(s) "
            f"for {n_states} loop state variables and {n_scan} scan input(s)",
        )


def _scan_len(ctx, xs: list[Fact | None], axes: list[int]) -> tuple[D.Dim, list[Fact]]:
    """The common length of the scanned axes and each scan input's element fact."""
    n = None
    elems = []
    for x, axis in zip(xs, axes):
        if x is None or x.shape is None:
            elems.append(Fact(0 if x is None else x.dtype))
            continue
        a = norm_axis(axis, len(x.shape))
        d = x.shape[a]
        n = d if n is None else ctx.unify(n, d)
        elems.append(Fact(x.dtype, x.shape[:a] + x.shape[a + 1 :], None, x.kind))
    return (ctx.fresh() if n is None else n), elems


def _drop_batch(f: Fact | None) -> Fact:
    if f is None or not f.shape:
        return Fact(0 if f is None else f.dtype)
    return Fact(f.dtype, f.shape[1:], None, f.kind)


@register("Scan", since=8)
def scan_v8(ctx, ins: list) -> list:
    """Scan-8: inputs carry a leading batch axis, then (for scan inputs) the sequence axis."""
    body = ctx.attr("body")
    if body is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "Scan needs a body")
    n_scan = ctx.attr("num_scan_inputs")
    rest = list(ins[1:])
    if n_scan is None or n_scan > len(rest):
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH, f"Scan num_scan_inputs={n_scan} for {len(rest)} input(s)"
        )
    n_states = len(rest) - n_scan
    _check_scan_body(body, n_states, n_scan)
    batch = None
    for f in rest:
        if f is not None and f.shape:
            batch = f.shape[0] if batch is None else ctx.unify(batch, f.shape[0])
    if batch is None:
        batch = ctx.fresh()
    states = [_drop_batch(f) for f in rest[:n_states]]
    xs = [_drop_batch(f) for f in rest[n_states:]]
    seq_len, elems = _scan_len(ctx, xs, [0] * n_scan)
    return _scan_run(ctx, body, states, elems, seq_len, [], batch)


@register("Scan", since=9)
def scan_v9(ctx, ins: list) -> list:
    """Scan-9+: ``scan_input_axes`` / ``scan_output_axes``; no batch axis. The spec allows negative
    axes only from Scan-11, but onnx's inference and onnxruntime accept them in Scan-9 as well
    (counted from the end), and so does this rule."""
    body = ctx.attr("body")
    if body is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "Scan needs a body")
    n_scan = ctx.attr("num_scan_inputs")
    if n_scan is None or n_scan > len(ins):
        raise InferenceError(codes.OPERAND_STRUCTURE_MISMATCH, f"Scan num_scan_inputs={n_scan} for {len(ins)} input(s)")
    n_states = len(ins) - n_scan
    _check_scan_body(body, n_states, n_scan)
    in_axes = list(ctx.attr("scan_input_axes", [0] * n_scan))
    n_outs = len(body.output) - n_states
    out_axes = list(ctx.attr("scan_output_axes", [0] * max(n_outs, 0)))
    if len(in_axes) != n_scan or (n_outs > 0 and len(out_axes) != n_outs):
        raise InferenceError(
            codes.OPERAND_STRUCTURE_MISMATCH, "Scan axes attributes do not match the number of scan inputs/outputs"
        )
    states = [Fact() if f is None else Fact(f.dtype, f.shape, f.value, f.kind, f.elem) for f in ins[:n_states]]
    seq_len, elems = _scan_len(ctx, list(ins[n_states:]), in_axes)
    return _scan_run(ctx, body, states, elems, seq_len, out_axes, None)
