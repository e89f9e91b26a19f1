"""Control flow: If, Loop and Scan, whose bodies are inferred as subgraphs with the outer scope.

- **If**: both branches are inferred. When the condition's value is known, the taken branch's
  outputs are the node's outputs exactly; otherwise the branches' facts are merged
  (:func:`merge_facts`: equal dims stay, differing dims become one fresh symbol, differing ranks
  give an unknown rank). Each branch runs in a *sandbox*: equalities a branch needs (its
  ``unify`` calls) hold only when that branch is taken, so they are not kept for the rest of
  the model. A branch that provably never runs keeps its facts (for annotation) but not its
  diagnostics.
- **Loop** and **Scan**: loop-carried values are iterated to a fixpoint (:func:`widen`): a dim
  that differs between what enters an iteration and what leaves it becomes a fresh symbol, and
  stays that symbol; values that differ are dropped. Intermediate iterations are sandboxed;
  only the last (at the fixpoint) leaves its equalities and diagnostics. Scan outputs get the
  trip count as their stacked dim: Loop's ``M`` when the loop provably runs ``M`` times (the
  condition is absent or known true on entry, and the body provably keeps it true), else a
  fresh symbol; Scan's is the scanned axis of its inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager

from onnx import TensorProto, TypeProto

from shapeinfer.base import codes
from shapeinfer.base.diagnostics import InferenceError
from shapeinfer.inference.declarations import dtype_name
from shapeinfer.inference.op_registry import register
from shapeinfer.inference.ops.common import dim_values, norm_axis
from shapeinfer.io.onnxio import graph_path, type_fact
from shapeinfer.symbolic import dims as D
from shapeinfer.symbolic.facts import Fact, tensor

#: Loop/Scan fixpoint iterations before every carried value is given up to unknown rank.
MAX_FIXPOINT_ITERATIONS = 8


# ------------------------------------------------------------------------------ merging facts


def is_empty(f: Fact | None) -> bool:
    """True for a sequence or optional known to hold nothing (``value == ()``, see :mod:`.sequence`)."""
    return f is not None and f.kind in ("sequence", "optional") and f.value == ()


def _merge_dtype(facts: Sequence[Fact]) -> int:
    known = {f.dtype for f in facts if f.dtype}
    return known.pop() if len(known) == 1 else 0


def merge_facts(ctx, facts: Sequence[Fact | None]) -> Fact:
    """The fact of a value that is any one of ``facts`` (If branches, sequence elements).

    Dims equal in every fact stay; an axis whose dims differ gets one fresh symbol (a join of the
    scope: no declaration replaces it, since it holds for one alternative only); differing
    ranks (or any unknown one) give an unknown rank. Values survive only when all are equal.
    Sequences and optionals merge their element facts; a sequence known to be empty adds no
    element. ``None`` entries stand for values nothing is known about.
    """
    if not facts:
        return Fact()
    if any(f is None for f in facts):
        known = [f for f in facts if f is not None]
        kinds = {f.kind for f in known}
        return Fact(_merge_dtype(known), None, None, kinds.pop() if len(kinds) == 1 else "tensor")
    kinds = {f.kind for f in facts}
    if len(kinds) != 1:
        return Fact()
    kind = kinds.pop()
    first = facts[0]
    if all(f == first for f in facts[1:]):
        return first
    if kind in ("sequence", "optional"):
        full = [f for f in facts if not is_empty(f)]
        if not full:
            return first
        elem = merge_facts(ctx, [f.elem for f in full])
        if not elem.dtype:
            dtype = _merge_dtype([f.elem for f in facts if f.elem is not None])
            elem = Fact(dtype, elem.shape, elem.value, elem.kind, elem.elem)
        return Fact(_merge_dtype(facts), None, None, kind, elem)
    dtype = _merge_dtype(facts)
    shapes = [f.shape for f in facts]
    if any(s is None for s in shapes) or len({len(s) for s in shapes}) != 1:
        return Fact(dtype, None, None, kind)
    shape = []
    for axis in range(len(shapes[0])):
        ds = {s[axis] for s in shapes}
        shape.append(ds.pop() if len(ds) == 1 else ctx.symbols.join(tuple(s[axis] for s in shapes)))
    value = first.value if all(f.value == first.value for f in facts) else None
    if value is not None and any(type(d) is not int for d in shape):
        value = None
    return Fact(dtype, tuple(shape), value, kind)


def widen(ctx, prev: Fact | None, new: Fact | None, widened: set[str]) -> Fact | None:
    """One fixpoint step of a loop-carried value: ``prev`` entered an iteration, ``new`` left it.

    Equal dims stay; a dim that differs becomes a fresh symbol recorded in ``widened``, and a
    dim already widened stays as it is whatever the body makes of it. Ranks that differ give an
    unknown rank, values that differ are dropped, sequence and optional elements widen alike.
    """
    if prev is None or new is None:
        return prev if new is None else None
    if prev == new:
        return prev
    if prev.kind != new.kind:
        # Loop-16+: a carried optional may come back as its element, or the other way round.
        if prev.kind == "optional":
            return widen(ctx, prev, Fact(0, None, None, "optional", new), widened)
        if new.kind == "optional":
            return widen(ctx, Fact(0, None, None, "optional", prev), new, widened)
        return Fact()
    dtype = prev.dtype if prev.dtype == new.dtype or not new.dtype else (new.dtype if not prev.dtype else 0)
    if prev.kind in ("sequence", "optional"):
        if is_empty(prev) and not is_empty(new):
            base = new.elem
            if base is not None and prev.elem is not None and not base.dtype:
                base = Fact(prev.elem.dtype, base.shape, None, base.kind, base.elem)
            return Fact(dtype, None, None, prev.kind, base)
        if is_empty(new):
            return Fact(dtype, None, None, prev.kind, prev.elem)
        return Fact(dtype, None, None, prev.kind, widen(ctx, prev.elem, new.elem, widened))
    if prev.shape is None or new.shape is None or len(prev.shape) != len(new.shape):
        return Fact(dtype, None, None, prev.kind)
    shape = []
    for p, n in zip(prev.shape, new.shape):
        if p == n or (isinstance(p, D.Expr) and D.format(p) in widened):
            shape.append(p)
        else:
            w = ctx.fresh()
            widened.add(D.format(w))
            shape.append(w)
    shape = tuple(shape)
    value = prev.value if prev.value == new.value and shape == prev.shape else None
    return Fact(dtype, shape, value, prev.kind)


def _top(f: Fact | None) -> Fact | None:
    """Everything about ``f`` given up but its kind and element type."""
    if f is None:
        return None
    return Fact(f.dtype, None, None, f.kind, None if f.elem is None else _top(f.elem))


def refine(ctx, f: Fact | None, declared: TypeProto) -> Fact | None:
    """``f`` with the element type a subgraph's declared input/output type adds when unknown.

    Declared *dims* are not used: runtimes treat them as hints (onnxruntime runs a Loop body
    whose outputs disagree with their declared dims, with a warning), and exported models do
    carry wrong ones (the onnx conformance model ``test_loop16_seq_none`` declares scalar
    elements for a sequence of vectors). A dim inference cannot determine stays a fresh symbol.
    """
    if f is None:
        return None
    d = type_fact(declared, lambda axis: None)
    if d.kind != f.kind:
        return f
    if f.kind in ("sequence", "optional"):
        if f.elem is None:
            return f
        inner = declared.sequence_type.elem_type if f.kind == "sequence" else declared.optional_type.elem_type
        elem = refine(ctx, f.elem, inner)
        return f if elem == f.elem else Fact(f.dtype, f.shape, f.value, f.kind, elem)
    if f.dtype or not d.dtype:
        return f
    return Fact(d.dtype, f.shape, f.value, f.kind, f.elem)


def run_body(ctx, graph, attr: str, inputs: Sequence[Fact | None]) -> list[Fact | None]:
    """Infer subgraph ``graph`` (node attribute ``attr``), refining its inputs and outputs by
    their declared types (:func:`refine`)."""
    ins = [refine(ctx, f, vi.type) for f, vi in zip(inputs, graph.input)]
    outs = ctx.infer_graph(graph, ins, attr=attr)
    return [refine(ctx, f, vi.type) for f, vi in zip(outs, graph.output)]


class _Box:
    __slots__ = ("keep",)

    def __init__(self) -> None:
        self.keep = False


@contextmanager
def sandbox(ctx, keep_diagnostics: bool = True):
    """Run a subgraph inference whose symbolic effects must not outlive it.

    On exit the run's symbolic scope is rolled back (:meth:`SymbolScope.rollback`: the
    substitution, equalities and guards are as before, so a branch that is not taken, or an
    iteration that is discarded, assumes nothing); diagnostics raised inside are kept unless
    ``keep_diagnostics`` is False. Facts computed inside stay (with the fresh symbols they
    name). Setting ``keep = True`` on the yielded box keeps everything after all (the run
    turned out to be the one that counts).
    """
    diagnostics = ctx.engine.diagnostics
    mark = ctx.symbols.checkpoint()
    ndiag = len(diagnostics)
    box = _Box()
    try:
        yield box
    finally:
        if not box.keep:
            ctx.symbols.rollback(mark)
            if not keep_diagnostics:
                del diagnostics[ndiag:]


def _known_bool(f: Fact | None) -> bool | None:
    if f is None or f.value is None or len(f.value) != 1:
        return None
    v = f.value[0]
    if type(v) is int or isinstance(v, float):
        return bool(v)
    return None


# ------------------------------------------------------------------------------ If


def _branch(ctx, graph, attr: str, taken: bool | None) -> list[Fact]:
    """Infer one If branch: in a sandbox unless it is known to run (``taken`` True)."""
    if taken:
        return run_body(ctx, graph, attr, [])
    with sandbox(ctx, keep_diagnostics=taken is None):
        return run_body(ctx, graph, attr, [])


@register("If", since=1)
def if_(ctx, ins: list) -> list:
    """If: the taken branch's outputs when the condition is known, else both branches merged."""
    cond = _known_bool(ins[0] if ins else None)
    then_g, else_g = ctx.attr("then_branch"), ctx.attr("else_branch")
    if then_g is None or else_g is None:
        raise InferenceError(codes.MISSING_ATTRIBUTE_OR_OPERAND, "If needs both then_branch and else_branch")
    then_out = _branch(ctx, then_g, "then_branch", None if cond is None else cond)
    else_out = _branch(ctx, else_g, "else_branch", None if cond is None else not cond)
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
    return _known_bool(f)


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
    from shapeinfer.inference import op_registry as registry
    from shapeinfer.inference.node_context import NodeContext

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


def _iterate(ctx, body, attr: str, make_inputs, carried: list[Fact | None], n_carried_out_offset: int):
    """Run ``body`` to the loop-carried fixpoint.

    ``make_inputs(carried)`` builds the body's input facts; the body's outputs from
    ``n_carried_out_offset`` on are the new carried values. Returns (carried at the fixpoint,
    the body's outputs from the last run, which is the one whose equalities are kept).
    """
    widened: set[str] = set()
    for _ in range(MAX_FIXPOINT_ITERATIONS):
        with sandbox(ctx, keep_diagnostics=False) as box:
            outs = run_body(ctx, body, attr, make_inputs(carried))
            new = outs[n_carried_out_offset : n_carried_out_offset + len(carried)]
            new += [None] * (len(carried) - len(new))
            nxt = [widen(ctx, p, q, widened) for p, q in zip(carried, new)]
            box.keep = nxt == carried  # at the fixpoint: this run is the one that counts
        if box.keep:
            return carried, outs
        carried = nxt
    carried = [_top(f) for f in carried]
    ctx.diag("info", codes.LOOP_NOT_SETTLED, "loop-carried values did not settle: their shapes are left unknown")
    outs = run_body(ctx, body, attr, make_inputs(carried))
    return carried, outs


def _stack(f: Fact | None, n: D.Dim, axis: int = 0) -> Fact:
    """The fact of ``n`` values like ``f`` stacked along a new ``axis``."""
    if f is None or f.shape is None:
        return Fact(0 if f is None else f.dtype)
    axis = norm_axis(axis, len(f.shape) + 1)
    return Fact(f.dtype, f.shape[:axis] + (n,) + f.shape[axis:], None, f.kind)


@register("Loop", since=1)
def loop(ctx, ins: list) -> list:
    """Loop: carried values at their fixpoint; scan outputs stacked along a leading trip-count dim."""
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
    m = None
    mv = dim_values(m_fact)
    if mv is not None and len(mv) == 1 and mv[0] is not None:
        m = mv[0]
    c0 = True if len(ctx.node.input) < 2 or not ctx.node.input[1] else _known_bool(c_fact)
    if c0 is False or m == 0:  # the body never runs
        with sandbox(ctx, keep_diagnostics=False):
            outs = run_body(ctx, body, "body", _loop_inputs(initial))
        scans = [_stack(f, 0) for f in outs[1 + n_carried :]]
        return [*initial, *scans]

    carried, outs = _iterate(ctx, body, "body", _loop_inputs, initial, 1)
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
    keeps_going = c0 is True and _known_bool(outs[0] if outs else None) is True
    trip = m if (m is not None and keeps_going) else None
    if trip is None and c0 is True:
        ends = _condition_trip(ctx, body, initial, carried)
        if ends is not None:
            trip = ends if m is None or m == D.INT64_MAX else ctx.symbols.simplify(D.dmin(m, ends))
    if trip is not None and type(trip) is int and trip < 0:
        trip = 0
    if trip is None:
        trip = ctx.fresh()
    scans = [_stack(f, trip) for f in outs[1 + n_carried :]]
    return [*carried, *scans]


_INT_DTYPES = frozenset((TensorProto.INT64, TensorProto.INT32, TensorProto.INT16, TensorProto.INT8))

#: Comparisons a loop condition may end on: (the left input is the smaller side, shift), so
#: that the loop goes on while ``bigger - smaller + shift >= 1``.
_CONDITIONS = {"Less": (True, 0), "Greater": (False, 0), "LessOrEqual": (True, 1), "GreaterOrEqual": (False, 1)}


def _scalar_value(f: Fact | None) -> D.Dim | None:
    if f is None or f.value is None or len(f.value) != 1 or (f.shape is not None and len(f.shape) > 1):
        return None
    v = f.value[0]
    return v if type(v) is int or isinstance(v, D.Expr) else None


def _condition_trip(ctx, body, initial: list[Fact | None], carried: list[Fact | None]) -> D.Dim | None:
    """How many iterations a Loop runs when its body ends it by a comparison of a counter with a
    loop-invariant bound (tf2onnx's while loops: ``cond = Less(i + 1, n)`` with ``i`` carried from
    0 or the iteration number), else None.

    Symbolic induction, in a sandbox that leaves no trace: ``j`` (a fresh symbol) stands for the
    iterations run so far; a carried int scalar with a known initial value ``v0`` is a counter
    when one body run adds a constant ``step`` to it, so after ``j`` runs it is
    ``v0 + step*(j - 1)`` on entry. The body then runs once more at that point and the
    condition's comparison becomes ``g(j) >= 1`` with ``g`` affine in ``j``, decreasing by ``s``
    per run: the loop stops after ``max(1, (g(0) - 1 + s) // s)`` runs (the first always runs:
    the condition holds on entry)."""
    cond_out = body.output[0].name if body.output else ""
    producer = {o: n for n in body.node for o in n.output if o}

    def comparisons(name: str, depth: int = 0) -> list | None:
        """The comparisons whose conjunction ``name`` is (through Identity, Cast and And)."""
        node = producer.get(name)
        while node is not None and node.op_type in ("Identity", "Cast") and node.domain in ("", "ai.onnx"):
            node = producer.get(node.input[0]) if node.input else None
        if node is None or node.domain not in ("", "ai.onnx") or depth > 4:
            return None
        if node.op_type == "And" and len(node.input) == 2:
            parts = [comparisons(x, depth + 1) for x in node.input]
            return None if any(p is None for p in parts) else [c for p in parts for c in p]
        return [node] if node.op_type in _CONDITIONS and len(node.input) == 2 else None

    conds = comparisons(cond_out)
    if not conds:
        return None
    eng = ctx.engine
    path = graph_path(ctx.graph, ctx.index, "body")
    saved = eng.graph_facts.get(path)
    iteration = lambda j: tensor(TensorProto.INT64, (), (D.sub(j, 1),))  # noqa: E731
    try:
        with sandbox(ctx, keep_diagnostics=False):
            j = ctx.fresh()
            # which carried values are counters: their step over one run
            probe = list(carried)
            starts: dict[int, tuple[D.Dim, D.Expr]] = {}
            for i, (f0, f) in enumerate(zip(initial, carried)):
                v0 = _scalar_value(f0)
                if v0 is not None and f is not None and f.kind == "tensor" and f.dtype in _INT_DTYPES:
                    c = ctx.fresh()
                    starts[i] = (v0, c)
                    probe[i] = Fact(f.dtype, f.shape if f.shape is not None else (), (c,), "tensor")
            steps: dict[int, D.Dim] = {}
            if starts:
                outs = run_body(ctx, body, "body", [iteration(j), tensor(TensorProto.BOOL, (), (1,)), *probe])
                for i, (v0, c) in starts.items():
                    after = _scalar_value(outs[1 + i] if 1 + i < len(outs) else None)
                    step = None if after is None else D.sub(after, c)
                    if type(step) is int:
                        steps[i] = D.add(v0, D.mul(step, D.sub(j, 1)))
            at_j = list(carried)
            for i, v in steps.items():
                f = carried[i]
                at_j[i] = Fact(f.dtype, f.shape if f.shape is not None else (), (v,), "tensor")
            run_body(ctx, body, "body", [iteration(j), tensor(TensorProto.BOOL, (), (1,)), *at_j])
            facts = eng.graph_facts.get(path, {})
            name = j.terms[0][0][0].name
            made_up = set(ctx.symbols.fresh_symbols[ctx.symbols.fresh_symbols.index(name) :])
            trips = []
            for node in conds:  # the loop ends at the first comparison that fails
                got = [facts[x] if x in facts else ctx.scope.get(x) for x in node.input]  # the body's, else outer
                lhs, rhs = (None if f is None else _scalar_value(eng.resolve_fact(f)) for f in got)
                if lhs is None or rhs is None:
                    return None
                left_smaller, shift = _CONDITIONS[node.op_type]
                a, b = (lhs, rhs) if left_smaller else (rhs, lhs)
                g = D.add(D.sub(b, a), shift)  # continue while g(j) >= 1
                g0, g1, g2 = (D.substitute(g, {name: x}) for x in (0, 1, 2))
                slope = D.sub(g1, g0)
                if type(slope) is not int or slope >= 0 or D.sub(g2, g1) != slope:
                    return None
                if D.symbols(g0) & made_up:
                    return None  # the bound depends on something this trial made up
                s = -slope
                trips.append(D.dmax(1, D.floordiv(D.add(g0, s - 1), s)))
            return ctx.symbols.simplify(D.dmin(*trips) if len(trips) > 1 else trips[0])
    finally:
        if saved is not None:
            eng.graph_facts[path] = saved


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
